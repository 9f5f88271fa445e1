import 'server-only';
// The collector: Kubernetes informers and scheduled Azure reads feed the lib/ pool model; each cycle
// analyses the pools that changed, writes their transitions atomically, and publishes change events.
// It never overlaps itself and survives source errors (they become source states in the data).
// Its Azure reads (./azure-lane) and Events (./event-inbox) are rooms of their own. What is left is one file of
// ~760 lines: the cycle's steps (taking the dirty pools, analysing, writing, requeueing what the store refused,
// the start-up grace, pools that left) read and change the same maps of pools, which a split would pass around.

import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { KubeConfig } from '@kubernetes/client-node';
import { analyzePool } from '@/lib/analyze';
import {
  goneSince,
  type AzureHealth,
  type PoolDetail,
  type PoolSummary,
  type SourceState,
  type StoreHealth,
} from '@/lib/api-types';
import type { PoolInput } from '@/lib/pool-model';
import { diffDetails } from '@/lib/transitions';
import type { AzureReader } from '../azure/reader';
import { scaleSetRefOf } from '../azure/reader';
import type { Scheduler } from '../azure/scheduler';
import { contextKubeConfig } from '../kube/calls';
import { AzureLane } from './azure-lane';
import { eventEntry, EventInbox } from './event-inbox';
import { ContextSource, type PoolEvent, type SourceHealth } from '../kube/context-source';
import type { PoolWrite, TimelineStore } from '../store/store';

/**
 * Pools analysed and written in one cycle, at most. A cycle's pools are stored together when it ends, and a
 * change someone makes meanwhile waits for that end: at a few milliseconds a pool (100 instances), 50 keep
 * both waits to a fraction of a second through a fleet-wide burst (cycles follow each other at once while
 * pools wait).
 */
const MAX_POOLS_PER_CYCLE = 50;

/**
 * Milliseconds between cycles: Kubernetes changes arriving meanwhile are analysed and stored together, and a change
 * waits for the next tick (most of its wait to be stored). Longer does not pay: at 100k VMs, 500 ms made as many
 * analyses (a pool's changes come from controller passes seconds apart) for no less CPU (19.3% of a core against
 * 17.1–18.6%) and twice the wait (p95 576 ms).
 */
export const DEFAULT_CYCLE_MS = 250;

/**
 * Milliseconds from start (its sources started) during which a pool's state is not stored before each of its sources
 * has been read since (see unreadSource): the management cluster's kinds and the workload cluster's Nodes list in
 * seconds, and the Azure budget lets the first reads of ~95 scale sets per subscription and region go at once. A
 * source that has said nothing by then is recorded as it is (unknown, with the reason), not waited for longer.
 */
const DEFAULT_START_GRACE_MS = 60_000;

/** The longest wait between cycles while the store refuses writes (the wait doubles from the cadence). */
const WRITE_BACKOFF_MAX_MS = 10_000;

/** How soon a cycle follows a change someone made to a pool (other changes wait for the cadence). */
const URGENT_DELAY_MS = 10;

/** A pool's write as the collector makes it: with the shape of the state it stores (see StoredShape). */

/**
 * A stored pool that left poolscope's view: its last stored state, and why — its MachinePool deleted, its context
 * no longer watched, or its context not listed by the end of the start-up grace (then recorded with that context's
 * source state, its other data as stored).
 */
interface Gone {
  state: PoolDetail;
  reason: 'deleted' | 'unwatched' | 'unlisted';
}

/** A pool a cycle took: since when a change to it waited, and its Events. */
interface Taken {
  key: string;
  since: number | undefined;
  events: PoolEvent[];
}

export interface ChangeEvent {
  seq: number;
  poolKey: string;
  at: string;
  fields: string[];
  /** The pool's new summary (absent when the change came through another replica). */
  summary?: PoolSummary;
}

/** What the bus says after every cycle ('cycle'). */
export interface CycleEvent {
  seconds: number;
  /** Pools written. */
  pools: number;
  /** The id of the stored cycle, when it stored something. */
  cycle: string | null;
  /** Azure calls since start. */
  azureCalls: number;
  /**
   * Per pool the cycle analysed after a Kubernetes change (an object or an Event): the seconds from the first
   * such change reaching the collector to the pool's analysis stored (or found unchanged).
   */
  changeLags: number[];
  /** Milliseconds this cycle spent analysing its pools, and writing them to the store. */
  analyseMs: number;
  writeMs: number;
  /** Pools changed and waiting for a cycle when this one ended (a backlog the next cycles work through). */
  waiting: number;
  /** Why the cycle failed (its write refused: its pools wait for the next), when it did. */
  error?: string;
  /** Writes the store refused in a row, this one included (0 when the cycle's write was stored or it wrote nothing). */
  failingWrites?: number;
}

export interface CollectorOptions {
  kubeconfig: KubeConfig;
  contexts: string[];
  store: TimelineStore;
  azure: AzureReader;
  scheduler: Scheduler;
  /** Real ms between cycles (DEFAULT_CYCLE_MS; a cycle with nothing to do costs nothing). */
  cycleMs?: number;
  now?: () => number;
  /** How many scale sets are read at once. */
  azureConcurrency?: number;
  /** Pools analysed and written in one cycle, at most (MAX_POOLS_PER_CYCLE). */
  maxPoolsPerCycle?: number;
  /** The start-up grace in real milliseconds (DEFAULT_START_GRACE_MS). */
  startGraceMs?: number;
  /** How long a frozen list while a pool scales on CAPZ before v1.20 is a warning (lib/diagnosis's default). */
  frozenCriticalAfterMs?: number;
}

export type { AzureHealth } from '@/lib/api-types';

/** Why an AKS pool's agent pool is not read: ASO has not recorded its id, or records one that is not an agent pool's. */
function noAgentPool(input: PoolInput): NonNullable<NonNullable<PoolInput['aks']>['agentPool']> {
  const aso = input.aks?.asoAgentPool;
  const id = aso && 'status' in aso ? (aso.status as { id?: unknown } | undefined)?.id : undefined;
  if (typeof id === 'string' && id !== '')
    return { state: 'unknown', reason: "ASO's status.id is not an AKS agent pool id, so poolscope does not read it" };
  return { state: 'unknown', reason: "ASO has not recorded the agent pool's id (status.id) yet" };
}

export class Collector {
  readonly bus = new EventEmitter();
  private seq = 0;
  private readonly sources = new Map<string, ContextSource>();
  private readonly dirty = new Set<string>();
  /** Dirty pools someone acted on (see ContextSource's `urgent`): analysed first. */
  private readonly urgent = new Set<string>();
  /**
   * When a Kubernetes change (an object or an Event) first made a pool dirty since its last analysis
   * (performance.now()): each cycle reports how long its pools' changes waited to be stored (`changeLags`).
   */
  private readonly changedSince = new Map<string, number>();
  /** Events waiting to be written, by pool key. */
  private readonly pendingEvents = new Map<string, PoolEvent[]>();
  /**
   * Each pool's last stored analysis, without its instance table: the store tells whether a new analysis changed
   * anything (see TimelineStore.sameAsWritten), so the table (most of an analysis at 100 instances a pool) is not
   * kept here.
   */
  private readonly previous = new Map<string, PoolDetail>();
  /**
   * Contexts whose stored pools were checked against their first list of MachinePools: a pool deleted while
   * poolscope was not running is found then (later deletions come as watch events).
   */
  private readonly swept = new Set<string>();
  /**
   * While starting (the start-up grace): a pool's state is stored only once each of its sources has been read since
   * start, so that a restart records no source going unknown (and its figures blank) and back a moment later.
   */
  private starting = true;
  /** When the start-up grace ends (performance.now()); set as the cycles start. */
  private graceEnds = Infinity;
  /** Pools whose state waits for a source's first read (see unreadSource): analysed again as the grace ends. */
  private readonly held = new Set<string>();
  /** Contexts whose kinds have all been listed since start (their management-cluster state was 'ok' once). */
  private readonly listedContexts = new Set<string>();
  /**
   * When each pool's scale set was last read from Azure (its answer's Date), not yet in the store: recorded once the
   * pool's analysis of that read is stored (see recordReads).
   */
  private readonly readTimes = new Map<string, string>();
  private timer: NodeJS.Timeout | null = null;
  /** When the pending timer fires (performance.now()). */
  private timerDue = 0;
  private running = false;
  /** Whether the last cycle took as many pools as a cycle may (others may be waiting). */
  private backlog = false;
  /** Failed store writes in a row: the cycles after one back off (a store that is down is not hammered). */
  private failedWrites = 0;
  /** Since when, and why, the store has refused the writes in a row (null once one is stored). */
  private writesRefused: { since: string; error: string } | null = null;
  /** Cycle writes the store refused since start (a full disk, a database down or read-only), for metrics. */
  storeWriteFailures = 0;
  /** Seconds from a Kubernetes change reaching the collector to its pool's analysis stored, this cycle. */
  private changeLags: number[] = [];
  /** This cycle's milliseconds analysing and writing (see CycleEvent). */
  private cycleMs = { analyseMs: 0, writeMs: 0 };
  private stopped = false;
  /**
   * What only benchmarks and tests use: pool analyses since start (and how many found the pool as it was), the
   * analyses kept, and the collector's state dropped part by part (the collector benchmark's heap breakdown, at
   * the end of a run: the collector is done after it).
   */
  readonly forBenchmarks = {
    analyses: { total: 0, unchanged: 0 },
    kept: (): ReadonlyMap<string, PoolDetail> => this.previous,
    drop: (part: 'analyses' | 'azure' | 'sources'): void => this.dropForBenchmarks(part),
  };
  /** The id of the last cycle that stored something (it names that cycle's rows in the store). */
  lastStoredCycle: string | null = null;
  lastError: string | null = null;
  /** Milliseconds between cycles (CollectorOptions.cycleMs, else DEFAULT_CYCLE_MS). */
  readonly cadenceMs: number;
  /** The Azure reads: scale sets, their last reads, throttling, subscriptions' health (./azure-lane). */
  readonly azure: AzureLane;
  /** Events about the pools, each recorded once (./event-inbox). */
  private readonly events: EventInbox;

  constructor(private readonly opts: CollectorOptions) {
    this.bus.setMaxListeners(0);
    this.cadenceMs = opts.cycleMs ?? DEFAULT_CYCLE_MS;
    this.events = new EventInbox(opts.store);
    this.azure = new AzureLane({
      azure: opts.azure,
      scheduler: opts.scheduler,
      ...(opts.azureConcurrency === undefined ? {} : { concurrency: opts.azureConcurrency }),
      now: () => this.now(),
      sources: this.sources,
      previous: this.previous,
      onRead: (pools, readAt) => {
        for (const key of pools) {
          this.dirty.add(key);
          if (readAt !== null) this.readTimes.set(key, readAt);
        }
      },
    });
  }

  /** Stored pools of a context whose MachinePool is gone, not yet recorded as deleted: made dirty once listed. */
  private sweepGone(): void {
    for (const [ctx, src] of this.sources) {
      if (this.swept.has(ctx) || !src.machinePoolsListed()) continue;
      this.swept.add(ctx);
      for (const [key, d] of this.previous) {
        if (d.summary.ref.context === ctx && !goneSince(d.summary) && this.goneReason(d) === 'deleted')
          this.markChanged(key);
      }
    }
  }

  /** Why a stored pool left poolscope's view, or null while it is in it (or that is not known yet). */
  private goneReason(d: PoolDetail): Gone['reason'] | null {
    const { context, namespace, name } = d.summary.ref;
    if (!this.opts.contexts.includes(context)) return 'unwatched';
    const src = this.sources.get(context);
    if (!src) return null;
    if (!src.machinePoolsListed()) return this.starting ? null : 'unlisted';
    return src.hasPool(`${namespace}/${name}`) ? null : 'deleted';
  }

  /**
   * Which of a pool's sources has said nothing since start, if any: the management cluster (not every kind listed),
   * the workload cluster (its Nodes not listed; a Cluster that is not there is an answer) or Azure (its scale set,
   * or an AKS pool's agent pool, not read, or throttled with no data yet; an AKS pool's scale set not looked for yet
   * in its node resource group; a pool without either has nothing to read). An error is an answer: the pool is stored with it, as it would be later.
   */
  private unreadSource(
    ctx: string,
    src: ContextSource,
    input: PoolInput,
    ids: { scaleSet: string | null; agentPool: string | null },
  ): 'kube' | 'workload' | 'azure' | null {
    if (!this.listedContexts.has(ctx)) {
      if (src.kubeState().state !== 'ok') return 'kube';
      this.listedContexts.add(ctx);
    }
    if (input.workload?.state === 'unknown' && input.cluster) return 'workload';
    if (ids.agentPool && this.azure.unread(ids.agentPool)) return 'azure';
    if (ids.agentPool && !ids.scaleSet && this.azure.scaleSetPending(ids.agentPool)) return 'azure';
    if (ids.agentPool && !ids.scaleSet && this.azure.machinesPending(ids.agentPool)) return 'azure';
    if (!ids.scaleSet || !scaleSetRefOf(ids.scaleSet)) return null;
    return this.azure.unread(ids.scaleSet) ? 'azure' : null;
  }

  /**
   * The grace is over: the pools still waiting for a source are stored as they are (that source unknown, with the
   * reason), and the stored pools of a context whose MachinePools are not listed yet with its state (see goneReason).
   */
  private endGrace(): void {
    this.starting = false;
    for (const key of this.held) this.dirty.add(key);
    this.held.clear();
    for (const [key, d] of this.previous) {
      if (!goneSince(d.summary) && this.goneReason(d) === 'unlisted') this.dirty.add(key);
    }
  }

  /**
   * The last stored state of each taken pool that left poolscope's view (its MachinePool gone, its context listed;
   * or its context no longer watched) and is not yet recorded so: what that is written on (the analyses kept in
   * memory have no instance table).
   */
  private async goneStates(taken: readonly Taken[]): Promise<Map<string, Gone>> {
    const out = new Map<string, Gone>();
    for (const { key } of taken) {
      const prev = this.previous.get(key);
      if (!prev || goneSince(prev.summary)) continue;
      const reason = this.goneReason(prev);
      if (!reason) continue;
      const stored = await this.opts.store.currentPool(key);
      if (stored && !goneSince(stored.summary)) out.set(key, { state: stored, reason });
    }
    return out;
  }

  /**
   * Forgets a pool the store no longer has (retention dropped it whole, long gone): a MachinePool of its name that
   * comes later is a new pool, as the store sees it.
   */
  forget(key: string): void {
    this.previous.delete(key);
    this.events.forget(key);
    this.readTimes.delete(key);
    this.held.delete(key);
  }

  private dropForBenchmarks(part: 'analyses' | 'azure' | 'sources'): void {
    if (part === 'analyses') this.previous.clear();
    else if (part === 'azure') this.azure.dropReads();
    else {
      for (const s of this.sources.values()) s.stop();
      this.sources.clear();
      this.pendingEvents.clear();
      this.events.dropAll();
    }
  }

  private remember(d: PoolDetail): void {
    this.previous.set(d.summary.key, { ...d, instances: [] });
  }

  private now(): number {
    return this.opts.now?.() ?? Date.now();
  }

  /** Loads the last stored state (so a restart continues without duplicates) and starts sources and cycles. */
  async start(): Promise<void> {
    for (const d of await this.opts.store.resumeWriting()) {
      this.remember(d);
      // A pool of a context this collector does not watch (any more): recorded so at the first cycle.
      if (!goneSince(d.summary) && !this.opts.contexts.includes(d.summary.ref.context)) this.markChanged(d.summary.key);
    }
    this.events.open((await this.opts.store.lastCycle())?.at ?? new Date(this.now()).toISOString());
    for (const ctx of this.opts.contexts) {
      const src = new ContextSource(
        ctx,
        contextKubeConfig(this.opts.kubeconfig, ctx),
        (pools, urgent) => this.onKubeChange(ctx, pools, urgent),
        (pools, ev) => void this.onPoolEvent(ctx, pools, ev),
      );
      this.sources.set(ctx, src);
      await src.start();
    }
    this.graceEnds = performance.now() + (this.opts.startGraceMs ?? DEFAULT_START_GRACE_MS);
    this.schedule();
  }

  /** Queues an Event for the next cycle, unless it is recorded already (see EventInbox). */
  private async onPoolEvent(ctx: string, pools: string[], ev: PoolEvent): Promise<void> {
    for (const p of pools) {
      const key = `${ctx}/${p}`;
      const accepted = this.events.accept(key, ev);
      if (!(typeof accepted === 'boolean' ? accepted : await accepted)) continue;
      this.pendingEvents.set(key, [...(this.pendingEvents.get(key) ?? []), ev]);
      this.markChanged(key);
    }
  }

  /** A Kubernetes change to a pool: dirty, and since when (the first change waiting counts). */
  private markChanged(key: string): void {
    this.dirty.add(key);
    if (!this.changedSince.has(key)) this.changedSince.set(key, performance.now());
  }

  private onKubeChange(ctx: string, pools: string[], urgent = false): void {
    for (const p of pools) {
      const key = `${ctx}/${p}`;
      this.markChanged(key);
      if (urgent) this.urgent.add(key);
      this.azure.poolChanged(key, this.scaleSetIdOf(ctx, p), urgent, this.sources.get(ctx)?.agentPoolOf(p) ?? null);
    }
    // Waiting for the next tick: bring it forward (a running cycle schedules its successor when it ends).
    if (urgent && pools.length > 0 && this.timer && !this.running && this.failedWrites === 0)
      this.schedule(URGENT_DELAY_MS);
  }

  private scaleSetIdOf(ctx: string, pool: string): string | null {
    const src = this.sources.get(ctx);
    return src ? this.azure.scaleSetOf(src, pool) : null;
  }

  /**
   * What a pool's model takes for Azure's VMs: its scale set's last read. An AKS pool's scale set is the one AKS
   * tagged with its agent pool's name in the node resource group (the lane lists that group), unknown before then.
   * A pool AKS says has none (type VirtualMachines) takes its machines list.
   */
  private azureInputOf(aks: PoolInput['aks'], agentPool: string | null, id: string | null): PoolInput['azure'] {
    const machines = agentPool && !id ? this.azure.machinesInputFor(agentPool) : null;
    if (machines) return machines;
    if (aks && !id)
      return { state: 'unknown', reason: "the node resource group's scale set of this agent pool is not found yet" };
    return this.azure.inputFor(id);
  }

  /**
   * How long until the next cycle: the cadence (changes arriving meanwhile are analysed together); none when
   * the last cycle left pools waiting (it took its most: a burst of changes is worked through back to back, the
   * event loop running in between); a few milliseconds when someone acted on a pool (an urgent change: a
   * user's scale or pause shows at once, not at the next tick); and, after writes the store refused, the
   * cadence doubled each time.
   */
  private nextDelay(): number {
    const cadence = this.cadenceMs;
    if (this.failedWrites > 0) return Math.min(WRITE_BACKOFF_MAX_MS, cadence * 2 ** this.failedWrites);
    if (this.backlog && this.dirty.size > 0) return 0;
    return this.urgent.size > 0 ? URGENT_DELAY_MS : cadence;
  }

  /** Schedules the next cycle (see nextDelay). */
  private schedule(delayMs = this.nextDelay()): void {
    if (this.stopped) return;
    const due = performance.now() + delayMs;
    // Brought forward, never pushed back: a stream of urgent changes cannot keep postponing the cycle.
    if (this.timer && this.timerDue <= due) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.cycle().finally(() => this.schedule());
    }, delayMs);
  }

  /** One cycle (Azure reads are started, not awaited); returns the number of pools written. Never runs twice at once. */
  async cycle(): Promise<number> {
    if (this.running) return 0;
    this.running = true;
    const t0 = performance.now();
    let written = 0;
    let error: string | undefined;
    try {
      // Azure reads run beside the cycles: a slow ARM answer (seconds, under load) never holds up Kubernetes
      // changes. What a read brings marks its pools for the next cycle.
      this.azure.startRound((e: Error) => {
        this.lastError = e.message;
      });
      written = await this.analyseAndWrite();
      this.failedWrites = 0;
      this.writesRefused = null;
      await this.recordReads();
      return written;
    } catch (e) {
      error = this.lastError = (e as Error).message;
      return 0;
    } finally {
      this.running = false;
      const changeLags = this.changeLags;
      this.changeLags = [];
      const { analyseMs, writeMs } = this.cycleMs;
      this.cycleMs = { analyseMs: 0, writeMs: 0 };
      this.bus.emit('cycle', {
        seconds: (performance.now() - t0) / 1000,
        pools: written,
        cycle: written > 0 ? this.lastStoredCycle : null,
        azureCalls: this.azure.calls.total,
        changeLags,
        analyseMs,
        writeMs,
        waiting: this.dirty.size,
        ...(error === undefined ? {} : { error, failingWrites: this.failedWrites }),
      } satisfies CycleEvent);
    }
  }

  /**
   * Stores the Azure read times of the pools whose analysis of the read is stored (not waiting for a cycle): a page
   * says how fresh a pool's Azure figures are by it. Those the store refuses wait for the next cycle.
   */
  private async recordReads(): Promise<void> {
    const ready: [string, string][] = [];
    for (const entry of this.readTimes) if (!this.dirty.has(entry[0]) && !this.held.has(entry[0])) ready.push(entry);
    if (!ready.length) return;
    for (const [key] of ready) this.readTimes.delete(key);
    try {
      await this.opts.store.recordAzureReads(ready);
    } catch (e) {
      this.lastError = (e as Error).message;
      // A later read's time, if one came meanwhile, stands.
      for (const [key, at] of ready) if (!this.readTimes.has(key)) this.readTimes.set(key, at);
    }
  }

  /**
   * A pool's analysis and what to write of it (null: nothing changed and no Event came; 'held': a source of it not
   * read since start, while starting).
   */
  private analyse(key: string, at: string, pending: readonly PoolEvent[], gone?: Gone): PoolWrite | null | 'held' {
    const [ctx, ns, name] = key.split('/') as [string, string, string];
    const src = this.sources.get(ctx);
    const input = src?.poolInput(`${ns}/${name}`);
    const prev = this.previous.get(key) ?? null;
    let detail: PoolDetail;
    if (src && input) {
      const id = this.scaleSetIdOf(ctx, `${ns}/${name}`);
      const agentPool = input.aks ? src.agentPoolOf(`${ns}/${name}`) : null;
      if (this.starting && this.unreadSource(ctx, src, input, { scaleSet: id, agentPool })) return 'held';
      // Azure throttled: analyse with the last good data, but report the source as throttled.
      const throttledError = this.azure.throttledError(id, agentPool);
      const kube: SourceState = src.kubeState();
      const aks = input.aks && {
        ...input.aks,
        agentPool: agentPool ? this.azure.agentPoolInputFor(agentPool) : noAgentPool(input),
        ...(agentPool ? { managedCluster: this.azure.managedClusterInputFor(agentPool) } : {}),
      };
      const azure = this.azureInputOf(aks, agentPool, id);
      detail = analyzePool(
        { ...input, azure, ...(aks ? { aks } : {}) },
        {
          now: at,
          previous: prev,
          kube,
          lastChange: prev?.summary.lastChange ?? null,
          frozenCriticalAfterMs: this.opts.frozenCriticalAfterMs,
        },
      );
      if (throttledError !== undefined)
        detail.sources.azure = { state: 'throttled', error: throttledError, retryAfterSeconds: null };
    } else if (gone?.reason === 'unlisted') {
      // Its context not listed since start: its last state, with what the context's source says now.
      detail = {
        ...gone.state,
        at,
        summary: { ...gone.state.summary },
        sources: { ...gone.state.sources, kube: src?.kubeState() ?? gone.state.sources.kube },
      };
    } else if (gone) {
      // Gone from poolscope's view: its last state, marked (its history stays, as of any earlier moment).
      detail = {
        ...gone.state,
        at,
        summary: { ...gone.state.summary, ...(gone.reason === 'deleted' ? { deletedAt: at } : { unwatchedSince: at }) },
      };
    } else {
      return null; // Gone and recorded already, or never stored; or not listed yet.
    }
    const events = pending.map((ev) => ({ at, poolKey: key, from: null, ...eventEntry(ev) }));
    const unchanged = !!prev && this.opts.store.sameAsWritten(detail, prev);
    this.forBenchmarks.analyses.total++;
    if (unchanged) this.forBenchmarks.analyses.unchanged++;
    if (unchanged && events.length === 0) return null;
    const transitions = [...(unchanged ? [] : diffDetails(prev, detail, at)), ...events];
    if (unchanged && prev) return { detail: prev, transitions, detailUnchanged: true };
    detail.summary.lastChange = at;
    return { detail, transitions };
  }

  /**
   * Keeps a pool's state from the store until its sources have been read (a read makes it dirty again) or the grace
   * ends, with its Events; what it waits for is start-up, not a change, so it counts in no change lag.
   */
  private hold(t: Taken): void {
    this.held.add(t.key);
    this.putBackEvents(t);
    t.events = [];
    t.since = undefined;
  }

  /** Puts the Events a cycle took for a pool back, ahead of any that came meanwhile. */
  private putBackEvents(t: Taken): void {
    if (t.events.length) this.pendingEvents.set(t.key, [...t.events, ...(this.pendingEvents.get(t.key) ?? [])]);
  }

  /**
   * Puts a cycle's pools back, ahead of those that became dirty meanwhile, with their Events first; not as
   * urgent (the next tries wait out the backoff: see nextDelay).
   */
  private requeue(taken: readonly Taken[]): void {
    this.failedWrites++;
    this.storeWriteFailures++;
    const later = [...this.dirty];
    this.dirty.clear();
    for (const t of taken) {
      this.dirty.add(t.key);
      if (t.since !== undefined)
        this.changedSince.set(t.key, Math.min(t.since, this.changedSince.get(t.key) ?? Infinity));
      this.putBackEvents(t);
    }
    for (const k of later) this.dirty.add(k);
  }

  /**
   * A cycle's writes, each pool analysed when the store asks for its write (inside the cycle's transaction), so its
   * analysis — the instance table most of it — is garbage once written. Analysed all first and written after, a
   * full cycle's analyses lived through young-generation collections, and their serialised rows were promoted to
   * the old generation (measured at 100k VMs; the instance tables themselves went there because of V8's
   * allocation-site pretenuring, which the image turns off: docs/performance.md). Once the next is asked for, a write
   * is in `written` as the cycle's end needs it (its state without the instance table, its shape); `time.ms` adds
   * up the time spent analysing.
   */
  private *analysed(
    taken: Taken[],
    at: string,
    written: PoolWrite[],
    time: { ms: number },
    gone: ReadonlyMap<string, Gone>,
  ): Generator<PoolWrite> {
    for (const t of taken) {
      const started = performance.now();
      let w: PoolWrite | null | 'held';
      try {
        w = this.analyse(t.key, at, t.events, gone.get(t.key));
      } catch (e) {
        // One pool's analysis failing never holds up the others; its Events wait for its next change (taken from
        // the cycle, so that a refused write does not put them back twice).
        this.lastError = `analysing ${t.key}: ${(e as Error).message}`;
        this.putBackEvents(t);
        t.events = [];
        continue;
      } finally {
        time.ms += performance.now() - started;
      }
      if (w === 'held') {
        this.hold(t);
        continue;
      }
      this.held.delete(t.key);
      if (!w) continue;
      yield w;
      written.push({ ...w, detail: w.detailUnchanged ? w.detail : { ...w.detail, instances: [] } });
    }
  }

  /** The store failed the cycle (a read or its write): its pools and their Events wait for the next one. */
  private storeFailed(taken: Taken[], e: Error): never {
    this.requeue(taken);
    this.writesRefused = { since: this.writesRefused?.since ?? new Date(this.now()).toISOString(), error: e.message };
    throw e;
  }

  private async analyseAndWrite(): Promise<number> {
    if (this.starting && performance.now() >= this.graceEnds) this.endGrace();
    this.sweepGone();
    if (this.dirty.size === 0) {
      this.backlog = false;
      return 0;
    }
    const at = new Date(this.now()).toISOString();
    // At most MAX_POOLS_PER_CYCLE, oldest first; the rest wait for the next cycle (a burst of changes across a
    // whole fleet would otherwise hold every pool's analysis and JSON in memory at once).
    // Pools someone acted on (urgent) go first, ahead of instance churn.
    const limit = this.opts.maxPoolsPerCycle ?? MAX_POOLS_PER_CYCLE;
    const keys: string[] = [];
    for (const k of this.urgent) {
      if (keys.length >= limit) break;
      if (this.dirty.has(k)) keys.push(k);
      else this.urgent.delete(k);
    }
    for (const k of this.dirty) {
      if (keys.length >= limit) break;
      if (!this.urgent.has(k)) keys.push(k);
    }
    this.backlog = keys.length >= limit;
    const taken: Taken[] = keys.map((key) => ({
      key,
      since: this.changedSince.get(key),
      events: this.pendingEvents.get(key) ?? [],
    }));
    for (const k of keys) {
      this.dirty.delete(k);
      this.urgent.delete(k);
      this.changedSince.delete(k);
      this.pendingEvents.delete(k);
    }
    const written: PoolWrite[] = [];
    const analysing = { ms: 0 };
    let gone: Map<string, Gone>;
    try {
      gone = await this.goneStates(taken);
    } catch (e) {
      this.storeFailed(taken, e as Error);
    }
    const analyses = this.analysed(taken, at, written, analysing, gone);
    // The first write decides whether the cycle stores anything (pools found as they were store nothing). Held
    // in a queue the store empties, so that nothing here keeps it once written.
    const head: PoolWrite[] = [];
    {
      const r = analyses.next();
      if (!r.done) head.push(r.value);
    }
    if (head.length) {
      const id = randomUUID();
      const writing = performance.now();
      const analysedBefore = analysing.ms;
      try {
        await this.opts.store.writeCycle(
          { id, at },
          (function* () {
            yield head.pop() as PoolWrite;
            yield* analyses;
          })(),
        );
      } catch (e) {
        // Nothing of the cycle is stored (its write is atomic): its pools and their Events wait for the next one.
        this.storeFailed(taken, e as Error);
      } finally {
        this.cycleMs.writeMs = performance.now() - writing - (analysing.ms - analysedBefore);
        this.cycleMs.analyseMs = analysing.ms;
      }
      this.lastStoredCycle = id;
      for (const w of written) {
        if (!w.detailUnchanged) this.remember(w.detail);
        const summary = w.detailUnchanged
          ? (this.previous.get(w.detail.summary.key) ?? w.detail).summary
          : { ...w.detail.summary, lastChange: at };
        const ev: ChangeEvent = {
          seq: ++this.seq,
          poolKey: w.detail.summary.key,
          at,
          fields: [...new Set(w.transitions.map((t) => t.field))],
          summary,
        };
        this.bus.emit('change', ev);
      }
    } else {
      this.cycleMs.analyseMs = analysing.ms;
    }
    const done = performance.now();
    for (const t of taken) if (t.since !== undefined) this.changeLags.push((done - t.since) / 1000);
    return written.length;
  }

  /** Informer restarts after errors, per context and kind, since start. */
  watchRestarts(): { context: string; kind: string; restarts: number }[] {
    return [...this.sources.entries()].flatMap(([context, src]) =>
      [...src.restarts].map(([kind, restarts]) => ({ context, kind, restarts })),
    );
  }

  /** When the pool's scale set is to be read next, and what that waits for (null: no scale set, or not tracked yet). */
  nextAzureRead(poolKey: string): ReturnType<AzureLane['nextRead']> {
    return this.azure.nextRead(poolKey);
  }

  /** The Azure read budget per subscription+region as the scheduler sees it. */
  budgets(): ReturnType<AzureLane['budgets']> {
    return this.azure.budgets();
  }

  /**
   * Source health for the source bar: management and workload clusters (in the configuration's order), and Azure
   * subscriptions by ID (not in the order their first reads came back, which changes from one start to the next).
   */
  health(): { kube: SourceHealth[]; azure: AzureHealth[] } {
    return { kube: [...this.sources.values()].flatMap((s) => s.health()), azure: this.azure.subscriptions() };
  }

  /** Cycle writes the store refused in a row: 0 once one is stored (the refused cycle's pools are tried again). */
  get storeWritesFailing(): number {
    return this.failedWrites;
  }

  /** Whether the store takes the collector's writes (the pages say so when it does not). */
  storeHealth(): StoreHealth {
    const r = this.writesRefused;
    return r
      ? { state: 'failing', since: r.since, failingWrites: this.failedWrites, error: r.error }
      : { state: 'ok', since: null, failingWrites: 0 };
  }

  /** Every pool as the last cycle analysed it, without the instance tables (read those from the store). */
  pools(): PoolDetail[] {
    return [...this.previous.values()];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    while (this.running) await new Promise((r) => setTimeout(r, 10));
    await this.azure.idle();
    for (const s of this.sources.values()) s.stop();
  }
}
