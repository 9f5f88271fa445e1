// The simulated Azure Compute state: scale sets and their VMs, kept exactly as the ARM REST API returns
// them (REST shapes from lib/fixtures/objects.ts). Lookups are case-insensitive, as ARM's are.

import { randomUUID } from 'node:crypto';
import { makeVm, makeVmss, type AzureLocation } from '../../lib/fixtures/objects';

export type Rest = Record<string, unknown> & { id: string; name: string };

export interface ScaleSetRecord {
  subscriptionId: string;
  resourceGroup: string;
  name: string;
  location: string;
  /** The VMSS as GET returns it. */
  body: Rest;
  /** VMs by instanceId (Uniform) or VM name (Flexible), as the VMSS-VMs list returns them with `$expand=instanceView`. */
  vms: Map<string, Rest>;
  nextInstanceId: number;
  /**
   * The VMs of an AKS agent pool of type VirtualMachines, kept as a scale set here: Compute shows no scale set for
   * them (its reads answer as if there were none), AKS's machines list names them.
   */
  standalone?: boolean;
}

export interface Operation {
  id: string;
  name: string;
  status: 'InProgress' | 'Succeeded' | 'Failed';
  startTime: string;
  endTime?: string;
  scaleSetKey: string;
}

const key = (sub: string, rg: string, name: string) => `${sub}/${rg}/${name}`.toLowerCase();

function props(o: Rest): Record<string, unknown> {
  if (typeof o.properties !== 'object' || o.properties === null) o.properties = {};
  return o.properties as Record<string, unknown>;
}

/** An AKS agent pool as `GET …/managedClusters/{mc}/agentPools/{pool}` returns it, with where it lives. */
export interface AgentPoolRecord {
  subscriptionId: string;
  resourceGroup: string;
  cluster: string;
  name: string;
  body: Rest;
}

/**
 * An AKS managed cluster as `GET …/managedClusters/{mc}` returns it (its agent pool profiles are filled in from the
 * agent pools when it is read), with where it lives.
 */
export interface ManagedClusterRecord {
  subscriptionId: string;
  resourceGroup: string;
  name: string;
  body: Rest;
}

/** The region a managed cluster made for an agent pool is in: the fixtures' (AKS pools carry no location). */
const AKS_LOCATION = 'westeurope';

const AGENT_POOL_ID =
  /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.ContainerService\/managedClusters\/([^/]+)\/agentPools\/([^/]+)$/i;

export class AzureState {
  readonly scaleSets = new Map<string, ScaleSetRecord>();
  /** AKS agent pools by `sub/rg/cluster/pool` (lower-case). */
  readonly agentPools = new Map<string, AgentPoolRecord>();
  /** AKS managed clusters by `sub/rg/cluster` (lower-case). */
  readonly managedClusters = new Map<string, ManagedClusterRecord>();
  readonly operations = new Map<string, Operation>();
  private readonly listeners = new Set<() => void>();

  /** Called after every change (the world controllers watch Azure this way). */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  changed(): void {
    for (const fn of this.listeners) fn();
  }

  /** Adds or replaces a scale set given in REST form; its VMs may follow in REST form too. */
  putScaleSet(vmss: Record<string, unknown>, vms: Record<string, unknown>[] = []): ScaleSetRecord {
    const body = structuredClone(vmss) as Rest;
    const m =
      /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Compute\/virtualMachineScaleSets\/([^/]+)$/i.exec(
        body.id ?? '',
      );
    if (!m) throw new Error(`scale set id is not a VMSS ARM id: ${String(body.id)}`);
    const rec: ScaleSetRecord = {
      subscriptionId: m[1] as string,
      resourceGroup: m[2] as string,
      name: m[3] as string,
      location: String(body.location ?? 'westeurope'),
      body,
      vms: new Map(),
      nextInstanceId: 0,
    };
    for (const vm of vms) this.putVmInto(rec, vm);
    this.scaleSets.set(key(rec.subscriptionId, rec.resourceGroup, rec.name), rec);
    this.changed();
    return rec;
  }

  /** Adds or replaces an AKS agent pool given in REST form. */
  putAgentPool(pool: Record<string, unknown>): AgentPoolRecord {
    const body = structuredClone(pool) as Rest;
    const m = AGENT_POOL_ID.exec(body.id ?? '');
    if (!m) throw new Error(`agent pool id is not an AKS agent pool ARM id: ${String(body.id)}`);
    const [, subscriptionId, resourceGroup, cluster, name] = m as unknown as [string, string, string, string, string];
    const rec = { subscriptionId, resourceGroup, cluster, name, body };
    this.agentPools.set(`${subscriptionId}/${resourceGroup}/${cluster}/${name}`.toLowerCase(), rec);
    this.ensureManagedCluster(subscriptionId, resourceGroup, cluster, props(body));
    this.changed();
    return rec;
  }

  /**
   * The managed cluster of an agent pool, made as AKS makes one when it is not there yet: Succeeded and Running, its
   * control plane at the pool's version, its node resource group AKS's default `MC_<rg>_<cluster>_<location>`.
   */
  private ensureManagedCluster(sub: string, rg: string, cluster: string, pool: Record<string, unknown>): void {
    const k = key(sub, rg, cluster);
    if (this.managedClusters.has(k)) return;
    const version = String(pool.currentOrchestratorVersion ?? pool.orchestratorVersion ?? '1.33.2');
    const body: Rest = {
      id: `/subscriptions/${sub}/resourcegroups/${rg}/providers/Microsoft.ContainerService/managedClusters/${cluster}`,
      name: cluster,
      type: 'Microsoft.ContainerService/ManagedClusters',
      location: AKS_LOCATION,
      properties: {
        provisioningState: 'Succeeded',
        powerState: { code: 'Running' },
        kubernetesVersion: version,
        currentKubernetesVersion: version,
        dnsPrefix: cluster,
        nodeResourceGroup: `MC_${rg}_${cluster}_${AKS_LOCATION}`,
      },
    };
    this.managedClusters.set(k, { subscriptionId: sub, resourceGroup: rg, name: cluster, body });
  }

  getManagedCluster(sub: string, rg: string, cluster: string): ManagedClusterRecord | undefined {
    return this.managedClusters.get(key(sub, rg, cluster));
  }

  getAgentPool(sub: string, rg: string, cluster: string, name: string): AgentPoolRecord | undefined {
    return this.agentPools.get(`${sub}/${rg}/${cluster}/${name}`.toLowerCase());
  }

  /** The agent pools of one managed cluster, by name. */
  listAgentPools(sub: string, rg: string, cluster: string): AgentPoolRecord[] {
    const prefix = `${sub}/${rg}/${cluster}/`.toLowerCase();
    return [...this.agentPools.entries()]
      .filter(([k]) => k.startsWith(prefix))
      .map(([, r]) => r)
      .sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  private putVmInto(rec: ScaleSetRecord, vm: Record<string, unknown>): void {
    const v = structuredClone(vm) as Rest;
    const member = String(v.instanceId ?? v.name);
    rec.vms.set(member.toLowerCase(), v);
    if (/^\d+$/.test(member)) rec.nextInstanceId = Math.max(rec.nextInstanceId, Number(member) + 1);
  }

  putVm(rec: ScaleSetRecord, vm: Record<string, unknown>): void {
    this.putVmInto(rec, vm);
    this.changed();
  }

  get(sub: string, rg: string, name: string): ScaleSetRecord | undefined {
    return this.scaleSets.get(key(sub, rg, name));
  }

  deleteScaleSet(sub: string, rg: string, name: string): boolean {
    const ok = this.scaleSets.delete(key(sub, rg, name));
    if (ok) this.changed();
    return ok;
  }

  listByResourceGroup(sub: string, rg: string): ScaleSetRecord[] {
    return [...this.scaleSets.values()].filter(
      (r) => r.subscriptionId.toLowerCase() === sub.toLowerCase() && r.resourceGroup.toLowerCase() === rg.toLowerCase(),
    );
  }

  /**
   * An agent pool's machines as `GET …/agentPools/{pool}/machines` lists them: the VMs of the scale sets AKS tagged
   * with the pool's name in its cluster's node resource group, each naming its VM.
   */
  machinesOf(pool: AgentPoolRecord): Rest[] {
    const mc = this.getManagedCluster(pool.subscriptionId, pool.resourceGroup, pool.cluster);
    const nodeRg = String((mc?.body.properties as { nodeResourceGroup?: unknown } | undefined)?.nodeResourceGroup);
    return this.listByResourceGroup(pool.subscriptionId, nodeRg)
      .filter((r) => (r.body.tags as Record<string, unknown> | undefined)?.['aks-managed-poolName'] === pool.name)
      .flatMap((r) =>
        [...r.vms.values()].map((vm) => {
          const name = String((props(vm).osProfile as { computerName?: unknown } | undefined)?.computerName ?? vm.name);
          return {
            id: `${pool.body.id}/machines/${name}`,
            name,
            type: 'Microsoft.ContainerService/managedClusters/agentPools/machines',
            properties: { network: { ipAddresses: [] }, resourceId: vm.id },
          } as Rest;
        }),
      );
  }

  listBySubscription(sub: string): ScaleSetRecord[] {
    return [...this.scaleSets.values()].filter((r) => r.subscriptionId.toLowerCase() === sub.toLowerCase());
  }

  capacity(rec: ScaleSetRecord): number {
    return Number((rec.body.sku as { capacity?: number } | undefined)?.capacity ?? 0);
  }

  orchestrationMode(rec: ScaleSetRecord): 'Uniform' | 'Flexible' {
    return props(rec.body).orchestrationMode === 'Flexible' ? 'Flexible' : 'Uniform';
  }

  setProvisioningState(rec: ScaleSetRecord, state: string): void {
    props(rec.body).provisioningState = state;
    this.changed();
  }

  /** A capacity update as the PATCH does it: the scale set goes Updating until the world converges. */
  setCapacity(rec: ScaleSetRecord, capacity: number): Operation {
    (rec.body.sku as Record<string, unknown>).capacity = capacity;
    props(rec.body).provisioningState = 'Updating';
    const op: Operation = {
      id: randomUUID(),
      name: '',
      status: 'InProgress',
      startTime: new Date().toISOString(),
      scaleSetKey: key(rec.subscriptionId, rec.resourceGroup, rec.name),
    };
    op.name = op.id;
    this.operations.set(op.id, op);
    this.changed();
    return op;
  }

  /** Adds a new VM in the given state; returns its member key. */
  addVm(
    rec: ScaleSetRecord,
    opts: { provisioningState?: string; powerState?: string | null; errorCode?: string; createdAt?: string } = {},
  ): Rest {
    const flexible = this.orchestrationMode(rec) === 'Flexible';
    const member = flexible ? `${rec.name}_${randomUUID().replace(/-/g, '').slice(0, 8)}` : String(rec.nextInstanceId);
    const az: AzureLocation = {
      subscriptionId: rec.subscriptionId,
      resourceGroup: rec.resourceGroup,
      location: rec.location,
    };
    const vm = makeVm({
      az,
      vmss: rec.name,
      member,
      mode: flexible ? 'Flexible' : 'Uniform',
      provisioningState: opts.provisioningState ?? 'Creating',
      powerState: opts.powerState === undefined ? 'starting' : opts.powerState,
      errorCode: opts.errorCode,
      createdAt: opts.createdAt ?? new Date().toISOString(),
    }) as Rest;
    this.putVm(rec, vm);
    return vm;
  }

  /** Sets a VM's provisioning and power state, keeping its instance view consistent. */
  setVmState(vm: Rest, state: string, powerState: string | null, error?: { code: string; message: string }): void {
    const p = props(vm);
    p.provisioningState = state;
    const iv = (p.instanceView ?? {}) as { statuses?: Record<string, unknown>[] };
    const now = new Date().toISOString();
    iv.statuses = [
      error
        ? {
            code: `ProvisioningState/failed/${error.code}`,
            level: 'Error',
            displayStatus: 'Provisioning failed',
            message: error.message,
            time: now,
          }
        : {
            code: `ProvisioningState/${state.toLowerCase()}`,
            level: 'Info',
            displayStatus: `Provisioning ${state.toLowerCase()}`,
            time: now,
          },
      ...(powerState ? [{ code: `PowerState/${powerState}`, level: 'Info', displayStatus: `VM ${powerState}` }] : []),
    ];
    p.instanceView = iv;
    this.changed();
  }

  deleteVm(rec: ScaleSetRecord, member: string): boolean {
    const ok = rec.vms.delete(member.toLowerCase());
    if (ok) this.changed();
    return ok;
  }

  findVm(rec: ScaleSetRecord, member: string): Rest | undefined {
    return rec.vms.get(member.toLowerCase());
  }
}

/** A scale set in REST form, for tests and scenario builders. */
export function newScaleSet(
  az: AzureLocation,
  name: string,
  capacity: number,
  mode: 'Uniform' | 'Flexible' = 'Uniform',
): Record<string, unknown> {
  return makeVmss({ az, name, capacity, orchestrationMode: mode });
}
