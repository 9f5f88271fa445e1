import 'server-only';
// The collector's Azure lane: which pools each scale set (and each AKS agent pool) backs, the scheduled reads of
// them (at most a few at once, a round at a time, beside the collector's cycles: a slow ARM answer never holds up
// Kubernetes changes), the last read of each kept for the pool model, throttling, and each subscription's health.
// What a read brings, it hands to the collector (onRead), which analyses those pools at its next cycle. Scale sets
// are budgeted per subscription+region (Compute's throttling). Agent pools are read a managed cluster at a time (one
// list for all its pools), budgeted per subscription (AKS's own throttling), as are the machines of an agent pool
// that has no scale set (type VirtualMachines), which stand for its VMs.

import { hasNoScaleSet, normaliseMachines } from '@/lib/aks-model';
import { isUnsettled } from '@/lib/analyze';
import type { AzureHealth, PoolDetail } from '@/lib/api-types';
import { forgetGoneVms } from '@/lib/forget';
import { normaliseAzure } from '@/lib/azure-model';
import type { PoolInput } from '@/lib/pool-model';
import {
  agentPoolRefOf,
  managedClusterIdOf,
  managedClusterRefOf,
  type AgentPoolsRead,
  type MachinesRead,
} from '../azure/aks-reader';
import type { AzureRead, AzureReader } from '../azure/reader';
import { azureInput, scaleSetRefOf } from '../azure/reader';
import type { ReadPlan, Scheduler } from '../azure/scheduler';
import type { ContextSource } from '../kube/context-source';
import { AksLooks, nodeGroupRefOf, type LookResult, type NodeGroupList } from './aks-looks';

export interface AzureLaneOptions {
  azure: AzureReader;
  scheduler: Scheduler;
  /** Scale sets read at once (default 4). */
  concurrency?: number;
  now: () => number;
  /** The contexts' sources: where the lane finds each pool's scale set and region. */
  sources: ReadonlyMap<string, ContextSource>;
  /** Each pool's last analysis: an unsettled pool's scale set is read often, and names its workload cluster. */
  previous: ReadonlyMap<string, PoolDetail>;
  /** A read of a scale set came back: its pools (`context/namespace/name`), and Azure's answer time if it is data. */
  onRead: (pools: Iterable<string>, readAt: string | null) => void;
}

/** The latest read of a scale set as the pool model takes it, normalised once; `ok`: it is data, not an error. */
interface LastRead {
  input: NonNullable<PoolInput['azure']>;
  ok: boolean;
}

type AgentPoolInput = NonNullable<NonNullable<PoolInput['aks']>['agentPool']>;

/** The budget key part that stands for a region in an agent pool's budget: AKS throttles per subscription. */
const AKS_BUDGET = 'aks';

/**
 * The id the collector schedules the machines list of agent pool `agentPool` (its ARM id) by: for a pool with no
 * scale set, the only read of its VMs.
 */
function machinesIdOf(agentPool: string): string {
  return `${agentPool.toLowerCase()}/machines`;
}

/** The agent pool whose machines list `id` names (see machinesIdOf); null for any other id. */
function machinesRefOf(id: string) {
  return id.endsWith('/machines') ? agentPoolRefOf(id.slice(0, -'/machines'.length)) : null;
}

/**
 * A read target's subscription: a scale set's (from its providerID), an agent pool's, a managed cluster's, a node
 * resource group's or an agent pool's machines list's.
 */
function subscriptionOf(id: string): string | undefined {
  return (
    scaleSetRefOf(id) ??
    agentPoolRefOf(id) ??
    managedClusterRefOf(id) ??
    nodeGroupRefOf(id) ??
    machinesRefOf(id)
  )?.subscriptionId.toLowerCase();
}

/** The managed cluster whose list brings agent pool `id` (its ARM id): what the scheduler reads; null if none. */
function clusterOf(id: string | null | undefined): string | null {
  const ref = agentPoolRefOf(id);
  return ref ? managedClusterIdOf(ref) : null;
}

export class AzureLane {
  /** Azure calls made, by outcome, for metrics and benchmarks. */
  readonly calls = {
    ok: 0,
    throttled: 0,
    notFound: 0,
    unreachable: 0,
    total: 0,
    vmssGet: 0,
    vmList: 0,
    instanceView: 0,
    /** Agent pool lists (a call a page). */
    agentPoolList: 0,
    /** Managed cluster GETs. */
    managedClusterGet: 0,
    /** Node resource groups' scale set lists (a call a page). */
    scaleSetList: 0,
    /** Agent pools' machines lists (a call a page). */
    machinesList: 0,
  };
  /** 429s per subscription (lower-case). */
  readonly throttledBySubscription = new Map<string, number>();
  /** Latest read per scale-set id (lower-case), kept across rounds: the raw VMs are dropped once normalised. */
  private readonly reads = new Map<string, LastRead>();
  /** Latest read per agent pool id, kept across rounds. */
  private readonly agentPoolReads = new Map<string, AgentPoolInput>();
  /** Agent pools AKS has answered for (not only throttled) since start. */
  private readonly agentPoolsAnswered = new Set<string>();
  /** Agent pools whose last answer says they have no scale set (type VirtualMachines): their machines are listed. */
  private readonly scaleSetless = new Set<string>();
  /** Latest machines list per machines id (see machinesIdOf), kept across rounds; `ok`: it is data. */
  private readonly machinesReads = new Map<string, LastRead>();
  /** Health per subscription (lower-case), and per `subscription|aks` for its AKS reads. */
  private readonly health = new Map<string, AzureHealth>();
  /**
   * Scale sets (and machines lists) whose last read was throttled, with the error (their last good data is still
   * shown).
   */
  private readonly throttled = new Map<string, string>();
  /**
   * Scale set or managed cluster → the pools it backs, and the reverse (each pool's scale set, and its agent pool):
   * rebuilt only when a pool came, went or moved (see poolChanged).
   */
  private poolsByScaleSet = new Map<string, Set<string>>();
  private scaleSetByPool = new Map<string, string>();
  private agentPoolByPool = new Map<string, string>();
  private indexStale = true;
  /** The round of reads in progress, if any. */
  private reading: Promise<void> | null = null;
  /** Each managed cluster itself, and its node resource group's scale sets by agent pool. */
  private readonly looks: AksLooks;

  constructor(private readonly opts: AzureLaneOptions) {
    this.looks = new AksLooks(opts.azure, opts.now, opts.scheduler.fastSeconds);
  }

  /**
   * The scale set a pool's VMs are read from: for an AKS pool, the one AKS tagged with its agent pool's name in the
   * node resource group once a list found it (else, for an AzureManagedMachinePool, the one its list names); for a
   * self-managed pool, its AzureMachinePool's.
   */
  scaleSetOf(src: ContextSource, poolKey: string): string | null {
    const ap = agentPoolRefOf(src.agentPoolOf(poolKey));
    const tagged = ap ? this.looks.scaleSetOf(managedClusterIdOf(ap), ap.name) : null;
    return tagged ?? src.scaleSetOf(poolKey);
  }

  /**
   * Whether AKS pool `agentPool`'s scale set (its ARM id) may still be found: its cluster not answered yet, or its
   * node resource group not listed yet. A pool is held back at start meanwhile, as for a scale set not read yet.
   */
  scaleSetPending(agentPool: string): boolean {
    const cluster = clusterOf(agentPool);
    return cluster !== null && this.looks.pending(cluster);
  }

  /** What an AKS pool's model takes for its managed cluster (agent pool `id`'s): its last GET, or why none. */
  managedClusterInputFor(id: string): ReturnType<AksLooks['managedClusterInput']> {
    const cluster = clusterOf(id);
    return cluster ? this.looks.managedClusterInput(cluster) : { state: 'unknown', reason: 'not read yet' };
  }

  /**
   * A Kubernetes change to a pool, now backed by scale set `id` and agent pool `agentPool` (or none yet): the index
   * is rebuilt before the next round if the pool came, went or moved; someone acting on it (`urgent`) has them read
   * now, a controller's write moves them into the fast lane.
   */
  poolChanged(key: string, id: string | null, urgent: boolean, agentPool: string | null = null): void {
    if (this.scaleSetByPool.get(key) !== (id && scaleSetRefOf(id) ? id : undefined)) this.indexStale = true;
    if (this.agentPoolByPool.get(key) !== (agentPool ?? undefined)) this.indexStale = true;
    if (id) this.opts.scheduler.expedite(id, this.opts.now(), urgent);
    const cluster = clusterOf(agentPool);
    if (cluster) this.opts.scheduler.expedite(cluster, this.opts.now(), urgent);
  }

  /** Starts a round of the reads that are due, unless one is running; `onError` hears of a round that failed. */
  startRound(onError: (e: Error) => void): void {
    if (this.reading) return;
    this.reading = this.round()
      .catch((e: unknown) => onError(e as Error))
      .finally(() => {
        this.reading = null;
      });
  }

  /** Resolves once no round runs. */
  async idle(): Promise<void> {
    await this.reading;
  }

  /** What the pool model takes for scale set `id`: its last read, or why there is none. */
  inputFor(id: string | null): PoolInput['azure'] {
    if (!id) return { state: 'unknown', reason: 'the AzureMachinePool has no spec.providerID yet' };
    return this.reads.get(id)?.input ?? { state: 'unknown', reason: 'not read yet' };
  }

  /** What an AKS pool's model takes for agent pool `id` (its ARM id): its last read, or why there is none. */
  agentPoolInputFor(id: string): AgentPoolInput {
    return this.agentPoolReads.get(id) ?? { state: 'unknown', reason: 'not read yet' };
  }

  /**
   * What the model of a pool whose agent pool (`agentPool`, its ARM id) has no scale set takes for Azure's VMs: its
   * machines list's last answer; null for a pool of scale sets.
   */
  machinesInputFor(agentPool: string): PoolInput['azure'] | null {
    if (!this.scaleSetless.has(agentPool)) return null;
    return this.machinesReads.get(machinesIdOf(agentPool))?.input ?? { state: 'unknown', reason: 'not read yet' };
  }

  /** Whether agent pool `agentPool` has no scale set and its machines have not answered a list yet (a 429 is none). */
  machinesPending(agentPool: string): boolean {
    if (!this.scaleSetless.has(agentPool)) return false;
    const read = this.machinesReads.get(machinesIdOf(agentPool));
    return !read || (!read.ok && read.input.state === 'throttled');
  }

  /** The error of the scale set's last read if Azure throttled it (its last good data stands meanwhile). */
  throttledError(id: string | null, agentPool: string | null = null): string | undefined {
    // A pool without a scale set: its machines list's.
    const read = id ?? (agentPool && this.scaleSetless.has(agentPool) ? machinesIdOf(agentPool) : null);
    return read ? this.throttled.get(read) : undefined;
  }

  /** Whether the scale set (or agent pool) has not been read yet: no answer, or only a throttled one without data. */
  unread(id: string): boolean {
    if (!scaleSetRefOf(id) && agentPoolRefOf(id)) return !this.agentPoolsAnswered.has(id);
    const read = this.reads.get(id);
    return !read || (!read.ok && this.throttled.has(id));
  }

  /**
   * When the pool's scale set (else its AKS agent pool) is to be read next, and what that waits for (null: neither, or
   * not tracked yet).
   */
  nextRead(poolKey: string): { at: string; waitingFor: ReadPlan['waitingFor']; of: 'scale-set' | 'agent-pool' } | null {
    const scaleSet = this.scaleSetByPool.get(poolKey);
    const id = scaleSet ?? clusterOf(this.agentPoolByPool.get(poolKey));
    const plan = id ? this.opts.scheduler.plan(id, this.opts.now()) : null;
    return (
      plan && {
        at: new Date(plan.at).toISOString(),
        waitingFor: plan.waitingFor,
        of: scaleSet ? 'scale-set' : 'agent-pool',
      }
    );
  }

  /** Until when Azure asked not to read scale set `id` (its subscription and region's Retry-After), if it did. */
  throttledUntil(id: string): string | null {
    const plan = this.opts.scheduler.plan(id, this.opts.now());
    return plan?.waitingFor === 'throttled' ? new Date(plan.at).toISOString() : null;
  }

  /** The Azure read budget per subscription+region as the scheduler sees it. */
  budgets(): ReturnType<Scheduler['budgetsView']> {
    return this.opts.scheduler.budgetsView(this.opts.now());
  }

  /** Each subscription's health, by ID, with the workload clusters whose scale sets it holds. */
  subscriptions(): AzureHealth[] {
    const usedBy = this.clustersBySubscription();
    const subs = new Set([...this.health.values()].map((h) => h.subscription));
    // A subscription's Compute reads failing come first, then its AKS reads failing, then whichever answered.
    const merged = [...subs].map((sub): AzureHealth => {
      const compute = this.health.get(sub);
      const aks = this.health.get(`${sub}|${AKS_BUDGET}`);
      const aksSaid = aks && (aks.error ? { ...aks, error: `AKS: ${aks.error}` } : aks);
      if (compute && compute.state !== 'live') return compute;
      if (aksSaid && aksSaid.state !== 'live') return aksSaid;
      return (compute ?? aksSaid) as AzureHealth;
    });
    return merged
      .sort((a, b) => (a.subscription < b.subscription ? -1 : a.subscription > b.subscription ? 1 : 0))
      .map((h) => ({ ...h, usedBy: [...(usedBy.get(h.subscription) ?? [])].sort() }));
  }

  /** How many scale sets the lane reads (agent pools not counted). */
  scaleSetCount(): number {
    let n = 0;
    for (const id of this.poolsByScaleSet.keys()) if (scaleSetRefOf(id)) n++;
    return n;
  }

  /** Drops every scale set's last read (the collector benchmark's heap breakdown, at the end of a run). */
  dropReads(): void {
    this.reads.clear();
    this.agentPoolReads.clear();
    this.machinesReads.clear();
  }

  private async round(): Promise<void> {
    const now = this.opts.now();
    if (this.indexStale) this.reindex(now);
    const due = this.opts.scheduler.due(now);
    const limit = this.opts.concurrency ?? 4;
    for (let i = 0; i < due.length; i += limit)
      await Promise.all(due.slice(i, i + limit).map((id) => this.readOne(id)));
  }

  /** One scheduled read: a scale set, a managed cluster (its agent pools, and itself), or a node resource group. */
  private async readOne(id: string): Promise<void> {
    const ref = scaleSetRefOf(id);
    if (ref) {
      const read = await this.opts.azure.read(ref);
      this.record(id, ref.subscriptionId.toLowerCase(), read);
      this.opts.onRead(this.poolsByScaleSet.get(id) ?? [], read.state === 'ok' ? read.readAt : null);
      return;
    }
    const machines = machinesRefOf(id);
    if (machines) {
      const read = await this.opts.azure.readMachines(machines);
      this.recordMachines(id, machines.subscriptionId.toLowerCase(), read);
      this.opts.onRead(this.poolsByScaleSet.get(id) ?? [], read.state === 'ok' ? read.readAt : null);
      return;
    }
    const cluster = managedClusterRefOf(id);
    if (cluster) {
      const read = await this.opts.azure.readAgentPools(cluster);
      const look = read.state === 'ok' ? await this.looks.look(id, cluster, this.aksOperationRuns(id)) : null;
      this.recordAgentPools(id, cluster.subscriptionId.toLowerCase(), read, look);
      if (look?.moved) this.indexStale = true;
      // Azure's answer time of a pool whose scale set is not read (its figures are AKS's); the others' is their
      // scale set read's.
      const pools = [...(this.poolsByScaleSet.get(id) ?? [])];
      this.opts.onRead(
        pools.filter((k) => this.scaleSetByPool.has(k)),
        null,
      );
      this.opts.onRead(
        pools.filter((k) => !this.scaleSetByPool.has(k)),
        read.state === 'ok' ? read.readAt : null,
      );
      return;
    }
    const group = nodeGroupRefOf(id);
    const owner = group && this.looks.clusterOf(id);
    if (!group || !owner) return;
    const list = await this.looks.list(id, this.agentPoolNamesOf(owner));
    this.recordNodeGroup(id, group.subscriptionId, list);
    if (list.moved) this.indexStale = true;
  }

  /** Rebuilds the scale set ↔ pool index from the sources, and tells the scheduler which scale sets to read. */
  private reindex(now: number): void {
    this.indexStale = false;
    const index = new Map<string, Set<string>>();
    const byPool = new Map<string, string>();
    const agentPoolByPool = new Map<string, string>();
    const regions = new Map<string, string | null>();
    const add = (id: string, key: string) => index.set(id, (index.get(id) ?? new Set<string>()).add(key));
    for (const [ctx, src] of this.opts.sources) {
      for (const p of src.poolKeys()) {
        const key = `${ctx}/${p}`;
        const agentPool = src.agentPoolOf(p);
        const cluster = clusterOf(agentPool);
        if (agentPool && cluster) {
          add(cluster, key);
          agentPoolByPool.set(key, agentPool);
          regions.set(cluster, AKS_BUDGET);
          // Its node resource group's list, on the region's Compute budget, finds its scale set.
          const group = this.looks.nodeGroupOf(cluster);
          if (group) {
            add(group, key);
            regions.set(group, this.looks.regionOf(cluster));
          }
          // A pool with no scale set: its machines, on the AKS budget.
          if (this.scaleSetless.has(agentPool)) {
            add(machinesIdOf(agentPool), key);
            regions.set(machinesIdOf(agentPool), AKS_BUDGET);
          }
        }
        const id = this.scaleSetOf(src, p);
        if (!id || !scaleSetRefOf(id)) continue;
        add(id, key);
        byPool.set(key, id);
        if (!regions.get(id)) regions.set(id, cluster ? this.looks.regionOf(cluster) : src.regionOf(p));
      }
    }
    this.poolsByScaleSet = index;
    this.scaleSetByPool = byPool;
    this.agentPoolByPool = agentPoolByPool;
    // Agent pools no pool names any more: their reads and their subscriptions' AKS health go.
    const named = new Set(agentPoolByPool.values());
    this.looks.keepOnly(new Set([...named].flatMap((ap) => clusterOf(ap) ?? [])));
    for (const id of this.agentPoolReads.keys()) if (!named.has(id)) this.agentPoolReads.delete(id);
    for (const id of this.agentPoolsAnswered) if (!named.has(id)) this.agentPoolsAnswered.delete(id);
    for (const id of this.scaleSetless) if (!named.has(id)) this.scaleSetless.delete(id);
    for (const id of this.machinesReads.keys()) if (!index.has(id)) this.machinesReads.delete(id);
    for (const id of this.throttled.keys()) if (machinesRefOf(id) && !index.has(id)) this.throttled.delete(id);
    const aksSubs = new Set([...index.keys()].flatMap((id) => (managedClusterRefOf(id) ? [subscriptionOf(id)] : [])));
    for (const key of this.health.keys())
      if (key.endsWith(`|${AKS_BUDGET}`) && !aksSubs.has(key.slice(0, -AKS_BUDGET.length - 1))) this.health.delete(key);
    const { scheduler } = this.opts;
    for (const id of scheduler.tracked()) if (!index.has(id)) scheduler.untrack(id);
    for (const id of index.keys()) scheduler.track(id, subscriptionOf(id) as string, now, regions.get(id));
  }

  /** Counts a read, keeps what it brought, and tells the scheduler when to read the scale set again. */
  private record(id: string, sub: string, read: AzureRead): void {
    const t = this.opts.now();
    this.calls.total += read.calls;
    this.calls.vmssGet += read.ops.vmssGet;
    this.calls.vmList += read.ops.vmList;
    this.calls.instanceView += read.ops.instanceView;
    if (read.state === 'throttled') {
      this.throttled.set(id, read.error);
      this.countThrottled(id, sub, read);
      // Keep the last good data; the pool shows Azure as throttled.
      const prev = this.reads.get(id);
      this.reads.set(id, prev?.ok ? prev : { input: azureInput(read), ok: false });
      return;
    }
    this.throttled.delete(id);
    this.countAnswer(sub, read);
    const input = read.state === 'ok' ? normaliseAzure(read.vmss, read.vms, read.readAt) : azureInput(read);
    // VMs gone from the scale set (or with it): their IDs leave lib/'s shared tables.
    if (read.state === 'ok' || read.state === 'not-found') forgetGoneVms(this.reads.get(id)?.input, input);
    this.reads.set(id, { input, ok: read.state === 'ok' });
    this.opts.scheduler.record(id, t, {
      region: read.state === 'ok' ? String(read.vmss.location ?? '') : undefined,
      remaining: read.state === 'ok' ? read.remaining : undefined,
      fast: this.needsFastLane(id),
    });
  }

  /**
   * Keeps what a managed cluster's list says of each pool of it, counts it, and tells the scheduler when to list it
   * again. A pool the list does not hold is not found. A throttled list replaces the last good answers: the pools then
   * show ASO's cached copy and say AKS could not be read, rather than an answer of unknown age.
   */
  private recordAgentPools(id: string, sub: string, read: AgentPoolsRead, look: LookResult | null): void {
    const t = this.opts.now();
    this.calls.total += read.calls + (look?.aksCalls ?? 0);
    this.calls.agentPoolList += read.calls;
    this.calls.managedClusterGet += look?.aksCalls ?? 0;
    // Pools that went while the list was out are not in the index any more: their answers are not kept.
    const agentPools = [...(this.poolsByScaleSet.get(id) ?? [])].flatMap((k) => {
      const ap = this.agentPoolByPool.get(k);
      return ap ? [ap] : [];
    });
    const health = `${sub}|${AKS_BUDGET}`;
    if (read.state === 'throttled') {
      this.countThrottled(id, sub, read, health);
      const { retryAfterSeconds } = read;
      for (const ap of agentPools)
        this.agentPoolReads.set(ap, { state: 'throttled', error: read.error, retryAfterSeconds });
      return;
    }
    this.countAnswer(sub, read, health);
    for (const ap of agentPools) {
      this.agentPoolsAnswered.add(ap);
      const answer = this.agentPoolAnswer(ap, read);
      this.agentPoolReads.set(ap, answer);
      // A pool's type is only changed by AKS's answer: an error keeps what the last answer said.
      if (answer.state !== 'ok') continue;
      const without = hasNoScaleSet(answer.agentPool);
      if (without === this.scaleSetless.has(ap)) continue;
      if (without) this.scaleSetless.add(ap);
      else this.scaleSetless.delete(ap);
      this.indexStale = true;
    }
    // The managed cluster's GET is on the same AKS budget: a 429 to it holds the cluster's next list back too.
    const throttled = look?.throttled;
    this.opts.scheduler.record(id, t, {
      remaining: throttled?.remaining ?? (read.state === 'ok' ? read.remaining : undefined),
      fast: this.needsFastLane(id),
      extraCalls: look?.aksCalls ?? 0,
      ...(throttled ? { throttled: true, retryAfterSeconds: throttled.retryAfterSeconds } : {}),
    });
  }

  /** Counts a node resource group's list, and tells the scheduler when to list it again (the list says when). */
  private recordNodeGroup(id: string, sub: string, list: NodeGroupList): void {
    const t = this.opts.now();
    this.calls.total += list.calls;
    this.calls.scaleSetList += list.calls;
    if (list.state === 'throttled') {
      this.countThrottled(id, sub, list);
      return;
    }
    if (list.calls > 0) this.countAnswer(sub, list);
    this.opts.scheduler.record(id, t, { remaining: list.remaining, fast: false, afterSeconds: list.afterSeconds });
  }

  /**
   * Counts an agent pool's machines list, keeps what it brought (a 429 keeps the last good list, as for a scale set),
   * and tells the scheduler when to list again.
   */
  private recordMachines(id: string, sub: string, read: MachinesRead): void {
    const t = this.opts.now();
    this.calls.total += read.calls;
    this.calls.machinesList += read.calls;
    const health = `${sub}|${AKS_BUDGET}`;
    const prev = this.machinesReads.get(id);
    if (read.state === 'throttled') {
      this.countThrottled(id, sub, read, health);
      const input = { state: 'throttled' as const, error: read.error, retryAfterSeconds: read.retryAfterSeconds };
      this.machinesReads.set(id, prev?.ok ? prev : { input, ok: false });
      this.throttled.set(id, read.error);
      return;
    }
    this.throttled.delete(id);
    this.countAnswer(sub, read, health);
    const input =
      read.state === 'ok' ? normaliseMachines(read.machines, read.readAt) : { state: read.state, error: read.error };
    if (read.state === 'ok' || read.state === 'not-found') forgetGoneVms(prev?.input, input);
    this.machinesReads.set(id, { input, ok: read.state === 'ok' });
    this.opts.scheduler.record(id, t, {
      remaining: read.state === 'ok' ? read.remaining : undefined,
      fast: this.needsFastLane(id),
    });
  }

  /**
   * Whether an AKS operation ran on a pool of managed cluster `id` at its last analysis (an upgrade, ASO waiting for
   * the control plane, a change being applied): what the cluster's GET then tells is followed closely.
   */
  private aksOperationRuns(id: string): boolean {
    for (const key of this.poolsByScaleSet.get(id) ?? [])
      if (this.opts.previous.get(key)?.findings.some((f) => f.code === 'aks-operation')) return true;
    return false;
  }

  /**
   * The names of the agent pools whose pools managed cluster `id` backs and which have a scale set: not those AKS says
   * are of a type without one (VirtualMachines), whose scale set no list would find.
   */
  private agentPoolNamesOf(id: string): string[] {
    return [...(this.poolsByScaleSet.get(id) ?? [])].flatMap((k) => {
      const ap = this.agentPoolByPool.get(k);
      return ap && !this.scaleSetless.has(ap) ? (agentPoolRefOf(ap)?.name ?? []) : [];
    });
  }

  /** What a managed cluster's list (not throttled) says of agent pool `ap`. */
  private agentPoolAnswer(ap: string, read: Exclude<AgentPoolsRead, { state: 'throttled' }>): AgentPoolInput {
    if (read.state === 'unreachable') return { state: 'unreachable', error: read.error };
    if (read.state === 'not-found') return { state: 'not-found', error: read.error };
    const name = agentPoolRefOf(ap)?.name.toLowerCase() ?? '';
    const pool = read.agentPools.get(name);
    return pool
      ? { state: 'ok', agentPool: pool, readAt: Date.parse(read.readAt) }
      : { state: 'not-found', error: `AKS lists no agent pool ${name} in its managed cluster` };
  }

  /**
   * Counts a 429 to read `id` and holds its budget until Azure's Retry-After; the subscription's health (or its AKS
   * reads', `health`) says it is throttled.
   */
  private countThrottled(
    id: string,
    sub: string,
    read: { error: string; retryAfterSeconds: number | null; remaining: Record<string, number> },
    health = sub,
  ): void {
    this.calls.throttled++;
    this.throttledBySubscription.set(sub, (this.throttledBySubscription.get(sub) ?? 0) + 1);
    this.setHealth(sub, 'throttled', read.error, health);
    const { retryAfterSeconds, remaining } = read;
    this.opts.scheduler.record(id, this.opts.now(), { throttled: true, retryAfterSeconds, remaining, fast: true });
  }

  /** Counts an answer that is not a 429 by its outcome; the subscription's health (or `health`) follows it. */
  private countAnswer(sub: string, read: { state: string; error?: string }, health = sub): void {
    if (read.state === 'ok') this.calls.ok++;
    if (read.state === 'not-found') this.calls.notFound++;
    if (read.state === 'unreachable') this.calls.unreachable++;
    const unreachable = read.state === 'unreachable';
    this.setHealth(sub, unreachable ? 'unreachable' : 'live', unreachable ? read.error : undefined, health);
  }

  private setHealth(sub: string, state: AzureHealth['state'], error?: string, key = sub): void {
    const cur = this.health.get(key);
    if (cur?.state === state && cur.error === error) return;
    this.health.set(key, {
      subscription: sub,
      state,
      since: new Date(this.opts.now()).toISOString(),
      ...(error ? { error } : {}),
    });
  }

  /** In motion, not ready or drifting (or not analysed yet): read its scale set often. */
  private needsFastLane(scaleSetId: string): boolean {
    for (const key of this.poolsByScaleSet.get(scaleSetId) ?? []) {
      const d = this.opts.previous.get(key);
      if (!d || isUnsettled(d)) return true;
    }
    return false;
  }

  /** The workload clusters (by the Cluster's name, else the pool's context) whose pools' scale sets each subscription holds. */
  private clustersBySubscription(): Map<string, Set<string>> {
    const out = new Map<string, Set<string>>();
    for (const [id, pools] of this.poolsByScaleSet) {
      const sub = subscriptionOf(id);
      if (!sub) continue;
      const names = out.get(sub) ?? new Set<string>();
      for (const key of pools) names.add(this.opts.previous.get(key)?.summary.clusterName ?? key.split('/')[0] ?? key);
      out.set(sub, names);
    }
    return out;
  }
}
