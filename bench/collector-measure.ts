// The collector benchmark's measurement, run in its measuring process (bench/collector-child.ts, bundled as
// production bundles the server; see bench/collector.ts): starts the runtime from the environment, measures the
// steady window and prints one JSON line. Kept apart from the parent's module so the measuring process does not
// load the simulator.

import { statSync } from 'node:fs';
import type { PoolDetail } from '../lib/api-types';
import type { Collector } from '../server/collector/collector';
import type { Runtime } from '../server/runtime';
import { WindowActivity } from './collector-activity';
import { calibrate, cpuFigures, withCalibrationAfter } from './collector-cpu';
import { heapBreakdown, sharedTables } from './collector-heap';
import { collectGarbage, memoryBySpace, memoryTrace, type MemoryTrace } from './collector-memory';
import { probes, type ProbeFn } from './collector-probe';
import { startAllocationProfile, startProfile } from './collector-profiles';
import {
  kubeDelta,
  memoryInWindow,
  probeFigures,
  readEnd,
  readStart,
  sampleWindow,
  writesDelta,
  type WindowEnd,
  type WindowSamples,
  type WindowStart,
} from './collector-window';
import { reportLine } from './report-line';

/** Runs inside the child: start the runtime from the environment, measure, print one JSON line. */
export async function measureInChild(): Promise<void> {
  const run = await startRun();
  const warm = await warmUp(run);
  const settled = await settle(run, warm);
  const measured = await measureWindow(run, warm, settled);
  const atEnd = await endOfRun(run, warm, settled, measured);
  const out = report(run, warm, settled, measured, atEnd);
  // After every figure of the window is read (they would count its second of work).
  withCalibrationAfter(out);
  await run.rt.stop();
  console.log(reportLine(out));
}

/** The measured process's runtime, and its highest RSS from before it started. */
interface Run {
  rt: Runtime;
  col: Collector;
  dbFile: string;
  /** The window's length (s). */
  seconds: number;
  /** When the run started (Date.now()). */
  t0: number;
  /** The highest RSS since the start (bytes), until the window's end. */
  rss: { max: number };
  rssTimer: NodeJS.Timeout;
}

/** Starts the runtime (and its collector) from the environment, watching the RSS from before it. */
async function startRun(): Promise<Run> {
  const { parseEnv } = await import('../server/env');
  const { startRuntime } = await import('../server/runtime');
  const e = parseEnv(process.env);
  const seconds = Number(process.env.POOLSCOPE_BENCH_SECONDS ?? 90);
  const t0 = Date.now();
  // RSS through the whole run (start-up lists included) and through the measurement window (steady state).
  const rss = { max: process.memoryUsage().rss };
  const rssTimer = setInterval(() => {
    rss.max = Math.max(rss.max, process.memoryUsage().rss);
  }, 250);
  const rt = await startRuntime(e);
  const col = rt.collector;
  if (!col) throw new Error('no collector');
  return { rt, col, dbFile: e.POOLSCOPE_DB_PATH, seconds, t0, rss, rssTimer };
}

interface Warm {
  /** ms from the start to the first pool analysed (0 when none was). */
  allKube: number;
  /** Whether every pool was read from Azure within the warm-up's limit. */
  warmedUp: boolean;
  warmupMs: number;
  /** The pools as the warm-up left them; emptied by endOfRun before the memory figures. */
  pools: PoolDetail[];
  scaleSets: number;
}

/** Warm-up: until every pool has been analysed, and (within the Azure budget) read from Azure once. */
async function warmUp({ col, t0 }: Run): Promise<Warm> {
  let allKube = 0;
  const warmupLimit = Number(process.env.POOLSCOPE_BENCH_WARMUP_SECONDS ?? 300) * 2;
  // Every pool of the fleet (the parent says how many): the pools seen so far could be a handful of them, and
  // the window would then time the others' first analyses.
  const expected = Number(process.env.POOLSCOPE_BENCH_POOLS ?? 1);
  let warmedUp = false;
  for (let i = 0; i < warmupLimit; i++) {
    const pools = col.pools();
    if (!allKube && pools.length > 0) allKube = Date.now() - t0;
    // An AzureASOManagedMachinePool has no scale set poolscope reads (its Azure source stays unknown).
    if (
      pools.length >= expected &&
      pools.every((p) => p.sources.azure.state === 'ok' || p.summary.flavour === 'aks-aso')
    ) {
      warmedUp = true;
      break;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  const warmupMs = Date.now() - t0;
  return { allKube, warmedUp, warmupMs, pools: col.pools(), scaleSets: col.azure.scaleSetCount() };
}

interface Settled {
  trace: MemoryTrace | null;
  probe: ProbeFn;
  /** The store's size now (bytes). */
  size(): number;
  /** At the checkpoint before the window: the store's size, ARM calls and 429s since the start. */
  bytes0: number;
  calls0: number;
  /** Of those, AKS's: agent pool lists, managed cluster GETs, and node resource groups' scale set lists. */
  aks0: AksCalls;
  throttled0: number;
  /** The calibration before the window (CPU ms). */
  speed0: number;
}

/**
 * The bench's own steps ahead of the window: a first probe, the store's checkpoint, the calibration, a full GC
 * and a pause, so that neither their work nor what they leave in memory counts in the window.
 */
async function settle({ col, dbFile }: Run, { pools }: Warm): Promise<Settled> {
  const size = await storeSize(dbFile);
  // The memory trace starts before the bench's own steps ahead of the window (a first probe, the store's
  // checkpoint, the calibration, a full GC), and marks each, so that what they leave in memory shows apart from
  // the window.
  const trace = memoryTrace(process.env.POOLSCOPE_BENCH_MEMORY_TRACE);
  trace?.start();
  // Latency: pause a pool through the API and wait for the collector's change event (see probes).
  const probe = probes(col, trace);
  // One probe ahead of the window, not counted. At 100k VMs the process's first request through client-node's
  // CustomObjectsApi is followed by ~30 MB outside V8's heap, held until the next full GC (docs/performance.md,
  // "The first probe"): made here, the full GC below gives it back, and the window's probes find the process as
  // they leave it.
  const last = pools[pools.length - 1];
  if (last) await probe(last);
  trace?.mark('checkpoint');
  const bytes0 = size();
  const calls0 = col.azure.calls.total;
  const aks0 = aksCalls(col);
  const throttled0 = col.azure.calls.throttled;
  // The machine's speed just before the window, measured outside it (its second of work would count in the
  // window's CPU, garbage collections, event-loop delays and change lags).
  trace?.mark('calibration');
  const speed0 = calibrate();
  // The calibration's garbage (~30 MB of V8's heap) and the first probe's are collected before the window, and the
  // window opens 3 s later.
  trace?.mark('full GC');
  collectGarbage();
  trace?.mark('pause');
  await new Promise((r) => setTimeout(r, 3000));
  return { trace, probe, size, bytes0, calls0, aks0, throttled0, speed0 };
}

/**
 * The database's size with its write-ahead log checkpointed into it (the WAL file keeps its size after a
 * checkpoint, so adding it would count reused space).
 */
async function storeSize(dbFile: string): Promise<() => number> {
  const { default: Database } = await import('better-sqlite3');
  return () => {
    const db = new Database(dbFile, { timeout: 10_000 });
    try {
      db.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      db.close();
    }
    return statSync(dbFile).size;
  };
}

interface WindowRecord {
  activity: WindowActivity;
  analyses0: { total: number; unchanged: number };
  start: WindowStart;
  end: WindowEnd;
  samples: WindowSamples;
  hot?: Awaited<ReturnType<Awaited<ReturnType<typeof startProfile>>['stop']>>;
  allocated?: Awaited<ReturnType<Awaited<ReturnType<typeof startAllocationProfile>>['stop']>>;
}

/** The measurement window: the counters read at its edges, its activity recorded and its seconds sampled. */
async function measureWindow(
  { rt, col, seconds, rssTimer }: Run,
  { pools }: Warm,
  settled: Settled,
): Promise<WindowRecord> {
  const { informerActivity } = await import('../server/kube/informer');
  const profile = process.env.POOLSCOPE_BENCH_CPU_PROFILE ? await startProfile() : null;
  const allocations = process.env.POOLSCOPE_BENCH_ALLOC_PROFILE ? await startAllocationProfile() : null;
  const analyses0 = { ...col.forBenchmarks.analyses };
  const activity = new WindowActivity(col);
  const counters = { informerActivity, store: rt.store, col };
  const start = readStart(counters);
  activity.open();
  const samples = await sampleWindow(pools, settled.probe, start.wall + seconds * 1000, settled.trace);
  const end = readEnd(counters, start);
  activity.stop();
  clearInterval(rssTimer);
  settled.trace?.stop();
  const hot = profile ? await profile.stop(process.env.POOLSCOPE_BENCH_CPU_PROFILE as string) : undefined;
  const allocated = allocations
    ? await allocations.stop(process.env.POOLSCOPE_BENCH_ALLOC_PROFILE as string, end.wallMs)
    : undefined;
  return { activity, analyses0, start, end, samples, hot, allocated };
}

interface AtEnd {
  callsPerScaleSetHour: number;
  /**
   * AKS pools, and the agent pool lists in the window (one a managed cluster, for all its pools): per pool per hour,
   * and per 3 minutes (AKS's budget window).
   */
  aks: ReturnType<typeof aksFigures>;
  stats: Awaited<ReturnType<Runtime['store']['stats']>>;
  poolCount: number;
  readAtStart: number;
  readAtEnd: number;
  memoryAtEnd: Record<string, unknown>;
  tableFill: Record<string, { size: number; limit: number }>;
  heap?: Record<string, unknown>;
}

/**
 * The AKS pools' reads in the window: one list a managed cluster brings all its pools, so a pool's AKS figures are
 * as fresh as its cluster's lists are frequent. Null without AKS pools.
 */
interface AksCalls {
  lists: number;
  gets: number;
  scaleSetLists: number;
}

const aksCalls = (col: Run['col']): AksCalls => ({
  lists: col.azure.calls.agentPoolList,
  gets: col.azure.calls.managedClusterGet,
  scaleSetLists: col.azure.calls.scaleSetList,
});

/**
 * The AKS reads in the window: agent pool lists per managed cluster, and all AKS calls (lists and managed cluster
 * GETs, one budget) per 3 minutes; the node resource groups' scale set lists (Compute) per cluster an hour.
 */
function aksFigures(pools: Warm['pools'], calls: AksCalls, wallMs: number) {
  const aks = pools.filter((p) => (p.summary.flavour ?? 'self-managed') !== 'self-managed');
  if (!aks.length) return null;
  const clusters = new Set(aks.map((p) => `${p.summary.ref.context}/${p.summary.clusterName}`)).size;
  const per = (n: number) => Math.round(n * 10) / 10;
  const hours = wallMs / 3_600_000;
  return {
    pools: aks.length,
    clusters,
    listsPerClusterPerHour: per(calls.lists / clusters / hours),
    managedClusterGetsPerClusterPerHour: per(calls.gets / clusters / hours),
    aksCallsPer3Min: per((calls.lists + calls.gets) / (wallMs / 180_000)),
    nodeResourceGroupListsPerClusterPerHour: per(calls.scaleSetLists / clusters / hours),
  };
}

/** After the window: the figures read once (the store's, the pools', memory), the heap breakdown last. */
async function endOfRun({ rt, col }: Run, warm: Warm, settled: Settled, { end }: WindowRecord): Promise<AtEnd> {
  const hours = end.wallMs / 3_600_000;
  const now = aksCalls(col);
  const inWindow = {
    lists: now.lists - settled.aks0.lists,
    gets: now.gets - settled.aks0.gets,
    scaleSetLists: now.scaleSetLists - settled.aks0.scaleSetLists,
  };
  const scaleSetCalls =
    col.azure.calls.total - settled.calls0 - inWindow.lists - inWindow.gets - inWindow.scaleSetLists;
  const callsPerScaleSetHour = scaleSetCalls / Math.max(1, warm.scaleSets) / hours;
  const aks = aksFigures(warm.pools, inWindow, end.wallMs);
  const stats = await rt.store.stats();
  const poolCount = warm.pools.length;
  const readAtStart = warm.pools.filter((p) => p.sources.azure.state === 'ok').length;
  const readAtEnd = col.pools().filter((p) => p.sources.azure.state === 'ok').length;
  // Released before the heap breakdown, which would otherwise count the analyses as held by the bench.
  warm.pools = [];
  const memoryAtEnd = memoryBySpace();
  // The process-wide tables (bounded; past the bound each starts afresh): how full the window left them. Gone VMs'
  // IDs leave them (lib/forget); any it misses stay until the bound, past the end of any window.
  const tables = sharedTables();
  const tableFill = Object.fromEntries(Object.entries(tables).map(([k, t]) => [k, { size: t.size, limit: t.limit }]));
  const heap = process.env.POOLSCOPE_BENCH_BREAKDOWN === '1' ? await heapBreakdown(col, tables) : undefined;
  return { callsPerScaleSetHour, aks, stats, poolCount, readAtStart, readAtEnd, memoryAtEnd, tableFill, heap };
}

/** The report line's figures, in their order (the calibration after the window is filled in after). */
function report({ col, rss }: Run, warm: Warm, settled: Settled, w: WindowRecord, atEnd: AtEnd) {
  const { wallMs } = w.end;
  const analysed = col.forBenchmarks.analyses.total - w.analyses0.total;
  const calls = atEnd.callsPerScaleSetHour;
  return {
    pools: atEnd.poolCount,
    scaleSets: warm.scaleSets,
    firstAnalysisSeconds: Math.round(warm.allKube / 100) / 10,
    allReadFromAzureSeconds: warm.warmedUp ? Math.round(warm.warmupMs / 100) / 10 : null,
    poolsReadFromAzureAtStart: atEnd.readAtStart,
    // Pools whose scale set was first read during the window: their first instance rows are in the store bytes.
    poolsFirstReadFromAzureInWindow: atEnd.readAtEnd - atEnd.readAtStart,
    ...memoryInWindow(rss.max, w.samples),
    // Pool analyses in the window, and the share that found the pool unchanged (nothing written).
    analysesPerSecond: Math.round((analysed / wallMs) * 10_000) / 10,
    unchangedAnalysesShare:
      Math.round(((col.forBenchmarks.analyses.unchanged - w.analyses0.unchanged) / Math.max(1, analysed)) * 100) / 100,
    gcInWindow: w.activity.gcInWindow(),
    ...cpuFigures(w.end.cpu, { start: w.start.threads, end: w.end.threads }, wallMs, settled.speed0),
    // What the Kubernetes watches did in the window, by kind: events per second, lists (after a 410), 410s, and
    // informer restarts after errors (all kinds together).
    kubeInWindow: { ...kubeDelta(w.start.kube, w.end.kube, wallMs), restarts: w.end.restarts - w.start.restarts },
    ...probeFigures(w.samples),
    busyCycles: w.activity.busyCycles(),
    // What analysing and writing cost in the window: each stage's main-thread ms per second, and per pool state
    // stored how it was written (see the store's WriteStats).
    writesInWindow: writesDelta(w.start.writes, w.end.writes, w.activity.stageMs, analysed, wallMs),
    eventLoopDelayMs: w.activity.eventLoopDelayMs(),
    ...w.activity.changeFigures(),
    armCallsPerScaleSetPerHour: Math.round(calls),
    naiveArmCallsPerScaleSetPerHour: 480,
    ratioToNaive: Math.round((calls / 480) * 1000) / 1000,
    throttled429: col.azure.calls.throttled - settled.throttled0,
    // AKS pools' agent pool lists (all the fleet's AKS pools share one subscription's AKS budget: 190 per 3 minutes
    // as poolscope assumes it, 60 a minute as the simulator has it); their 429s are counted in throttled429.
    ...(atEnd.aks ? { aksAgentPoolLists: atEnd.aks } : {}),
    storeBytesPerPoolPerDay: Math.round(
      ((settled.size() - settled.bytes0) / Math.max(1, atEnd.poolCount)) * (86_400_000 / wallMs),
    ),
    store: atEnd.stats,
    memoryAtEndMB: atEnd.memoryAtEnd,
    sharedTables: atEnd.tableFill,
    ...(atEnd.heap ? { heapBreakdownMB: atEnd.heap } : {}),
    ...(w.hot ? { cpuProfile: w.hot } : {}),
    ...(w.allocated ? { allocationProfile: w.allocated } : {}),
  };
}
