import 'server-only';
// Reads one scale set and its VMs through @azure/arm-compute, as plain REST-shaped objects for lib/
// (never SDK models), with the rate-limit headers of each response. One VMSS GET and one VM list per read;
// instance views only for failed VMs, to explain the failure.

import { ComputeManagementClient } from '@azure/arm-compute';
import type { TokenCredential } from '@azure/core-auth';
import { DefaultAzureCredential } from '@azure/identity';
import type { PoolInput } from '@/lib/pool-model';
import { parseProviderId } from '@/lib/provider-id';
import {
  AksReader,
  type AgentPoolRead,
  type AgentPoolRef,
  type AgentPoolsRead,
  type MachinesRead,
  type ManagedClusterRead,
  type ManagedClusterRef,
} from './aks-reader';
import { classifyArmError, httpDate, parseRateLimitHeaders, retryGetOnReset } from './arm-answers';

export interface ScaleSetRef {
  subscriptionId: string;
  resourceGroup: string;
  name: string;
}

/** ARM calls one read made, by operation. */
interface AzureOps {
  vmssGet: number;
  vmList: number;
  instanceView: number;
}

export type AzureRead = (
  | {
      state: 'ok';
      vmss: Record<string, unknown>;
      vms: Record<string, unknown>[];
      /** When Azure listed the VMs (RFC 3339): the Date header of the list's first page, else the time it was asked. */
      readAt: string;
      remaining: Record<string, number>;
    }
  | { state: 'not-found'; error: string }
  | { state: 'throttled'; error: string; retryAfterSeconds: number | null; remaining: Record<string, number> }
  | { state: 'unreachable'; error: string }
) & { calls: number; ops: AzureOps };

/** A scale set as a resource group's list names it. */
export interface ListedScaleSet {
  id: string;
  location: string;
  tags: Record<string, unknown>;
}

export type ScaleSetsRead = (
  | { state: 'ok'; scaleSets: ListedScaleSet[]; remaining: Record<string, number> }
  | { state: 'not-found'; error: string }
  | { state: 'throttled'; error: string; retryAfterSeconds: number | null; remaining: Record<string, number> }
  | { state: 'unreachable'; error: string }
) & { calls: number };

/** A node resource group holds a scale set per agent pool (at most 100): a list longer than this is not read on. */
const MAX_SCALE_SETS = 1000;

export function scaleSetRefOf(providerID: string | null | undefined): ScaleSetRef | null {
  const p = parseProviderId(providerID);
  if (!p.ok || p.kind !== 'vmss' || !p.scaleSet) return null;
  return { subscriptionId: p.subscriptionId, resourceGroup: p.resourceGroup, name: p.scaleSet };
}

/** A read as the pool model takes it (`PoolInput.azure`). */
export function azureInput(r: AzureRead): NonNullable<PoolInput['azure']> {
  if (r.state === 'ok') return { state: 'ok', vmss: r.vmss, vms: r.vms, readAt: r.readAt };
  if (r.state === 'not-found') return { state: 'not-found', error: r.error };
  if (r.state === 'throttled') return { state: 'throttled', error: r.error, retryAfterSeconds: r.retryAfterSeconds };
  return { state: 'unreachable', error: r.error };
}

const iso = (d: unknown) => (d instanceof Date ? d.toISOString() : d);

type Sdk = Record<string, unknown>;

/** The SDK flattens `properties`; lib/ reads the REST shape. Only the fields lib/ uses are carried over. */
function restVmss(v: Sdk): Record<string, unknown> {
  return {
    id: v.id,
    name: v.name,
    location: v.location,
    type: v.type,
    sku: v.sku,
    zones: v.zones,
    properties: {
      provisioningState: v.provisioningState,
      orchestrationMode: v.orchestrationMode,
      timeCreated: iso(v.timeCreated),
    },
  };
}

function restVm(v: Sdk): Record<string, unknown> {
  const iv = v.instanceView as
    { statuses?: { code?: string; level?: string; message?: string; time?: unknown }[] } | undefined;
  return {
    id: v.id,
    name: v.name,
    instanceId: v.instanceId,
    location: v.location,
    zones: v.zones,
    ...(v.virtualMachineResourceId ? { virtualMachineResourceId: v.virtualMachineResourceId } : {}),
    properties: {
      provisioningState: v.provisioningState,
      latestModelApplied: v.latestModelApplied,
      timeCreated: iso(v.timeCreated),
      osProfile: (v.osProfile as { computerName?: string } | undefined)?.computerName
        ? { computerName: (v.osProfile as { computerName?: string }).computerName }
        : undefined,
      ...(iv
        ? {
            instanceView: {
              statuses: (iv.statuses ?? []).map((s) => ({
                code: s.code,
                level: s.level,
                message: s.message,
                time: iso(s.time),
              })),
            },
          }
        : {}),
    },
  };
}

export interface AzureReaderOptions {
  endpoint: string;
  disableInstanceDiscovery: boolean;
  credential?: TokenCredential;
  /** How many failed VMs get their instance view read per cycle. */
  maxInstanceViews?: number;
}

export class AzureReader {
  private readonly credential: TokenCredential;
  private readonly clients = new Map<string, ComputeManagementClient>();
  private readonly aks: AksReader;

  constructor(private readonly opts: AzureReaderOptions) {
    this.credential =
      opts.credential ??
      new DefaultAzureCredential({ disableInstanceDiscovery: opts.disableInstanceDiscovery } as never);
    this.aks = new AksReader(this.credential, opts.endpoint);
  }

  /** One AKS agent pool, with the same credential and endpoint (./aks-reader). */
  readAgentPool(ref: AgentPoolRef): Promise<AgentPoolRead> {
    return this.aks.read(ref);
  }

  /** A managed cluster's agent pools, with one list (./aks-reader). */
  readAgentPools(ref: ManagedClusterRef): Promise<AgentPoolsRead> {
    return this.aks.list(ref);
  }

  /** An agent pool's machines, with one list (./aks-reader). */
  readMachines(ref: AgentPoolRef): Promise<MachinesRead> {
    return this.aks.machines(ref);
  }

  /** A managed cluster itself (./aks-reader). */
  readManagedCluster(ref: ManagedClusterRef): Promise<ManagedClusterRead> {
    return this.aks.managedCluster(ref);
  }

  private client(sub: string): ComputeManagementClient {
    let c = this.clients.get(sub);
    if (!c) {
      // No SDK retries: the scheduler decides when to call again, so 429s are honoured for the whole budget. A GET
      // whose idle connection was reset under it is sent once more.
      c = new ComputeManagementClient(this.credential, sub, {
        endpoint: this.opts.endpoint,
        retryOptions: { maxRetries: 0 },
        additionalPolicies: [{ policy: retryGetOnReset, position: 'perRetry' }],
      });
      this.clients.set(sub, c);
    }
    return c;
  }

  async read(ref: ScaleSetRef): Promise<AzureRead> {
    const c = this.client(ref.subscriptionId);
    let remaining: Record<string, number> = {};
    const ops: AzureOps = { vmssGet: 0, vmList: 0, instanceView: 0 };
    const calls = () => ops.vmssGet + ops.vmList + ops.instanceView;
    // The list's first page: Azure's own clock, as the API servers' creationTimestamps are (both NTP-synced), and
    // not the time it took to read the rest.
    let listing = false;
    let listedAt: string | null = null;
    const onResponse = (r: { headers: { get(name: string): string | undefined } }) => {
      remaining = { ...remaining, ...parseRateLimitHeaders((n) => r.headers.get(n)) };
      if (listing && listedAt === null) listedAt = httpDate(r.headers.get('date'));
    };
    try {
      ops.vmssGet++;
      const vmss = (await c.virtualMachineScaleSets.get(ref.resourceGroup, ref.name, { onResponse })) as unknown as Sdk;
      const vms: Sdk[] = [];
      ops.vmList++;
      listing = true;
      const asked = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString();
      for await (const vm of c.virtualMachineScaleSetVMs.list(ref.resourceGroup, ref.name, { onResponse }))
        vms.push(vm as unknown as Sdk);
      const failed = vms.filter((v) => v.provisioningState === 'Failed').slice(0, this.opts.maxInstanceViews ?? 10);
      for (const v of failed) {
        ops.instanceView++;
        v.instanceView = await c.virtualMachineScaleSetVMs.getInstanceView(
          ref.resourceGroup,
          ref.name,
          String(v.instanceId),
          { onResponse },
        );
      }
      return {
        state: 'ok',
        vmss: restVmss(vmss),
        vms: vms.map(restVm),
        readAt: listedAt ?? asked,
        remaining,
        calls: calls(),
        ops,
      };
    } catch (e) {
      const failed = classifyArmError(e);
      if (failed.state === 'throttled') remaining = { ...remaining, ...failed.remaining };
      return { ...failed, ...(failed.state === 'throttled' ? { remaining } : {}), calls: calls(), ops };
    }
  }

  /**
   * The scale sets of a resource group (an AKS cluster's node resource group): each one's id, region and tags, which
   * say the agent pool AKS made it for. One call a page; at most MAX_SCALE_SETS.
   */
  async listScaleSets(sub: string, resourceGroup: string): Promise<ScaleSetsRead> {
    let remaining: Record<string, number> = {};
    let calls = 0;
    const onResponse = (r: { headers: { get(name: string): string | undefined } }) => {
      calls++;
      remaining = { ...remaining, ...parseRateLimitHeaders((n) => r.headers.get(n)) };
    };
    const scaleSets: ListedScaleSet[] = [];
    try {
      for await (const v of this.client(sub).virtualMachineScaleSets.list(resourceGroup, { onResponse })) {
        const tags = (v.tags ?? {}) as Record<string, unknown>;
        scaleSets.push({ id: String(v.id ?? ''), location: String(v.location ?? ''), tags });
        if (scaleSets.length >= MAX_SCALE_SETS) break;
      }
      return { state: 'ok', scaleSets, remaining, calls: Math.max(1, calls) };
    } catch (e) {
      return { ...classifyArmError(e), calls: Math.max(1, calls) };
    }
  }
}
