import 'server-only';
// Prometheus metrics (`GET /api/metrics`): per pool from the stored summaries (so every replica exports the
// same), the collector's own health where this replica collects, Azure calls and budgets, and HTTP latency.
// Gauges are computed at scrape time; nothing here runs between scrapes.

import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { DRIFT_KINDS, goneSince, type PoolSummary } from '@/lib/api-types';
import { REPLICA_SERIES } from '@/lib/timeline';
import type { CycleEvent } from './collector/collector';
import { runtime, type Runtime } from './runtime';
import { informerActivity } from './kube/informer';
import { registry } from './metrics-registry';
import { currentSummaries } from './read-model';

/** The replica counters the timeline charts, as metric label values (`vmssCapacity` → `vmss_capacity`). */
const REPLICA_SOURCES = REPLICA_SERIES.map((r) => ({
  key: r.key,
  source: r.key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
}));

/**
 * The per-pool metrics (labels `context`, `namespace`, `pool`, and the one named here): rendered as text at
 * scrape time, not kept in prom-client, whose label handling and serialising took ~0.3 s of CPU a scrape at
 * 1,000 pools (~20,000 series).
 */
export const POOL_METRICS = {
  info: {
    name: 'poolscope_pool_info',
    help: 'One per pool, labelled with its flavour: self-managed (AzureMachinePool), aks-managed (AzureManagedMachinePool) or aks-aso (AzureASOManagedMachinePool).',
  },
  drift: { name: 'poolscope_pool_drift_items', help: 'providerID drift items of a pool, by kind.' },
  findings: {
    name: 'poolscope_pool_findings',
    help: 'Active diagnosis findings of a pool (1 per finding), by code and severity.',
  },
  frozen: {
    name: 'poolscope_pool_providerid_list_frozen_seconds',
    help: 'How long the MachinePool providerIDList has been frozen behind the readiness gate (0 when it is not).',
  },
  replicas: {
    name: 'poolscope_pool_replicas',
    help: 'Replica counts of a pool by source (desired, vmss_capacity, azure_instances, azure_succeeded, azure_failed, capz, capi, ready_nodes); absent when unknown.',
  },
  ready: {
    name: 'poolscope_pool_ready',
    help: "The infra pool's status.ready (its AzureMachinePool's, or an AKS pool's infra object's; 1 ready, 0 not ready); absent when unknown.",
  },
  paused: { name: 'poolscope_pool_paused', help: 'Whether the pool is paused (Cluster or annotation).' },
} as const;

/** A label value as the text format writes it (backslash, double quote and line feed escaped). */
const labelValue = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** The per-pool metrics of `pools` in the Prometheus text format (every metric's HELP and TYPE, then its samples). */
export function poolMetricsText(pools: readonly PoolSummary[], now: number): string {
  const lines: Record<keyof typeof POOL_METRICS, string[]> = {
    info: [],
    drift: [],
    findings: [],
    frozen: [],
    replicas: [],
    ready: [],
    paused: [],
  };
  for (const p of pools) {
    const l = `context="${labelValue(p.ref.context)}",namespace="${labelValue(p.ref.namespace)}",pool="${labelValue(p.ref.name)}"`;
    lines.info.push(`{${l},flavour="${p.flavour ?? 'self-managed'}"} 1`);
    for (const kind of DRIFT_KINDS) lines.drift.push(`{${l},kind="${kind}"} ${p.driftCounts[kind] ?? 0}`);
    for (const f of p.activeFindings ?? [])
      lines.findings.push(`{${l},code="${labelValue(f.code)}",severity="${labelValue(f.severity)}"} 1`);
    const freeze = (p.activeFindings ?? []).find((f) => f.code === 'readiness-gate-frozen');
    const since = freeze ? Date.parse(freeze.since ?? p.lastChange ?? '') : NaN;
    lines.frozen.push(`{${l}} ${freeze && Number.isFinite(since) ? Math.max(0, (now - since) / 1000) : 0}`);
    for (const r of REPLICA_SOURCES) {
      const v = p.replicas[r.key];
      if (typeof v === 'number') lines.replicas.push(`{${l},source="${r.source}"} ${v}`);
    }
    if (p.ampReady !== null) lines.ready.push(`{${l}} ${p.ampReady ? 1 : 0}`);
    lines.paused.push(`{${l}} ${p.paused ? 1 : 0}`);
  }
  let out = '';
  for (const [k, m] of Object.entries(POOL_METRICS) as [
    keyof typeof POOL_METRICS,
    (typeof POOL_METRICS)[keyof typeof POOL_METRICS],
  ][]) {
    out += `# HELP ${m.name} ${m.help}\n# TYPE ${m.name} gauge\n`;
    for (const line of lines[k]) out += `${m.name}${line}\n`;
    // A blank line between metrics, as prom-client writes them.
    out += '\n';
  }
  return out;
}

export interface Metrics {
  /** Brings every metric up to date, then serialises the per-pool metrics and the registry (Prometheus text format). */
  render(): Promise<string>;
}

/** Adds the pool, collector and Azure metrics to `registry`; `source` gives the runtime and summaries at scrape time. */
export function createMetrics(
  registry: Registry,
  source: { runtime(): Promise<Runtime>; summaries(rt: Runtime): Promise<PoolSummary[]> },
): Metrics {
  const collecting = new Gauge({
    name: 'poolscope_collector_leader',
    help: '1 when this replica runs the collector.',
    registers: [registry],
  });
  const cycleDuration = new Histogram({
    name: 'poolscope_collector_cycle_duration_seconds',
    help: 'Collector cycle duration (Azure reads due, analysis, store write).',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const changeLag = new Histogram({
    name: 'poolscope_collector_change_lag_seconds',
    help: "From a Kubernetes change to a pool (an object or an Event) reaching the collector to the pool's analysis stored.",
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const waiting = new Gauge({
    name: 'poolscope_collector_pools_waiting',
    help: 'Pools changed and waiting for a collector cycle, as the last cycle left them (a backlog after a burst of changes).',
    registers: [registry],
  });
  const storeSize = new Gauge({
    name: 'poolscope_store_size_bytes',
    help: "The timeline store's size on disk (SQLite: the database file's pages, its WAL aside; PostgreSQL: poolscope's tables with their indexes).",
    registers: [registry],
  });
  const storeFree = new Gauge({
    name: 'poolscope_store_free_bytes',
    help: "SQLite: free pages inside the store's file (what pruning freed; new rows take it before the file grows). 0 on PostgreSQL.",
    registers: [registry],
  });
  const pruneFailures = new Counter({
    name: 'poolscope_store_prune_failures_total',
    help: 'Prunes of the store (retention) that failed, on the replica that collects; each is tried again an hour later.',
    registers: [registry],
  });
  const pruned = new Counter({
    name: 'poolscope_store_pruned_rows_total',
    help: 'What retention deleted from the store, on the replica that collects: rows by table (transitions, history, cycles), and deleted pools dropped whole (pools).',
    labelNames: ['table'],
    registers: [registry],
  });
  const lastPrune = new Gauge({
    name: 'poolscope_store_last_prune_timestamp_seconds',
    help: 'When the last prune of the store (retention) completed; until one has, when this replica started pruning; 0 on a replica that does not collect (it does not prune).',
    registers: [registry],
  });
  const pruneCutoff = new Gauge({
    name: 'poolscope_store_retention_cutoff_timestamp_seconds',
    help: 'Where retention last cut the history: POOLSCOPE_RETENTION_DAYS ago, or later when POOLSCOPE_RETENTION_MAX_SIZE made it prune more; 0 on a replica that does not collect.',
    registers: [registry],
  });
  const failingWrites = new Gauge({
    name: 'poolscope_collector_store_failing_writes',
    help: 'Collector writes the store refused in a row (0 once one is stored).',
    registers: [registry],
  });
  const lastCycle = new Gauge({
    name: 'poolscope_collector_last_cycle_timestamp_seconds',
    help: 'When the last collector cycle was stored (any replica).',
    registers: [registry],
  });
  const sourceUp = new Gauge({
    name: 'poolscope_source_up',
    help: '1 when a source (management cluster, workload cluster, Azure subscription) is live.',
    labelNames: ['kind', 'name', 'context'],
    registers: [registry],
  });
  const sourceStale = new Gauge({
    name: 'poolscope_source_stale_seconds',
    help: 'How long a source has not been live (0 when live).',
    labelNames: ['kind', 'name', 'context'],
    registers: [registry],
  });
  const watchRestarts = new Counter({
    name: 'poolscope_watch_restarts_total',
    help: 'Informer restarts after watch or list errors, by context and kind.',
    labelNames: ['context', 'kind'],
    registers: [registry],
  });
  const watchEvents = new Counter({
    name: 'poolscope_watch_events_total',
    help: 'Events delivered by Kubernetes watches (bookmarks not counted), by kind (all contexts and workload clusters together).',
    labelNames: ['kind'],
    registers: [registry],
  });
  const lists = new Counter({
    name: 'poolscope_lists_total',
    help: 'Completed Kubernetes lists (at start, and after a watch was too old), by kind.',
    labelNames: ['kind'],
    registers: [registry],
  });
  const stageSeconds = new Counter({
    name: 'poolscope_collector_stage_seconds_total',
    help: 'Time collector cycles spent analysing pools and writing them to the store, by stage (analyse, write).',
    labelNames: ['stage'],
    registers: [registry],
  });
  const storeStates = new Counter({
    name: 'poolscope_store_pool_states_total',
    help: 'Pool states the collector stored, by history row written (keyframe: the whole state; patch: what changed).',
    labelNames: ['history'],
    registers: [registry],
  });
  const storeWriteFailures = new Counter({
    name: 'poolscope_collector_store_write_failures_total',
    help: "Collector cycles whose write the store refused (a full disk, a database down or read-only); the cycle's changes wait for the next, which backs off.",
    registers: [registry],
  });
  const storeRows = new Counter({
    name: 'poolscope_store_rows_total',
    help: "Rows of the pools' instance and drift tables the store read back while writing, and wrote (inserted, updated, deleted), by operation.",
    labelNames: ['operation'],
    registers: [registry],
  });
  const azureCalls = new Counter({
    name: 'poolscope_azure_calls_total',
    help: 'ARM calls made by the collector, by operation.',
    labelNames: ['operation'],
    registers: [registry],
  });
  const azureThrottled = new Counter({
    name: 'poolscope_azure_throttled_total',
    help: 'ARM answers 429 (throttled), by subscription.',
    labelNames: ['subscription'],
    registers: [registry],
  });
  const budget = new Gauge({
    name: 'poolscope_azure_budget_remaining',
    help: 'Remaining HighCostGetVMScaleSet3Min budget per subscription+region, as Azure last reported it.',
    labelNames: ['budget'],
    registers: [registry],
  });
  const blocked = new Gauge({
    name: 'poolscope_azure_blocked',
    help: '1 while poolscope waits out a Retry-After for a subscription+region.',
    labelNames: ['budget'],
    registers: [registry],
  });

  let listening: object | null = null;
  const gauges = [sourceUp, sourceStale, budget, blocked];
  /** The per-pool metrics as of the last fill. */
  let poolText = '';
  const counters = [
    watchRestarts,
    watchEvents,
    lists,
    storeStates,
    storeRows,
    storeWriteFailures,
    pruneFailures,
    pruned,
    azureCalls,
    azureThrottled,
  ];

  // Fills every runtime-derived metric, right before a scrape is serialised.
  const fill = async (pools: Gauge) => {
    const rt = await source.runtime();
    const now = Date.now();
    for (const g of gauges) g.reset();
    for (const c of counters) c.reset();
    // A deleted (or no longer watched) pool's last state is kept for its history, not exported: its alerts end with it.
    const all = (await source.summaries(rt)).filter((p) => !goneSince(p));
    pools.set(all.length);
    poolText = poolMetricsText(all, now);
    storeSize.set(await rt.store.sizeBytes());
    storeFree.set((await rt.store.freeBytes()) ?? 0);
    const cycle = await rt.store.lastCycle();
    if (cycle) lastCycle.set(Date.parse(cycle.at) / 1000);
    const r = rt.retention;
    lastPrune.set(0);
    pruneCutoff.set(0);
    if (r) {
      lastPrune.set(Date.parse(r.lastPrunedAt) / 1000);
      if (r.cutoff) pruneCutoff.set(Date.parse(r.cutoff) / 1000);
      pruneFailures.inc(r.failures);
      for (const table of ['transitions', 'history', 'cycles', 'pools'] as const)
        pruned.inc({ table }, r.deleted[table]);
    }
    const c = rt.collector;
    collecting.set(c ? 1 : 0);
    if (!c) {
      // A replica that does not collect (or no longer does) has no pools waiting, and writes nothing.
      waiting.set(0);
      failingWrites.set(0);
      return;
    }
    if (listening !== c) {
      listening = c;
      c.bus.on('cycle', (e: CycleEvent) => {
        cycleDuration.observe(e.seconds);
        stageSeconds.inc({ stage: 'analyse' }, e.analyseMs / 1000);
        stageSeconds.inc({ stage: 'write' }, e.writeMs / 1000);
        for (const s of e.changeLags) changeLag.observe(s);
        waiting.set(e.waiting);
      });
    }
    const h = c.health();
    for (const s of h.kube) {
      const labels = { kind: s.kind, name: s.name, context: s.context };
      sourceUp.set(labels, s.state === 'live' ? 1 : 0);
      sourceStale.set(labels, s.state === 'live' ? 0 : Math.max(0, (now - Date.parse(s.since)) / 1000));
    }
    for (const a of h.azure) {
      const labels = { kind: 'azure', name: a.subscription, context: '' };
      sourceUp.set(labels, a.state === 'live' ? 1 : 0);
      sourceStale.set(labels, a.state === 'live' ? 0 : Math.max(0, (now - Date.parse(a.since)) / 1000));
    }
    for (const r of c.watchRestarts()) watchRestarts.inc({ context: r.context, kind: r.kind }, r.restarts);
    for (const [kind, a] of informerActivity()) {
      watchEvents.inc({ kind }, a.watchEvents);
      lists.inc({ kind }, a.lists);
    }
    const w = rt.store.writeStats();
    storeStates.inc({ history: 'keyframe' }, w.keyframes);
    storeStates.inc({ history: 'patch' }, w.patches);
    storeRows.inc({ operation: 'read' }, w.rowsRead);
    storeRows.inc({ operation: 'written' }, w.rowsWritten);
    storeWriteFailures.inc(c.storeWriteFailures);
    failingWrites.set(c.storeWritesFailing);
    for (const [operation, n] of [
      ['vmss_get', c.azure.calls.vmssGet],
      ['vm_list', c.azure.calls.vmList],
      ['instance_view', c.azure.calls.instanceView],
      ['agent_pool_list', c.azure.calls.agentPoolList],
      ['managed_cluster_get', c.azure.calls.managedClusterGet],
      ['scale_set_list', c.azure.calls.scaleSetList],
      ['machines_list', c.azure.calls.machinesList],
    ] as const)
      azureCalls.inc({ operation }, n);
    for (const [subscription, n] of c.azure.throttledBySubscription) azureThrottled.inc({ subscription }, n);
    for (const b of c.budgets()) {
      if (b.remaining !== null) budget.set({ budget: b.key }, b.remaining);
      blocked.set({ budget: b.key }, b.blockedUntil && Date.parse(b.blockedUntil) > now ? 1 : 0);
    }
  };

  const pools = new Gauge({
    name: 'poolscope_pools',
    help: 'Pools poolscope knows (deleted or no longer watched ones aside).',
    registers: [registry],
  });
  // Scrapes of several replicas' worth of viewers: one fill at a time, the next scrape waits for it.
  let filling: Promise<void> = Promise.resolve();

  return {
    async render() {
      filling = filling.catch(() => {}).then(() => fill(pools));
      await filling;
      return poolText + (await registry.metrics());
    },
  };
}

const KEY = Symbol.for('poolscope.metrics');
type Holder = { [KEY]?: Metrics };

/** The process's metrics, on the shared registry, reading the runtime and the fleet summaries. */
export function metrics(): Metrics {
  const g = globalThis as Holder;
  g[KEY] ??= createMetrics(registry(), { runtime, summaries: (rt) => currentSummaries(rt) });
  return g[KEY];
}
