import 'server-only';
// The process's composition root: from the validated environment, once per process (dev hot reload keeps the
// same one), it opens the store, makes the change bus, and starts the collector (on the Lease holder alone with
// leader election) and, where it collects, retention's background pruning (store/retention). Every route and
// page reaches the store and the collector through it. Configuration problems become ConfigError messages.

import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import os from 'node:os';
import { KubeConfig } from '@kubernetes/client-node';
import { AzureReader } from './azure/reader';
import { Scheduler } from './azure/scheduler';
import { ConfigError, env as readEnv, type Env } from './env';
import { log } from './log';
import { openStore, StoreFailingError, type TimelineStore } from './store';
import { listenForChanges } from './store/postgres';
import { Retention, type RetentionStatus } from './store/retention';
import { CHANGE_CHANNEL } from './store/store';
import { contextKubeConfig } from './kube/calls';
import { Collector, type ChangeEvent, type CycleEvent } from './collector/collector';
import { LeaderElector } from './collector/leader';

export interface Runtime {
  env: Env;
  store: TimelineStore;
  /** The running collector; null on a replica that is not the leader, or with POOLSCOPE_COLLECTOR=false. */
  readonly collector: Collector | null;
  /** Retention where this process collects (it prunes the store); null elsewhere. */
  readonly retention: RetentionStatus | null;
  /** Change events, from this process's collector or (followers) from the leader through PostgreSQL. */
  bus: EventEmitter;
  /** This process's change stream: its identity and last sequence number (the SSE `hello`). */
  hello(): { stream: string; seq: number };
  /** True once stop() was called: readiness fails, live streams end. */
  readonly stopping: boolean;
  /** Announces a change made outside the collector (a resync marker) to this process's live viewers. */
  publish(change: Omit<ChangeEvent, 'seq'>): void;
  stop(): Promise<void>;
}

/**
 * Logs a collector cycle at debug (one that stored something is traceable by its id, the store's cycles table),
 * and one that failed (its write refused: its pools wait for the next) at once as an error with the reason.
 */
function logCycle(c: CycleEvent): void {
  const fields = { cycle: c.cycle, pools: c.pools, ms: Math.round(c.seconds * 1000), azureCallsTotal: c.azureCalls };
  if (c.error !== undefined)
    log().error(
      { ...fields, err: c.error, failingWrites: c.failingWrites, waiting: c.waiting },
      'collector cycle failed',
    );
  else log().debug(fields, 'collector cycle');
}

/**
 * What the collector's cycles did, logged at info once a minute (when any stored something): a busy fleet stores
 * several cycles a second, which at one info line each would be hundreds of thousands of lines a day. Each cycle
 * is still logged at debug ({@link logCycle}).
 */
export class CycleLog {
  private cycles = 0;
  private poolStates = 0;
  private slowestMs = 0;
  private analyseMs = 0;
  private writeMs = 0;
  private lagMaxMs = 0;
  private failed = 0;
  private azureAtStart: number | null = null;
  private azureNow = 0;
  private waiting = 0;
  private first: string | null = null;
  private last: string | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly everyMs = 60_000) {}

  readonly record = (c: CycleEvent): void => {
    logCycle(c);
    this.azureAtStart ??= c.azureCalls;
    this.azureNow = c.azureCalls;
    this.waiting = c.waiting;
    if (c.error !== undefined) {
      this.failed++;
      return;
    }
    if (c.pools === 0) return;
    this.cycles++;
    this.poolStates += c.pools;
    this.slowestMs = Math.max(this.slowestMs, c.seconds * 1000);
    this.analyseMs += c.analyseMs;
    this.writeMs += c.writeMs;
    for (const lag of c.changeLags) this.lagMaxMs = Math.max(this.lagMaxMs, lag * 1000);
    this.first ??= c.cycle;
    this.last = c.cycle;
  };

  /** Logs what happened since the last flush, if anything was stored or failed. */
  flush(): void {
    if (this.cycles > 0 || this.failed > 0) {
      log().info(
        {
          cycles: this.cycles,
          failedCycles: this.failed,
          poolStates: this.poolStates,
          slowestCycleMs: Math.round(this.slowestMs),
          analyseMs: Math.round(this.analyseMs),
          writeMs: Math.round(this.writeMs),
          changeToStoredMaxMs: Math.round(this.lagMaxMs),
          azureCalls: this.azureNow - (this.azureAtStart ?? this.azureNow),
          waiting: this.waiting,
          firstCycle: this.first,
          lastCycle: this.last,
        },
        'collector cycles',
      );
    }
    this.cycles = this.poolStates = this.failed = this.slowestMs = this.analyseMs = this.writeMs = this.lagMaxMs = 0;
    this.azureAtStart = this.azureNow;
    this.first = this.last = null;
  }

  start(): void {
    this.timer ??= setInterval(() => this.flush(), this.everyMs);
    this.timer.unref();
  }

  /** Stops the minute's timer and logs what is left. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.flush();
  }
}

/** Loads the kubeconfig (KUBECONFIG, ~/.kube/config, or in-cluster) and resolves which contexts to watch. */
export function resolveContexts(e: Env, kc = new KubeConfig()): { kc: KubeConfig; contexts: string[] } {
  try {
    kc.loadFromDefault();
  } catch (err) {
    throw new ConfigError(
      `poolscope cannot read the kubeconfig${e.KUBECONFIG ? ` at KUBECONFIG=${e.KUBECONFIG}` : ''}: ${(err as Error).message}`,
    );
  }
  const available = kc.getContexts().map((c) => c.name);
  if (available.length === 0)
    throw new ConfigError(
      `poolscope found no kubeconfig contexts${e.KUBECONFIG ? ` in KUBECONFIG=${e.KUBECONFIG}` : ''} and is not running in a cluster.`,
    );
  const c = e.POOLSCOPE_CONTEXTS;
  if (c.mode === 'all') return { kc, contexts: available };
  if (c.mode === 'current') return { kc, contexts: [kc.getCurrentContext() || (available[0] as string)] };
  const unknown = c.names.filter((n) => !available.includes(n));
  if (unknown.length) {
    throw new ConfigError(
      `POOLSCOPE_CONTEXTS names context${unknown.length > 1 ? 's' : ''} the kubeconfig does not have: ${unknown.join(', ')}. Available: ${available.join(', ')}.`,
    );
  }
  return { kc, contexts: c.names };
}

export async function startRuntime(e: Env = readEnv()): Promise<Runtime> {
  let store: TimelineStore;
  try {
    store = await openStore({ databaseUrl: e.DATABASE_URL || undefined, sqlitePath: e.POOLSCOPE_DB_PATH, log: log() });
  } catch (err) {
    // A corrupt file: its message names it and says what to do.
    if (err instanceof StoreFailingError) throw err;
    const where = e.DATABASE_URL ? 'DATABASE_URL' : `POOLSCOPE_DB_PATH=${e.POOLSCOPE_DB_PATH}`;
    throw new ConfigError(`poolscope cannot open its store (${where}): ${(err as Error).message}`);
  }
  const bus = new EventEmitter();
  bus.setMaxListeners(0);
  let seq = 0;
  const stream = randomUUID();
  let collector: Collector | null = null;
  let retention: Retention | null = null;
  let cycleLog: CycleLog | null = null;
  let elector: LeaderElector | null = null;
  let unlisten: (() => Promise<void>) | null = null;
  const forward = (ev: ChangeEvent) => bus.emit('change', { ...ev, seq: ++seq });
  if (e.POOLSCOPE_COLLECTOR) {
    const { kc, contexts } = resolveContexts(e);
    const makeCollector = () =>
      new Collector({
        kubeconfig: kc,
        contexts,
        store,
        azure: new AzureReader({
          endpoint: e.POOLSCOPE_ARM_ENDPOINT,
          disableInstanceDiscovery: e.POOLSCOPE_AZURE_DISABLE_INSTANCE_DISCOVERY,
        }),
        scheduler: new Scheduler({
          fastSeconds: e.POOLSCOPE_FAST_INTERVAL_SECONDS,
          slowSeconds: e.POOLSCOPE_SLOW_INTERVAL_SECONDS,
          budgetShare: e.POOLSCOPE_AZURE_BUDGET_SHARE,
        }),
        frozenCriticalAfterMs: e.POOLSCOPE_FROZEN_CRITICAL_AFTER_SECONDS * 1000,
      });
    const startCollecting = async () => {
      collector = makeCollector();
      collector.bus.on('change', forward);
      // Each cycle at debug, a summary a minute at info, failures at once.
      cycleLog?.stop();
      cycleLog = new CycleLog();
      collector.bus.on('cycle', cycleLog.record);
      cycleLog.start();
      log().info({ contexts }, 'collector started');
      // The writer owns retention: one pruner, even with several replicas on one database.
      const collecting = collector;
      retention = new Retention({
        store,
        retentionDays: e.POOLSCOPE_RETENTION_DAYS,
        log: log(),
        ...(e.POOLSCOPE_RETENTION_MAX_SIZE === undefined ? {} : { maxBytes: e.POOLSCOPE_RETENTION_MAX_SIZE }),
        prune: { onDropped: (key) => collecting.forget(key) },
      });
      retention.start();
      await collector.start();
    };
    if (e.POOLSCOPE_LEADER_ELECTION) {
      elector = new LeaderElector({
        kubeconfig: contextKubeConfig(kc, contexts[0] as string),
        namespace: e.POOLSCOPE_LEADER_NAMESPACE,
        name: e.POOLSCOPE_LEADER_LEASE,
        identity: e.POD_NAME ?? `${os.hostname()}-${process.pid}`,
        onStartedLeading: startCollecting,
        onStoppedLeading: async () => {
          await retention?.stop();
          retention = null;
          await collector?.stop();
          collector = null;
          cycleLog?.stop();
          cycleLog = null;
        },
      });
      elector.start();
    } else {
      await startCollecting();
    }
  }
  // Replicas that do not collect still see the leader's changes, through PostgreSQL.
  if (e.DATABASE_URL && (e.POOLSCOPE_LEADER_ELECTION || !e.POOLSCOPE_COLLECTOR)) {
    unlisten = await listenForChanges(e.DATABASE_URL, CHANGE_CHANNEL, (c) => {
      if (!collector) bus.emit('change', { seq: ++seq, ...c });
    });
  }
  let stopping: Promise<void> | null = null;
  return {
    env: e,
    store,
    get collector() {
      return collector;
    },
    get retention() {
      return retention?.get() ?? null;
    },
    bus,
    hello: () => ({ stream, seq }),
    publish: (change) => {
      bus.emit('change', { ...change, seq: ++seq });
    },
    get stopping() {
      return stopping !== null;
    },
    stop() {
      stopping ??= (async () => {
        // Live streams end first (clients reconnect to another replica); then the collector finishes its cycle.
        bus.emit('shutdown');
        await retention?.stop();
        await elector?.stop();
        await collector?.stop();
        cycleLog?.stop();
        await unlisten?.();
        await store.close();
      })();
      return stopping;
    },
  };
}

const KEY = Symbol.for('poolscope.runtime');
type Holder = { [KEY]?: Promise<Runtime> };

/** The process's runtime, started on first call (kept on globalThis so hot reloads do not start a second). */
export function runtime(): Promise<Runtime> {
  const g = globalThis as Holder;
  g[KEY] ??= startRuntime();
  return g[KEY];
}
