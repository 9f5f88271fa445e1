import 'server-only';
// What the collector knows of each AKS managed cluster beside its agent pools: the cluster itself (its control plane's
// versions and state, its node resource group; one GET, on the AKS budget, made with the cluster's list) and, from a
// list of its node resource group's scale sets, each agent pool's scale set, by the `aks-managed-poolName` tag AKS
// puts on it (CAPZ finds an AzureManagedMachinePool's scale set the same way).
//
// The cluster is looked at when it is new, every BUSY_REFRESH_PERIODS fast lane periods while an AKS operation runs
// on one of its pools (so an upgrade's control plane version is current), and else every LOOK_REFRESH_MS. Its node
// resource group is a read of its own for the lane's scheduler, on the region's Compute budget beside the scale set
// reads: listed at once, again after RELIST_MS while one of its agent pools has no scale set found, and else every
// LOOK_REFRESH_MS.

import { agentPoolOfScaleSetTags } from '@/lib/aks-model';
import type { PoolInput } from '@/lib/pool-model';
import type { ManagedClusterRef } from '../azure/aks-reader';
import type { AzureReader, ListedScaleSet } from '../azure/reader';

type ManagedClusterInput = NonNullable<NonNullable<PoolInput['aks']>['managedCluster']>;

/** How often a settled cluster is looked at again, and its node resource group listed again (ms). */
const LOOK_REFRESH_MS = 15 * 60_000;
/**
 * How often a cluster is looked at while an AKS operation runs on one of its pools, in fast lane periods (2 minutes at
 * the default 15 s): its GET shares the AKS budget with the agent pool lists, which come every period at best then,
 * and a control plane upgrade takes many minutes.
 */
const BUSY_REFRESH_PERIODS = 8;
/** How soon a node resource group is listed again while a pool's scale set is not found in it (ms). */
const RELIST_MS = 60_000;

/** A node resource group as the lane's scheduler names its list: its ARM id, lower-case. */
const NODE_GROUP_ID = /^\/subscriptions\/([0-9a-f-]{36})\/resourcegroups\/([a-z0-9_.()-]{1,90})$/;

interface Look {
  managedCluster: ManagedClusterInput;
  lookedAt: number;
  /** The node resource group's id (see NODE_GROUP_ID), once a GET named it. */
  nodeGroup: string | null;
  /** The region of the cluster (its node resource group's scale sets are in it). */
  location: string | null;
  /** Agent pool name (lower-case) → its scale set, as the collector names scale sets (a providerID, lower-case). */
  scaleSets: Map<string, string>;
  /** Whether the node resource group has answered a list (an error is an answer; a 429 is not). */
  listed: boolean;
}

/** What looking at a cluster cost and brought. */
export interface LookResult {
  /** AKS calls made (the managed cluster GET). */
  aksCalls: number;
  /** The managed cluster GET was throttled: AKS's Retry-After (its budget is the agent pool list's). */
  throttled?: { retryAfterSeconds: number | null; remaining: Record<string, number> };
  /** The node resource group is newly known (or moved): the lane's index of reads must be rebuilt. */
  moved: boolean;
}

/** What listing a node resource group brought, and when to list it again. */
export type NodeGroupList = (
  | { state: 'ok' | 'not-found' | 'unreachable'; remaining: Record<string, number>; afterSeconds: number }
  | { state: 'throttled'; error: string; retryAfterSeconds: number | null; remaining: Record<string, number> }
) & { calls: number; error?: string; moved: boolean };

/** A scale set's ARM id as the collector names scale sets: a providerID, lower-case (lib/provider-id's form). */
function scaleSetKey(armId: string): string | null {
  return /^\/subscriptions\/[^/]+\/resourceGroups\/[^/]+\/providers\/Microsoft\.Compute\/virtualMachineScaleSets\/[^/]+$/i.test(
    armId,
  )
    ? `azure://${armId}`.toLowerCase()
    : null;
}

/**
 * Each agent pool's scale set in node resource group `group`'s list (its id), by AKS's tag. Only a scale set of that
 * group is taken: an answer naming another subscription or group does not steer a read there.
 */
function byPoolTag(group: string, scaleSets: ListedScaleSet[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of scaleSets) {
    const pool = agentPoolOfScaleSetTags(s.tags);
    const key = scaleSetKey(s.id);
    if (pool && key?.startsWith(`azure://${group}/providers/`)) out.set(pool, key);
  }
  return out;
}

/** A node resource group's subscription and name, from the id the scheduler reads it by; null for other ids. */
export function nodeGroupRefOf(id: string): { subscriptionId: string; resourceGroup: string } | null {
  const m = NODE_GROUP_ID.exec(id);
  return m ? { subscriptionId: m[1] as string, resourceGroup: m[2] as string } : null;
}

export class AksLooks {
  private readonly looks = new Map<string, Look>();
  /** Node resource group id → the managed cluster that named it. */
  private readonly clusterOfGroup = new Map<string, string>();

  private readonly busyRefreshMs: number;

  constructor(
    private readonly azure: AzureReader,
    private readonly now: () => number,
    /** The fast lane's period (s). */
    fastSeconds: number,
  ) {
    this.busyRefreshMs = BUSY_REFRESH_PERIODS * fastSeconds * 1000;
  }

  /** The managed cluster `id` (lower-case ARM id) as lib/ takes it: its last GET, or why there is none. */
  managedClusterInput(id: string): ManagedClusterInput {
    return this.looks.get(id)?.managedCluster ?? { state: 'unknown', reason: 'not read yet' };
  }

  /** The scale set AKS tagged for agent pool `name` of managed cluster `id`, once a list has found it. */
  scaleSetOf(id: string, name: string): string | null {
    return this.looks.get(id)?.scaleSets.get(name.toLowerCase()) ?? null;
  }

  /** The region of managed cluster `id`, once a GET has told it. */
  regionOf(id: string): string | null {
    return this.looks.get(id)?.location ?? null;
  }

  /** Managed cluster `id`'s node resource group (the id its list is scheduled by), once a GET has named it. */
  nodeGroupOf(id: string): string | null {
    return this.looks.get(id)?.nodeGroup ?? null;
  }

  /** The managed cluster whose node resource group `nodeGroup` is; undefined for any other id. */
  clusterOf(nodeGroup: string): string | undefined {
    return this.clusterOfGroup.get(nodeGroup);
  }

  /**
   * Whether managed cluster `id`'s pools may still have a scale set found: the cluster not answered yet (or only
   * throttled), or its node resource group named and not listed yet.
   */
  pending(id: string): boolean {
    const look = this.looks.get(id);
    if (!look) return true;
    if (look.nodeGroup) return !look.listed;
    return look.managedCluster.state === 'unknown' || look.managedCluster.state === 'throttled';
  }

  /** Forgets the clusters no pool names any more. */
  keepOnly(ids: ReadonlySet<string>): void {
    for (const [id, look] of this.looks)
      if (!ids.has(id)) {
        this.looks.delete(id);
        if (look.nodeGroup) this.clusterOfGroup.delete(look.nodeGroup);
      }
  }

  /**
   * GETs managed cluster `id` if it is due: new, or not looked at for 8 fast periods (while an AKS operation runs on
   * one of its pools: `busy`) or LOOK_REFRESH_MS.
   */
  async look(id: string, ref: ManagedClusterRef, busy: boolean): Promise<LookResult> {
    const t = this.now();
    const was = this.looks.get(id);
    if (was && t - was.lookedAt < (busy ? this.busyRefreshMs : LOOK_REFRESH_MS)) return { aksCalls: 0, moved: false };
    const look: Look = was ?? {
      managedCluster: { state: 'unknown', reason: 'not read yet' },
      lookedAt: t,
      nodeGroup: null,
      location: null,
      scaleSets: new Map(),
      listed: false,
    };
    this.looks.set(id, look);
    look.lookedAt = t;
    const read = await this.azure.readManagedCluster(ref);
    const out: LookResult = { aksCalls: read.calls, moved: false };
    if (read.state === 'throttled') {
      out.throttled = { retryAfterSeconds: read.retryAfterSeconds, remaining: read.remaining };
      // The last good answer stands, as a scale set's does: an upgrade's version is at most one read old.
      if (look.managedCluster.state !== 'ok')
        look.managedCluster = { state: 'throttled', error: read.error, retryAfterSeconds: read.retryAfterSeconds };
      return out;
    }
    if (read.state !== 'ok') {
      look.managedCluster = { state: read.state, error: read.error };
      return out;
    }
    look.managedCluster = { state: 'ok', managedCluster: read.managedCluster, readAt: Date.parse(read.readAt) };
    const props = (read.managedCluster.properties ?? {}) as Record<string, unknown>;
    const rg = typeof props.nodeResourceGroup === 'string' ? props.nodeResourceGroup : '';
    const group = `/subscriptions/${ref.subscriptionId}/resourcegroups/${rg}`.toLowerCase();
    const nodeGroup = NODE_GROUP_ID.test(group) ? group : null;
    const loc = read.managedCluster.location;
    const location = typeof loc === 'string' && loc ? loc.toLowerCase().replace(/\s+/g, '') : null;
    if (nodeGroup !== look.nodeGroup || location !== look.location) {
      if (look.nodeGroup) this.clusterOfGroup.delete(look.nodeGroup);
      if (nodeGroup) this.clusterOfGroup.set(nodeGroup, id);
      Object.assign(look, { nodeGroup, location, scaleSets: new Map(), listed: false });
      out.moved = true;
    }
    return out;
  }

  /**
   * Lists node resource group `nodeGroup`'s scale sets and finds `pools`' (their agent pool names) by AKS's tag: when
   * to list it again (RELIST_MS while one is not found, else LOOK_REFRESH_MS), and whether a pool's scale set moved.
   */
  async list(nodeGroup: string, pools: string[]): Promise<NodeGroupList> {
    const ref = nodeGroupRefOf(nodeGroup);
    const look = this.looks.get(this.clusterOfGroup.get(nodeGroup) ?? '');
    if (!ref || !look)
      return { state: 'not-found', remaining: {}, afterSeconds: LOOK_REFRESH_MS / 1000, calls: 0, moved: false };
    const read = await this.azure.listScaleSets(ref.subscriptionId, ref.resourceGroup);
    if (read.state === 'throttled') return { ...read, moved: false };
    const found =
      read.state === 'ok'
        ? byPoolTag(nodeGroup, read.scaleSets)
        : read.state === 'not-found'
          ? new Map<string, string>()
          : look.scaleSets;
    const moved = found.size !== look.scaleSets.size || [...found].some(([p, ss]) => look.scaleSets.get(p) !== ss);
    look.scaleSets = found;
    look.listed = true;
    const complete = read.state === 'ok' && pools.every((p) => found.has(p.toLowerCase()));
    return {
      state: read.state,
      remaining: read.state === 'ok' ? read.remaining : {},
      ...(read.state === 'ok' ? {} : { error: read.error }),
      afterSeconds: (complete ? LOOK_REFRESH_MS : RELIST_MS) / 1000,
      calls: read.calls,
      moved,
    };
  }
}
