import 'server-only';
// Reads AKS through @azure/arm-containerservice, as the plain REST-shaped objects lib/ reads (never an SDK model), with
// the rate-limit headers of the answer: a managed cluster's pools with one list (the collector's reads, one call for
// all of a cluster's pools), one pool with a GET (a resync's fresh look), or the managed cluster itself (its control
// plane's version, its node resource group). Never a write: poolscope only looks at AKS (docs/security.md).

import { ContainerServiceClient } from '@azure/arm-containerservice';
import type { TokenCredential } from '@azure/core-auth';
import { classifyArmError, httpDate, parseRateLimitHeaders, retryGetOnReset } from './arm-answers';

export interface AgentPoolRef {
  subscriptionId: string;
  resourceGroup: string;
  cluster: string;
  name: string;
}

/** A managed cluster, by the parts of its ARM id. */
export interface ManagedClusterRef {
  subscriptionId: string;
  resourceGroup: string;
  cluster: string;
}

/**
 * What one AKS request answered: `T` with Azure's answer time and the rate-limit headers, or why not; and the calls it
 * took (a call a page).
 */
type AksAnswer<T> = (
  | (T & { state: 'ok'; readAt: string; remaining: Record<string, number> })
  | { state: 'not-found'; error: string }
  | { state: 'throttled'; error: string; retryAfterSeconds: number | null; remaining: Record<string, number> }
  | { state: 'unreachable'; error: string }
) & { calls: number };

/** A managed cluster's agent pools by name (lower-case), as one list answered them. */
export type AgentPoolsRead = AksAnswer<{ agentPools: Map<string, Record<string, unknown>> }>;

/** A managed cluster as one GET answered it (REST-shaped: `properties.nodeResourceGroup`, the versions, the states). */
export type ManagedClusterRead = AksAnswer<{ managedCluster: Record<string, unknown> }>;

/** One agent pool as a GET answered it. */
export type AgentPoolRead = AksAnswer<{ agentPool: Record<string, unknown> }>;

/** An agent pool's machines as one list answered them (REST-shaped: `name`, `properties.resourceId`). */
export type MachinesRead = AksAnswer<{ machines: Record<string, unknown>[] }>;

/** AKS allows 100 agent pools a cluster: a list that goes on past this is not read further. */
const MAX_LISTED = 1000;
/** AKS allows 1000 nodes an agent pool: a machines list that goes on past this many is not read further. */
const MAX_MACHINES = 5000;

/**
 * An agent pool's ARM id, as ASO records it, split into its parts; null for anything else. The parts are what ARM
 * allows in names (a cluster object may say anything): no slashes, dots-only or query characters reach a request.
 */
const NAME = '([A-Za-z0-9_.()-]{1,90})';
const AGENT_POOL_ID = new RegExp(
  `^/subscriptions/([0-9a-fA-F-]{36})/resourceGroups/${NAME}/providers/Microsoft\\.ContainerService/managedClusters/${NAME}/agentPools/([A-Za-z0-9]{1,12})$`,
  'i',
);

export function agentPoolRefOf(id: string | null | undefined): AgentPoolRef | null {
  const m = typeof id === 'string' ? AGENT_POOL_ID.exec(id) : null;
  if (!m || /^\.+$/.test(m[2] as string) || /^\.+$/.test(m[3] as string)) return null;
  return {
    subscriptionId: m[1] as string,
    resourceGroup: m[2] as string,
    cluster: m[3] as string,
    name: m[4] as string,
  };
}

const CLUSTER_ID = new RegExp(
  `^/subscriptions/([0-9a-fA-F-]{36})/resourceGroups/${NAME}/providers/Microsoft\\.ContainerService/managedClusters/${NAME}$`,
  'i',
);

/**
 * The id the collector schedules an agent pool's reads by: its managed cluster's ARM id, lower-case (ARM ids are
 * case-insensitive), so that the pools of one cluster share one list.
 */
export function managedClusterIdOf(ref: AgentPoolRef): string {
  return `/subscriptions/${ref.subscriptionId}/resourceGroups/${ref.resourceGroup}/providers/Microsoft.ContainerService/managedClusters/${ref.cluster}`.toLowerCase();
}

/** A managed cluster's ARM id split into its parts; null for anything else (as agentPoolRefOf). */
export function managedClusterRefOf(id: string | null | undefined): ManagedClusterRef | null {
  const m = typeof id === 'string' ? CLUSTER_ID.exec(id) : null;
  if (!m || /^\.+$/.test(m[2] as string) || /^\.+$/.test(m[3] as string)) return null;
  return { subscriptionId: m[1] as string, resourceGroup: m[2] as string, cluster: m[3] as string };
}

type Sdk = Record<string, unknown>;

/**
 * What the answers of one request (a call a page) said: the rate-limit headers, and Azure's time of the first answer
 * (else the second the request was asked in).
 */
function tracker() {
  let remaining: Record<string, number> = {};
  let answeredAt: string | null = null;
  let calls = 0;
  const asked = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString();
  return {
    onResponse(r: { headers: { get(name: string): string | undefined } }) {
      calls++;
      remaining = { ...remaining, ...parseRateLimitHeaders((n) => r.headers.get(n)) };
      answeredAt ??= httpDate(r.headers.get('date'));
    },
    /** `pages`: the pages a list took (the SDK tells only a list's first answer to onResponse). */
    answer: (pages = 1) => ({ readAt: answeredAt ?? asked, remaining, calls: Math.max(1, calls, pages) }),
  };
}

/** The REST shape of a managed cluster, with only the fields lib/ uses (the SDK flattens `properties`). */
function restManagedCluster(m: Sdk): Record<string, unknown> {
  const power = m.powerState as { code?: string } | undefined;
  return {
    id: m.id,
    name: m.name,
    location: m.location,
    properties: {
      provisioningState: m.provisioningState,
      powerState: power ? { code: power.code } : undefined,
      kubernetesVersion: m.kubernetesVersion,
      currentKubernetesVersion: m.currentKubernetesVersion,
      nodeResourceGroup: m.nodeResourceGroup,
    },
  };
}

/** The SDK flattens `properties` (and renames `type`); lib/ reads the REST shape. Only the fields lib/ uses. */
function restAgentPool(p: Sdk): Record<string, unknown> {
  const power = p.powerState as { code?: string } | undefined;
  const error = (p.status as { provisioningError?: { code?: string; message?: string } } | undefined)
    ?.provisioningError;
  return {
    id: p.id,
    name: p.name,
    type: p.type,
    properties: {
      provisioningState: p.provisioningState,
      count: p.count,
      enableAutoScaling: p.enableAutoScaling,
      minCount: p.minCount,
      maxCount: p.maxCount,
      powerState: power ? { code: power.code } : undefined,
      orchestratorVersion: p.orchestratorVersion,
      currentOrchestratorVersion: p.currentOrchestratorVersion,
      nodeImageVersion: p.nodeImageVersion,
      type: p.typePropertiesType,
      mode: p.mode,
      ...(error ? { status: { provisioningError: { code: error.code, message: error.message } } } : {}),
    },
  };
}

/** The REST shape of a machine, with only the fields lib/ uses. */
function restMachine(m: Sdk): Record<string, unknown> {
  const props = m.properties as { resourceId?: unknown } | undefined;
  return { id: m.id, name: m.name, properties: { resourceId: props?.resourceId } };
}

export class AksReader {
  private readonly clients = new Map<string, ContainerServiceClient>();

  constructor(
    private readonly credential: TokenCredential,
    private readonly endpoint: string,
  ) {}

  private client(sub: string): ContainerServiceClient {
    let c = this.clients.get(sub);
    if (!c) {
      // No SDK retries: the lane's scheduler decides when to call again, so a 429's Retry-After is honoured. A GET
      // whose idle connection was reset under it is sent once more.
      c = new ContainerServiceClient(this.credential, sub, {
        endpoint: this.endpoint,
        retryOptions: { maxRetries: 0 },
        additionalPolicies: [{ policy: retryGetOnReset, position: 'perRetry' }],
      });
      this.clients.set(sub, c);
    }
    return c;
  }

  /** A managed cluster's agent pools, with one list (a call a page). */
  async list(ref: ManagedClusterRef): Promise<AgentPoolsRead> {
    const t = tracker();
    const agentPools = new Map<string, Record<string, unknown>>();
    let pages = 0;
    try {
      const { onResponse } = t;
      const list = this.client(ref.subscriptionId).agentPools.list(ref.resourceGroup, ref.cluster, { onResponse });
      for await (const page of list.byPage()) {
        pages++;
        for (const p of page) {
          const pool = restAgentPool(p as unknown as Sdk);
          if (typeof pool.name === 'string' && agentPools.size < MAX_LISTED)
            agentPools.set(pool.name.toLowerCase(), pool);
        }
        if (agentPools.size >= MAX_LISTED) break;
      }
      return { state: 'ok', agentPools, ...t.answer(pages) };
    } catch (e) {
      return { ...classifyArmError(e), calls: t.answer(pages + 1).calls };
    }
  }

  async read(ref: AgentPoolRef): Promise<AgentPoolRead> {
    const t = tracker();
    try {
      const pool = await this.client(ref.subscriptionId).agentPools.get(ref.resourceGroup, ref.cluster, ref.name, {
        onResponse: t.onResponse,
      });
      return { state: 'ok', agentPool: restAgentPool(pool as unknown as Sdk), ...t.answer() };
    } catch (e) {
      return { ...classifyArmError(e), calls: 1 };
    }
  }

  /**
   * An agent pool's machines, with one list (a call a page): each names the VM behind it. The only Azure read of the
   * VMs of a pool without a scale set (type VirtualMachines).
   */
  async machines(ref: AgentPoolRef): Promise<MachinesRead> {
    const t = tracker();
    const machines: Record<string, unknown>[] = [];
    let pages = 0;
    try {
      const { onResponse } = t;
      const list = this.client(ref.subscriptionId).machines.list(ref.resourceGroup, ref.cluster, ref.name, {
        onResponse,
      });
      for await (const page of list.byPage()) {
        pages++;
        for (const m of page) machines.push(restMachine(m as unknown as Sdk));
        if (machines.length >= MAX_MACHINES) break;
      }
      return { state: 'ok', machines: machines.slice(0, MAX_MACHINES), ...t.answer(pages) };
    } catch (e) {
      return { ...classifyArmError(e), calls: t.answer(pages + 1).calls };
    }
  }

  /** A managed cluster: its control plane's versions and state, and its node resource group. */
  async managedCluster(ref: ManagedClusterRef): Promise<ManagedClusterRead> {
    const t = tracker();
    try {
      const mc = await this.client(ref.subscriptionId).managedClusters.get(ref.resourceGroup, ref.cluster, {
        onResponse: t.onResponse,
      });
      return { state: 'ok', managedCluster: restManagedCluster(mc as unknown as Sdk), ...t.answer() };
    } catch (e) {
      return { ...classifyArmError(e), calls: 1 };
    }
  }
}
