import 'server-only';
// What the collector knows of each AKS managed cluster beside its agent pools: the cluster itself (its control plane's
// versions and state, its node resource group; one GET, budgeted as AKS reads) and, from a list of its node resource
// group's scale sets (one Compute call, budgeted as the region's reads), each agent pool's scale set, by the
// `aks-managed-poolName` tag AKS puts on it (CAPZ finds an AzureManagedMachinePool's scale set the same way).
//
// The cluster is looked at when it is new, while one of its pools moves (so an upgrade's control plane version is
// current) and every LOOK_REFRESH_MS; its node resource group is listed once, again when one of its agent pools has
// no scale set found (at most every RELIST_MS), and every LOOK_REFRESH_MS.

import type { PoolInput } from '@/lib/pool-model';
import type { ManagedClusterRef } from '../azure/aks-reader';
import type { AzureReader, ListedScaleSet } from '../azure/reader';
import type { Scheduler } from '../azure/scheduler';

type ManagedClusterInput = NonNullable<NonNullable<PoolInput['aks']>['managedCluster']>;

/** How often a settled cluster is looked at again, and its node resource group listed again (ms). */
const LOOK_REFRESH_MS = 15 * 60_000;
/** The least time between two lists of a node resource group while a pool's scale set is not found (ms). */
const RELIST_MS = 60_000;

/** The tags AKS names a node pool's scale set by (`poolName` on clusters made before 2020). */
const POOL_TAGS = ['aks-managed-poolName', 'poolName'];

interface Look {
  managedCluster: ManagedClusterInput;
  lookedAt: number;
  nodeResourceGroup: string | null;
  /** The region of the cluster (its node resource group's scale sets are in it). */
  location: string | null;
  /** Agent pool name (lower-case) → its scale set, as the collector names scale sets (a providerID, lower-case). */
  scaleSets: Map<string, string>;
  listedAt: number | null;
}

/** What looking at a cluster cost and brought. */
export interface LookResult {
  /** AKS calls made (the managed cluster GET). */
  aksCalls: number;
  /** The managed cluster GET was throttled: AKS's Retry-After (its budget is the agent pool list's). */
  throttled?: { retryAfterSeconds: number | null; remaining: Record<string, number> };
  /** Compute calls made (the node resource group's list). */
  computeCalls: number;
  /** Some agent pool's scale set is new or changed: the collector's index of scale sets must be rebuilt. */
  moved: boolean;
}

/** A scale set's ARM id as the collector names scale sets: a providerID, lower-case (lib/provider-id's form). */
function scaleSetKey(armId: string): string | null {
  return /^\/subscriptions\/[^/]+\/resourceGroups\/[^/]+\/providers\/Microsoft\.Compute\/virtualMachineScaleSets\/[^/]+$/i.test(
    armId,
  )
    ? `azure://${armId}`.toLowerCase()
    : null;
}

/** Each agent pool's scale set in a node resource group's list, by AKS's tag. */
function byPoolTag(scaleSets: ListedScaleSet[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of scaleSets) {
    const tag = POOL_TAGS.map((t) => s.tags[t]).find((v) => typeof v === 'string' && v !== '');
    const key = scaleSetKey(s.id);
    if (typeof tag === 'string' && key) out.set(tag.toLowerCase(), key);
  }
  return out;
}

export class AksLooks {
  private readonly looks = new Map<string, Look>();
  /** Compute calls made listing node resource groups, for metrics and benchmarks. */
  scaleSetLists = 0;
  /** Managed cluster GETs made. */
  managedClusterGets = 0;

  constructor(
    private readonly azure: AzureReader,
    private readonly scheduler: Scheduler,
    private readonly now: () => number,
  ) {}

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

  /** Forgets the clusters no pool names any more. */
  keepOnly(ids: ReadonlySet<string>): void {
    for (const id of this.looks.keys()) if (!ids.has(id)) this.looks.delete(id);
  }

  /**
   * Looks at managed cluster `id` if it is due: its GET (new, `moving`, or not looked at for LOOK_REFRESH_MS), then
   * its node resource group's list if a pool of `pools` has no scale set found yet, or the last list is old.
   */
  async look(id: string, ref: ManagedClusterRef, pools: string[], moving: boolean): Promise<LookResult> {
    const out: LookResult = { aksCalls: 0, computeCalls: 0, moved: false };
    let look = this.looks.get(id);
    const t = this.now();
    if (!look || moving || t - look.lookedAt >= LOOK_REFRESH_MS) {
      const read = await this.azure.readManagedCluster(ref);
      this.managedClusterGets += read.calls;
      out.aksCalls = read.calls;
      look ??= {
        managedCluster: { state: 'unknown', reason: 'not read yet' },
        lookedAt: t,
        nodeResourceGroup: null,
        location: null,
        scaleSets: new Map(),
        listedAt: null,
      };
      look.lookedAt = t;
      if (read.state === 'throttled') {
        out.throttled = { retryAfterSeconds: read.retryAfterSeconds, remaining: read.remaining };
        // The last good answer stands, as a scale set's does: an upgrade's version is at most one read old.
        if (look.managedCluster.state !== 'ok')
          look.managedCluster = { state: 'throttled', error: read.error, retryAfterSeconds: read.retryAfterSeconds };
      } else if (read.state === 'ok') {
        const props = (read.managedCluster.properties ?? {}) as Record<string, unknown>;
        look.managedCluster = { state: 'ok', managedCluster: read.managedCluster, readAt: Date.parse(read.readAt) };
        look.nodeResourceGroup = typeof props.nodeResourceGroup === 'string' ? props.nodeResourceGroup : null;
        const loc = read.managedCluster.location;
        look.location = typeof loc === 'string' && loc ? loc.toLowerCase().replace(/\s+/g, '') : null;
      } else look.managedCluster = { state: read.state, error: read.error };
      this.looks.set(id, look);
    }
    if (look && this.listDue(look, pools, t)) out.moved = await this.list(look, ref, out, t);
    return out;
  }

  private listDue(look: Look, pools: string[], t: number): boolean {
    if (!look.nodeResourceGroup || !look.location) return false;
    if (look.listedAt === null || t - look.listedAt >= LOOK_REFRESH_MS) return true;
    return t - look.listedAt >= RELIST_MS && pools.some((p) => !look.scaleSets.has(p.toLowerCase()));
  }

  /** Lists the node resource group's scale sets, within the region's budget; whether a pool's scale set moved. */
  private async list(look: Look, ref: ManagedClusterRef, out: LookResult, t: number): Promise<boolean> {
    const region = look.location as string;
    if (!this.scheduler.allows(ref.subscriptionId, region, t)) return false;
    const read = await this.azure.listScaleSets(ref.subscriptionId, look.nodeResourceGroup as string);
    look.listedAt = t;
    out.computeCalls = read.calls;
    this.scaleSetLists += read.calls;
    const throttled = read.state === 'throttled';
    this.scheduler.spend(ref.subscriptionId, region, t, {
      calls: read.calls,
      throttled,
      retryAfterSeconds: throttled ? read.retryAfterSeconds : null,
    });
    if (read.state !== 'ok' && read.state !== 'not-found') return false;
    const found = read.state === 'ok' ? byPoolTag(read.scaleSets) : new Map<string, string>();
    const moved =
      found.size !== look.scaleSets.size || [...found].some(([pool, ss]) => look.scaleSets.get(pool) !== ss);
    look.scaleSets = found;
    return moved;
  }
}
