// The collector benchmark's measurement, run in its measuring process (bench/collector-child.ts, bundled as
// production bundles the server; see bench/collector.ts): starts the runtime from the environment, measures the
// steady window and prints one JSON line. Kept apart from the parent's module so the measuring process does not
// load the simulator.

import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { PerformanceObserver, constants, monitorEventLoopDelay } from 'node:perf_hooks';
import v8 from 'node:v8';
import { CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { CycleEvent } from '../server/collector/collector';
import type { InformerActivity } from '../server/kube/informer';
import type { WriteStats } from '../server/store/store';
import { parseCache } from '../lib/provider-id';
import { rowPlaces } from '../lib/row-order';
import { internTable } from '../lib/slim';
import { pct } from './pct';
import { reportLine } from './report-line';

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/** A garbage collection's kind: a scavenge of the young generation (minor), a full mark-compact (major), … */
function gcKind(e: PerformanceEntry): string {
  return GC_KINDS[(e as unknown as { detail?: { kind?: number } }).detail?.kind ?? -1] ?? 'other';
}

/** The process-wide bounded tables of lib/: shared strings, parsed providerIDs, the instance table's places. */
function sharedTables() {
  return { interned: internTable(), parsedProviderIds: parseCache(), rowPlaces: rowPlaces() };
}

/** Runs inside the child: start the runtime from the environment, measure, print one JSON line. */
export async function measureInChild(): Promise<void> {
  const { parseEnv } = await import('../server/env');
  const { startRuntime } = await import('../server/runtime');
  const e = parseEnv(process.env);
  const seconds = Number(process.env.POOLSCOPE_BENCH_SECONDS ?? 90);
  const t0 = Date.now();
  // RSS through the whole run (start-up lists included) and through the measurement window (steady state).
  let rssMax = process.memoryUsage().rss;
  const rssTimer = setInterval(() => {
    rssMax = Math.max(rssMax, process.memoryUsage().rss);
  }, 250);
  const rt = await startRuntime(e);
  const col = rt.collector;
  if (!col) throw new Error('no collector');
  // Warm-up: until every pool has been analysed, and (within the Azure budget) read from Azure once.
  let allKube = 0;
  const warmupLimit = Number(process.env.POOLSCOPE_BENCH_WARMUP_SECONDS ?? 300) * 2;
  let warmedUp = false;
  for (let i = 0; i < warmupLimit; i++) {
    const pools = col.pools();
    if (!allKube && pools.length > 0) allKube = Date.now() - t0;
    if (pools.length > 0 && pools.every((p) => p.sources.azure.state === 'ok')) {
      warmedUp = true;
      break;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  const warmupMs = Date.now() - t0;
  // `let`: released before the heap breakdown, which would otherwise count the analyses as held by the bench.
  let pools = col.pools();
  const scaleSets = col.azure.scaleSetCount();
  const dbFile = e.POOLSCOPE_DB_PATH;
  // The database's size with its write-ahead log checkpointed into it (the WAL file keeps its size after a
  // checkpoint, so adding it would count reused space).
  const { default: Database } = await import('better-sqlite3');
  const size = () => {
    const db = new Database(dbFile, { timeout: 10_000 });
    try {
      db.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      db.close();
    }
    return statSync(dbFile).size;
  };
  // The memory trace starts before the bench's own steps ahead of the window (a first probe, the store's
  // checkpoint, the calibration, a full GC), and marks each, so that what they leave in memory shows apart from
  // the window.
  const trace = memoryTrace(process.env.POOLSCOPE_BENCH_MEMORY_TRACE);
  trace?.start();
  // Latency: pause a pool through the API and wait for the collector's change event (see probe below).
  // When the watch event of the pool being patched reached the collector (its sources call onKubeChange): splits
  // the latency into the API server's delivery and the collector's own part.
  let watching: string | null = null;
  let arrivedAt = 0;
  const inside = col as unknown as { onKubeChange(ctx: string, pools: string[], urgent?: boolean): void };
  const onKubeChange = inside.onKubeChange.bind(col);
  inside.onKubeChange = (ctx, changed, urgent) => {
    if (watching && !arrivedAt && urgent && changed.some((p) => `${ctx}/${p}` === watching)) arrivedAt = Date.now();
    onKubeChange(ctx, changed, urgent);
  };
  type Probe = {
    seen: { requestMs: number; latencyMs: number; arrival: { deliveryMs: number; storeMs: number } | null } | null;
    timedOut: boolean;
    errors: string[];
  };
  /**
   * Pauses a pool through the Kubernetes API, waits (up to 10 s) for the collector to store the `paused`
   * transition, and resumes it. Pausing is a change the collector records without making the world scale anything.
   */
  const probe = async (p: (typeof pools)[number]): Promise<Probe> => {
    const errors: string[] = [];
    let result: Probe['seen'] = null;
    let timedOut = false;
    trace?.mark('probe: client');
    const k = new KubeConfig();
    k.loadFromDefault();
    k.setCurrentContext(p.summary.ref.context);
    const api = k.makeApiClient(CustomObjectsApi);
    const t = Date.now();
    let seenAt = 0;
    watching = p.summary.key;
    arrivedAt = 0;
    let seen = () => {};
    const got = new Promise<void>((resolve) => {
      seen = resolve;
    });
    const on = (ev: { poolKey: string; fields: string[] }) => {
      if (ev.poolKey === p.summary.key && ev.fields.includes('paused')) {
        seenAt = Date.now();
        seen();
      }
    };
    col.bus.on('change', on);
    const patch = (paused: boolean) =>
      api.patchNamespacedCustomObject(
        {
          group: 'cluster.x-k8s.io',
          version: 'v1beta2',
          plural: 'machinepools',
          namespace: p.summary.ref.namespace,
          name: p.summary.ref.name,
          body: { metadata: { annotations: { 'cluster.x-k8s.io/paused': paused ? 'true' : null } } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    try {
      trace?.mark('probe: pause');
      await patch(true);
      trace?.mark('probe: paused');
      // The change is committed when the API server answers: from then on the wait is the collector's (the
      // API server itself can take seconds when the simulator's controllers are busy with a 100k-VM fleet).
      const committed = Date.now();
      await Promise.race([got, new Promise((r) => setTimeout(r, 10_000))]);
      trace?.mark('probe: stored');
      if (seenAt)
        result = {
          requestMs: seenAt - t,
          latencyMs: Math.max(0, seenAt - committed),
          arrival: arrivedAt ? { deliveryMs: Math.max(0, arrivedAt - committed), storeMs: seenAt - arrivedAt } : null,
        };
      else timedOut = true;
    } catch (err) {
      errors.push((err as Error).message);
    } finally {
      col.bus.off('change', on);
      watching = null;
    }
    // Undone (also after a failed request, which may have been applied), retried until the API server takes it.
    for (let attempt = 0; ; attempt++) {
      try {
        await patch(false);
        trace?.mark('probe: resumed');
        break;
      } catch (err) {
        if (attempt >= 5) throw err;
        errors.push((err as Error).message);
        await new Promise((r) => setTimeout(r, 2000));
      }
    }
    return { seen: result, timedOut, errors };
  };
  // One probe ahead of the window, not counted. At 100k VMs the process's first request through client-node's
  // CustomObjectsApi is followed by ~30 MB outside V8's heap, held until the next full GC (docs/performance.md,
  // "The first probe"): made here, the full GC below gives it back, and the window's probes find the process as
  // they leave it.
  const last = pools[pools.length - 1];
  if (last) await probe(last);
  trace?.mark('checkpoint');
  const bytes0 = size();
  const calls0 = col.azure.calls.total;
  const throttled0 = col.azure.calls.throttled;
  // The machine's speed just before the window, measured outside it (its second of work would count in the
  // window's CPU, garbage collections, event-loop delays and change lags).
  const { informerActivity } = await import('../server/kube/informer');
  trace?.mark('calibration');
  const speed0 = calibrate();
  // The calibration's garbage (~30 MB of V8's heap) and the first probe's are collected before the window, and the
  // window opens 3 s later.
  trace?.mark('full GC');
  collectGarbage();
  trace?.mark('pause');
  await new Promise((r) => setTimeout(r, 3000));
  const profile = process.env.POOLSCOPE_BENCH_CPU_PROFILE ? await startProfile() : null;
  const allocations = process.env.POOLSCOPE_BENCH_ALLOC_PROFILE ? await startAllocationProfile() : null;
  const analyses0 = { ...col.forBenchmarks.analyses };
  // What happened in the last few seconds (cycles, long collections), and a copy of it as the slowest change in
  // the window was stored: what that change waited behind.
  const recent: { end: number; what: string }[] = [];
  let slowest: { lagMs: number; before: string[] } | null = null;
  let lastCycleEnd = 0;
  /** When the window began (performance.now()). */
  let window0 = Infinity;
  let longestGap: { ms: number; failedWrites: number; lastError: string | null } = {
    ms: 0,
    failedWrites: 0,
    lastError: null,
  };
  const inner = col as unknown as { failedWrites: number };
  const keepRecent = (now: number) => {
    while (recent.length && (recent[0] as { end: number }).end < now - 5000) recent.shift();
  };
  // Garbage collection in the window, by kind (a scavenge of the young generation, or a full mark-compact).
  // How late the event loop ran what was due (a cycle's timer, a watch's data): its delays in the window.
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const gcStats: Record<string, { count: number; ms: number }> = {};
  const gcObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = gcKind(e);
      const g = (gcStats[kind] ??= { count: 0, ms: 0 });
      g.count++;
      g.ms += e.duration;
      if (e.duration >= 5)
        recent.push({ end: e.startTime + e.duration, what: `gc ${kind} ${Math.round(e.duration)} ms` });
    }
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  // Every Kubernetes change in the window (the churn's, not only the paused probes): how long it waited to be stored.
  const changeLags: number[] = [];
  // And the cycles that analysed something: how long each took, and how many pools it wrote.
  const cycleMs: number[] = [];
  const cyclePools: number[] = [];
  // The part of each lag spent before the cycle that stored it began (waiting for a cycle, or behind others).
  const changeWaits: number[] = [];
  // Time the cycles spent analysing and writing (main thread).
  const stageMs = { analyse: 0, write: 0 };
  const onCycle = (e: CycleEvent) => {
    stageMs.analyse += e.analyseMs;
    stageMs.write += e.writeMs;
    const now = performance.now();
    // Changes that reached the collector before the window are not counted: the checkpoint and calibration just
    // before it hold the event loop up to a second (the bench's own doing), and the first cycle after stored them.
    const lags = e.changeLags.filter((s) => now - s * 1000 >= window0);
    for (const s of lags) {
      changeLags.push(s * 1000);
      changeWaits.push(Math.max(0, s - e.seconds) * 1000);
    }
    if (e.changeLags.length || e.pools) {
      cycleMs.push(e.seconds * 1000);
      cyclePools.push(e.pools);
    }
    keepRecent(now);
    // The longest time without a cycle ending (the cadence is 250 ms; a backlog runs them back to back).
    if (lastCycleEnd && now - lastCycleEnd > longestGap.ms)
      longestGap = { ms: Math.round(now - lastCycleEnd), failedWrites: inner.failedWrites, lastError: col.lastError };
    lastCycleEnd = now;
    recent.push({
      end: now,
      what:
        e.changeLags.length || e.pools || e.waiting
          ? `cycle ${Math.round(e.seconds * 1000)} ms: ${e.changeLags.length} changed, ${e.pools} written, ${e.waiting} waiting, analyse ${Math.round(e.analyseMs)} ms, write ${Math.round(e.writeMs)} ms`
          : `cycle ${Math.round(e.seconds * 1000)} ms: nothing to do`,
    });
    const lag = Math.max(0, ...lags) * 1000;
    if (lag > (slowest?.lagMs ?? 0))
      slowest = {
        lagMs: Math.round(lag),
        before: recent.filter((r) => r.end >= now - lag - 500).map((r) => `${Math.round(r.end - now)} ms: ${r.what}`),
      };
  };
  col.bus.on('cycle', onCycle);
  const kube0 = informerActivity();
  const writes0 = rt.store.writeStats();
  const restarts0 = restartCount(col);
  const cpu0 = process.cpuUsage();
  const threads0 = threadCpu();
  const wall0 = Date.now();
  window0 = performance.now();
  const latencies: number[] = [];
  const requestLatencies: number[] = [];
  let timedOut = 0;
  /** Patches the simulated API server did not take (it can stall for seconds under a 100k churn). */
  const patchErrors: string[] = [];
  const samples = Math.min(20, pools.length);
  const arrivals: number[] = [];
  const deliveries: number[] = [];
  const end = wall0 + seconds * 1000;
  trace?.mark('window');
  const rssWindow: number[] = [];
  const heapWindow: { total: number; used: number; external: number }[] = [];
  for (let i = 0; Date.now() < end; i++) {
    const mem = process.memoryUsage();
    rssWindow.push(mem.rss);
    heapWindow.push({ total: mem.heapTotal, used: mem.heapUsed, external: mem.external });
    if (i < samples) {
      const p = pools[i % pools.length];
      if (!p) break;
      const r = await probe(p);
      if (r.seen) {
        requestLatencies.push(r.seen.requestMs);
        latencies.push(r.seen.latencyMs);
        if (r.seen.arrival) {
          deliveries.push(r.seen.arrival.deliveryMs);
          arrivals.push(r.seen.arrival.storeMs);
        }
      }
      if (r.timedOut) timedOut++;
      patchErrors.push(...r.errors);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  const wallMs = Date.now() - wall0;
  const cpu = process.cpuUsage(cpu0);
  const threads1 = threadCpu();
  const kube1 = informerActivity();
  const writes1 = rt.store.writeStats();
  const restarts1 = restartCount(col);
  gcObserver.disconnect();
  loopDelay.disable();
  col.bus.off('cycle', onCycle);
  clearInterval(rssTimer);
  trace?.stop();
  const hot = profile ? await profile.stop(process.env.POOLSCOPE_BENCH_CPU_PROFILE as string) : undefined;
  const allocated = allocations
    ? await allocations.stop(process.env.POOLSCOPE_BENCH_ALLOC_PROFILE as string, wallMs)
    : undefined;
  const hours = wallMs / 3_600_000;
  const callsPerScaleSetHour = (col.azure.calls.total - calls0) / Math.max(1, scaleSets) / hours;
  const stats = await rt.store.stats();
  const poolCount = pools.length;
  const readAtStart = pools.filter((p) => p.sources.azure.state === 'ok').length;
  const readAtEnd = col.pools().filter((p) => p.sources.azure.state === 'ok').length;
  pools = [];
  const memoryAtEnd = memoryBySpace();
  // The process-wide tables (bounded; past the bound each starts afresh): how full the window left them. Gone VMs'
  // IDs leave them (lib/forget); any it misses stay until the bound, past the end of any window.
  const tables = sharedTables();
  const tableFill = Object.fromEntries(Object.entries(tables).map(([k, t]) => [k, { size: t.size, limit: t.limit }]));
  const heap = process.env.POOLSCOPE_BENCH_BREAKDOWN === '1' ? await heapBreakdown(col, tables) : undefined;
  const out = {
    pools: poolCount,
    scaleSets,
    firstAnalysisSeconds: Math.round(allKube / 100) / 10,
    allReadFromAzureSeconds: warmedUp ? Math.round(warmupMs / 100) / 10 : null,
    poolsReadFromAzureAtStart: readAtStart,
    // Pools whose scale set was first read during the window: their first instance rows are in the store bytes.
    poolsFirstReadFromAzureInWindow: readAtEnd - readAtStart,
    rssMaxFromStartMB: Math.round(rssMax / 2 ** 20),
    steadyRssMB: {
      p50: Math.round(pct(rssWindow, 50) / 2 ** 20),
      max: Math.round(Math.max(...rssWindow) / 2 ** 20),
      atMax: atMax(rssWindow, heapWindow),
    },
    // What of the RSS is V8's heap (reserved, and in use between collections) and memory outside it (buffers).
    steadyHeapMB: {
      totalP50: Math.round(
        pct(
          heapWindow.map((h) => h.total),
          50,
        ) /
          2 ** 20,
      ),
      usedP50: Math.round(
        pct(
          heapWindow.map((h) => h.used),
          50,
        ) /
          2 ** 20,
      ),
      externalP50: Math.round(
        pct(
          heapWindow.map((h) => h.external),
          50,
        ) /
          2 ** 20,
      ),
    },
    // Pool analyses in the window, and the share that found the pool unchanged (nothing written).
    analysesPerSecond: Math.round(((col.forBenchmarks.analyses.total - analyses0.total) / wallMs) * 10_000) / 10,
    unchangedAnalysesShare:
      Math.round(
        ((col.forBenchmarks.analyses.unchanged - analyses0.unchanged) /
          Math.max(1, col.forBenchmarks.analyses.total - analyses0.total)) *
          100,
      ) / 100,
    gcInWindow: Object.fromEntries(
      Object.entries(gcStats).map(([k, g]) => [k, { count: g.count, ms: Math.round(g.ms) }]),
    ),
    steadyCpuPercentOfOneCore: Math.round(((cpu.user + cpu.system) / 1000 / wallMs) * 1000) / 10,
    // The same, by thread (Linux): the main thread runs the collector's JavaScript; V8's workers mostly GC.
    ...(threads0 && threads1 ? { steadyCpuPercentByThread: cpuByThread(threads0, threads1, wallMs) } : {}),
    // CPU ms of a fixed piece of JavaScript run just before and just after the window, beside the simulator as the
    // collector runs: the machine's speed then (it varied twofold on these shared machines), to compare runs by.
    calibrationCpuMs: { before: speed0, after: NaN },
    // The CPU share per millisecond of the calibration's mean: the code's cost with the machine's speed taken out
    // (runs on machines of one kind gave 0.36–0.41 for the same code, 0.27–0.31 since the analysis stopped judging
    // instances by an Azure read older than them), to compare runs on different machines by.
    cpuPercentPerCalibrationMs: NaN,
    // What the Kubernetes watches did in the window, by kind: events per second, lists (after a 410), 410s, and
    // informer restarts after errors (all kinds together).
    kubeInWindow: { ...kubeDelta(kube0, kube1, wallMs), restarts: restarts1 - restarts0 },
    // From the API server's answer to the stored transition, and from before the request (API server included).
    changeToTransitionMs: {
      samples: latencies.length,
      p50: pct(latencies, 50),
      p95: pct(latencies, 95),
      notSeenWithin10s: timedOut,
      patchErrors: patchErrors.length,
      ...(patchErrors.length ? { firstPatchError: patchErrors[0] } : {}),
    },
    requestToTransitionMs: { p50: pct(requestLatencies, 50), p95: pct(requestLatencies, 95) },
    // The two parts of changeToTransitionMs: the API server's answer → its watch event reaching the collector, and
    // that event → the stored transition (the collector's own).
    changeToWatchEventMs: { p50: pct(deliveries, 50), p95: pct(deliveries, 95) },
    watchEventToTransitionMs: {
      samples: arrivals.length,
      p50: pct(arrivals, 50),
      p95: pct(arrivals, 95),
      max: Math.max(...arrivals),
    },
    // The cycles that analysed something: their duration and the pools they wrote.
    busyCycles: {
      count: cycleMs.length,
      ms: {
        p50: Math.round(pct(cycleMs, 50)),
        p95: Math.round(pct(cycleMs, 95)),
        max: Math.round(cycleMs.reduce((m, x) => Math.max(m, x), 0)),
      },
      poolsWritten: {
        p50: pct(cyclePools, 50),
        p95: pct(cyclePools, 95),
        max: cyclePools.reduce((m, x) => Math.max(m, x), 0),
      },
    },
    // What analysing and writing cost in the window: each stage's main-thread ms per second, and per pool state
    // stored how it was written (see the store's WriteStats).
    writesInWindow: writesDelta(writes0, writes1, stageMs, col.forBenchmarks.analyses.total - analyses0.total, wallMs),
    eventLoopDelayMs: {
      p50: Math.round(loopDelay.percentile(50) / 1e6),
      p99: Math.round(loopDelay.percentile(99) / 1e6),
      max: Math.round(loopDelay.max / 1e6),
    },
    // Every pool analysed after a Kubernetes change in the window (churn included): from the first change
    // reaching the collector to the pool's analysis stored (the collector's poolscope_collector_change_lag_seconds),
    // and the part of it before the storing cycle began.
    everyChangeToStoredMs: {
      waitP50: Math.round(pct(changeWaits, 50)),
      waitP95: Math.round(pct(changeWaits, 95)),
      samples: changeLags.length,
      p50: Math.round(pct(changeLags, 50)),
      p95: Math.round(pct(changeLags, 95)),
      p99: Math.round(pct(changeLags, 99)),
      max: Math.round(changeLags.reduce((m, x) => Math.max(m, x), 0)),
    },
    // The slowest of them, and what the collector did in the time it waited (ms before it was stored).
    slowestChange: slowest,
    // The longest time between two cycles' ends, and the store's refusals in a row then (cycles back off after one).
    longestCycleGapMs: longestGap,
    armCallsPerScaleSetPerHour: Math.round(callsPerScaleSetHour),
    naiveArmCallsPerScaleSetPerHour: 480,
    ratioToNaive: Math.round((callsPerScaleSetHour / 480) * 1000) / 1000,
    throttled429: col.azure.calls.throttled - throttled0,
    storeBytesPerPoolPerDay: Math.round(((size() - bytes0) / Math.max(1, poolCount)) * (86_400_000 / wallMs)),
    store: stats,
    memoryAtEndMB: memoryAtEnd,
    sharedTables: tableFill,
    ...(heap ? { heapBreakdownMB: heap } : {}),
    ...(hot ? { cpuProfile: hot } : {}),
    ...(allocated ? { allocationProfile: allocated } : {}),
  };
  // After every figure of the window is read (they would count its second of work).
  out.calibrationCpuMs.after = calibrate();
  out.cpuPercentPerCalibrationMs =
    Math.round(
      (out.steadyCpuPercentOfOneCore / ((out.calibrationCpuMs.before + out.calibrationCpuMs.after) / 2)) * 1000,
    ) / 1000;
  await rt.stop();
  console.log(reportLine(out));
}

/** The store's writes between two readings, per second of the window and per pool state stored. */
function writesDelta(
  a: WriteStats,
  b: WriteStats,
  stageMs: { analyse: number; write: number },
  analyses: number,
  wallMs: number,
): Record<string, number> {
  const states = Math.max(1, b.states - a.states);
  const r1 = (x: number) => Math.round(x * 10) / 10;
  const r2 = (x: number) => Math.round(x * 100) / 100;
  return {
    analyseMsPerSecond: r1((stageMs.analyse / wallMs) * 1000),
    writeMsPerSecond: r1((stageMs.write / wallMs) * 1000),
    analyseMsPerAnalysis: r2(stageMs.analyse / Math.max(1, analyses)),
    poolStatesPerSecond: r1(((b.states - a.states) / wallMs) * 1000),
    writeMsPerState: r2(stageMs.write / states),
    changedRowsShare: r2((b.changedRows - a.changedRows) / states),
    keyframesShare: r2((b.keyframes - a.keyframes) / states),
    historyBytesPerState: Math.round((b.historyBytes - a.historyBytes) / states),
    rowsReadPerState: r1((b.rowsRead - a.rowsRead) / states),
    rowsWrittenPerState: r1((b.rowsWritten - a.rowsWritten) / states),
    transitionsPerState: r1((b.transitions - a.transitions) / states),
  };
}

/**
 * POOLSCOPE_BENCH_MEMORY_TRACE=<file>: from the bench's steps ahead of the window to the window's end, a JSON line
 * every 250 ms with the RSS and the kernel's split of it (anonymous, file), V8's heap (reserved, used) and what V8
 * counts outside it, in MB; a line per garbage collection (its kind and ms); and a line marking each step
 * (`checkpoint`, `calibration`, `full GC`, `pause`, `window`) and each probe's stages (`probe: client`, …), with a
 * sample just before it: to line a peak up with what made it.
 */
function memoryTrace(file: string | undefined): { start(): void; stop(): void; mark(what: string): void } | null {
  if (!file) return null;
  const lines: string[] = [];
  const mb = (n: number) => Math.round((n / 2 ** 20) * 10) / 10;
  const t0 = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const sample = () => {
    const m = process.memoryUsage();
    const kernel = kernelMemory(['RssAnon', 'RssFile']);
    lines.push(
      JSON.stringify({
        t: Math.round(performance.now() - t0),
        rss: mb(m.rss),
        anon: mb(kernel?.RssAnon ?? NaN),
        file: mb(kernel?.RssFile ?? NaN),
        heapTotal: mb(m.heapTotal),
        heapUsed: mb(m.heapUsed),
        external: mb(m.external),
      }),
    );
  };
  const gcs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = gcKind(e);
      lines.push(JSON.stringify({ t: Math.round(e.startTime - t0), gc: kind, ms: Math.round(e.duration) }));
    }
  });
  return {
    start: () => {
      timer = setInterval(sample, 250);
      gcs.observe({ entryTypes: ['gc'] });
    },
    stop: () => {
      clearInterval(timer);
      gcs.disconnect();
      writeFileSync(file, `${lines.join('\n')}\n`);
    },
    mark: (what) => {
      sample();
      lines.push(JSON.stringify({ t: Math.round(performance.now() - t0), mark: what }));
    },
  };
}

/**
 * What the window's highest RSS sample was made of: V8's heap (reserved and in use) and memory outside it, beside
 * the same at the median sample. A heap reserved well above the median says the peak is V8 growing before a full
 * GC; the rest growing says buffers or malloc.
 */
function atMax(
  rss: readonly number[],
  heap: readonly { total: number; used: number; external: number }[],
): Record<string, number> {
  const mb = (x: number) => Math.round(x / 2 ** 20);
  let i = 0;
  for (let k = 1; k < rss.length; k++) if ((rss[k] as number) > (rss[i] as number)) i = k;
  const h = heap[i];
  if (!h) return {};
  const median = (xs: number[]) => mb(pct(xs, 50));
  return {
    heapTotal: mb(h.total),
    heapUsed: mb(h.used),
    outsideHeap: mb((rss[i] as number) - h.total),
    heapTotalP50: median(heap.map((x) => x.total)),
    outsideHeapP50: median(rss.map((r, k) => r - (heap[k]?.total ?? 0))),
  };
}

/** A full GC now (the bench starts this process with --expose-gc). */
function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('the collector bench needs node --expose-gc');
  gc();
}

/**
 * The CPU ms of a fixed piece of work like the collector's (building, serialising, parsing and sorting 20,000
 * objects shaped like instance rows): the median of seven runs after one that compiles it.
 */
function calibrate(): number {
  const runs: number[] = [];
  // The first run compiles the code; the runs after it are timed.
  for (let r = -1; r < 7; r++) {
    const t = process.cpuUsage();
    const rows = Array.from({ length: 20_000 }, (_, i) => ({
      id: `/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/pool${i % 1000}/virtualMachines/${(i * 7919) % 20_000}`,
      state: i % 3 ? 'Succeeded' : 'Creating',
      ready: i % 2 === 0,
      n: i,
    }));
    const back = JSON.parse(JSON.stringify(rows)) as typeof rows;
    back.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const u = process.cpuUsage(t);
    if (r >= 0) runs.push((u.user + u.system) / 1000);
  }
  return Math.round(pct(runs, 50) * 10) / 10;
}

function restartCount(col: { watchRestarts(): { restarts: number }[] }): number {
  return col.watchRestarts().reduce((n, r) => n + r.restarts, 0);
}

function kubeDelta(
  a: Map<string, InformerActivity>,
  b: Map<string, InformerActivity>,
  wallMs: number,
): Record<string, unknown> {
  const out: Record<
    string,
    { watchEventsPerSecond: number; watches: number; lists: number; listedObjects: number; gone: number }
  > = {};
  for (const [kind, x] of b) {
    const y = a.get(kind) ?? { lists: 0, listedObjects: 0, watches: 0, watchEvents: 0, gone: 0 };
    out[kind] = {
      watchEventsPerSecond: Math.round(((x.watchEvents - y.watchEvents) / wallMs) * 10_000) / 10,
      watches: x.watches - y.watches,
      lists: x.lists - y.lists,
      listedObjects: x.listedObjects - y.listedObjects,
      gone: x.gone - y.gone,
    };
  }
  return out;
}

/** The kernel's memory figures of this process (bytes, from /proc/self/status), or undefined where there is none. */
function kernelMemory(keys: readonly string[]): Record<string, number> | undefined {
  let status: string;
  try {
    status = readFileSync('/proc/self/status', 'utf8');
  } catch {
    return undefined;
  }
  const out: Record<string, number> = {};
  for (const k of keys) {
    const m = new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status);
    if (m) out[k] = Number(m[1]) * 1024;
  }
  return out;
}

/**
 * Where the resident memory is at the end of the window (before any breakdown): V8's heap spaces (committed
 * and used), memory V8 accounts outside its heap (buffers), and the kernel's split of the RSS into anonymous
 * memory and mapped files (code of Node and native addons), from /proc (Linux).
 */
function memoryBySpace(): Record<string, unknown> {
  const mb = (n: number) => Math.round(n / 2 ** 20);
  const mem = process.memoryUsage();
  const spaces = Object.fromEntries(
    v8
      .getHeapSpaceStatistics()
      .map((s) => [s.space_name, { committed: mb(s.physical_space_size), used: mb(s.space_used_size) }]),
  );
  const bytes = kernelMemory(['VmRSS', 'RssAnon', 'RssFile', 'RssShmem', 'VmData']);
  const kernel = bytes && Object.fromEntries(Object.entries(bytes).map(([k, v]) => [k, mb(v)]));
  // Open connections hold native memory V8 does not count (TLS state and buffers, about 100 KB each).
  const handles: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) handles[r] = (handles[r] ?? 0) + 1;
  return {
    rss: mb(mem.rss),
    heapTotal: mb(mem.heapTotal),
    heapUsed: mb(mem.heapUsed),
    external: mb(mem.external),
    arrayBuffers: mb(mem.arrayBuffers),
    spaces,
    ...(kernel ? { kernel } : {}),
    ...residentByMapping(),
    activeHandles: handles,
  };
}

/**
 * The resident memory by kind of mapping (/proc/self/smaps, Linux): malloc's main heap (`[heap]`), files (the
 * node binary, addons), stacks, and the other anonymous mappings — V8's heap pages, malloc's thread arenas and
 * its large blocks, which smaps cannot tell apart — with the largest of those.
 */
function residentByMapping(): { residentByMappingMB?: Record<string, unknown> } {
  let text: string;
  try {
    text = readFileSync('/proc/self/smaps', 'utf8');
  } catch {
    return {};
  }
  const kb: Record<string, number> = { mallocHeap: 0, stacks: 0, files: 0, otherAnonymous: 0 };
  const largest: { sizeMB: number; rssMB: number }[] = [];
  let kind = '';
  let size = 0;
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) {
      size = (parseInt(head[2] as string, 16) - parseInt(head[1] as string, 16)) / 1024;
      const name = (head[3] ?? '').trim();
      kind =
        name === '[heap]'
          ? 'mallocHeap'
          : name.startsWith('[stack')
            ? 'stacks'
            : name.startsWith('/')
              ? 'files'
              : name
                ? 'other'
                : 'otherAnonymous';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (!rss) continue;
    const r = Number(rss[1]);
    kb[kind] = (kb[kind] ?? 0) + r;
    if (kind === 'otherAnonymous' && r > 0)
      largest.push({ sizeMB: Math.round(size / 1024), rssMB: Math.round(r / 1024) });
  }
  largest.sort((a, b) => b.rssMB - a.rssMB);
  return {
    residentByMappingMB: {
      ...Object.fromEntries(Object.entries(kb).map(([k, v]) => [k, Math.round(v / 1024)])),
      largestOtherAnonymous: largest.slice(0, 8),
    },
  };
}

/** CPU time (ms) per thread of this process, from /proc (Linux); null elsewhere. */
function threadCpu(): Map<string, { name: string; ms: number }> | null {
  try {
    const out = new Map<string, { name: string; ms: number }>();
    const tick = 1000 / 100; // USER_HZ is 100 on Linux
    for (const tid of readdirSync('/proc/self/task')) {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // "tid (name) state ..." — the name may hold spaces and parentheses: fields follow the last ')'.
      const close = stat.lastIndexOf(')');
      const fields = stat.slice(close + 2).split(' ');
      out.set(tid, {
        name: stat.slice(stat.indexOf('(') + 1, close),
        ms: (Number(fields[11]) + Number(fields[12])) * tick,
      });
    }
    return out;
  } catch {
    return null;
  }
}

/** Percent of one core per thread kind over the window (threads of the same name added up). */
function cpuByThread(
  a: Map<string, { name: string; ms: number }>,
  b: Map<string, { name: string; ms: number }>,
  wallMs: number,
): Record<string, number> {
  const pid = String(process.pid);
  const byName: Record<string, number> = {};
  for (const [tid, t] of b) {
    const name = tid === pid ? 'main' : t.name;
    byName[name] = (byName[name] ?? 0) + t.ms - (a.get(tid)?.ms ?? 0);
  }
  return Object.fromEntries(
    Object.entries(byName)
      .filter(([, ms]) => ms > 0)
      .sort((x, y) => y[1] - x[1])
      .map(([k, ms]) => [k, Math.round((ms / wallMs) * 1000) / 10]),
  );
}

/**
 * Where the collector's heap goes (POOLSCOPE_BENCH_BREAKDOWN=1, at the end of a run): the heap after a full GC,
 * then again after dropping, in turn, the previous analyses, the Azure reads and the Kubernetes sources
 * (informers and their caches). Destroys the collector's state, so it runs last.
 */
async function heapBreakdown(col: object, tables: ReturnType<typeof sharedTables>): Promise<Record<string, unknown>> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('POOLSCOPE_BENCH_BREAKDOWN needs node --expose-gc');
  const used = () => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  const c = col as unknown as {
    previous: Map<string, unknown>;
    azureData: Map<string, unknown>;
    sources: Map<string, { stop(): void }>;
    pendingEvents: Map<string, unknown>;
    recordedEvents: Map<string, unknown>;
  };
  const mb = (n: number) => Math.round(n / 2 ** 20);
  const total = used();

  // Whether the analyses are held by anything besides `previous` (WeakRefs to a sample of them).
  const sampled = [...c.previous.values()].slice(0, 50) as Record<string, unknown>[];
  const sample = sampled.map((d) => new WeakRef(d));
  const detailBytes = Math.round(JSON.stringify(sampled).length / Math.max(1, sampled.length));
  // By part (the instance tables are not kept: the store has them), and how many drift items and findings.
  const bytesByPart: Record<string, number> = {};
  for (const d of sampled)
    for (const [k, v] of Object.entries(d))
      bytesByPart[k] = (bytesByPart[k] ?? 0) + Math.round(JSON.stringify(v ?? null).length / sampled.length);
  const perPool = (k: string) =>
    Math.round(
      (sampled.reduce((n, d) => n + (Array.isArray(d[k]) ? (d[k] as unknown[]).length : 0), 0) /
        Math.max(1, sampled.length)) *
        10,
    ) / 10;
  const analysisShape = { bytesByPart, driftItemsPerPool: perPool('drift'), findingsPerPool: perPool('findings') };
  // Not held while the heap is measured.
  sampled.length = 0;
  // WeakRef targets stay alive until the job that created the refs ends: collect in a later tick.
  const tick = () => new Promise((r) => setTimeout(r, 0));
  await tick();
  c.previous.clear();
  await tick();
  const afterPrevious = used();
  const alive = () => sample.filter((w) => w.deref() !== undefined).length;
  const aliveAfterPrevious = alive();
  c.azureData.clear();
  await tick();
  const afterAzure = used();
  for (const s of c.sources.values()) s.stop();
  c.sources.clear();
  c.pendingEvents.clear();
  c.recordedEvents.clear();
  await new Promise((r) => setTimeout(r, 500));
  const afterSources = used();
  // The shared tables, and the strings only they still hold (the sources' IDs and names among them).
  for (const t of Object.values(tables)) t.clear();
  const afterTables = used();
  // POOLSCOPE_BENCH_HEAP_SNAPSHOT=<file>: what is left (the "rest"), for Chrome DevTools' Memory tab.
  if (process.env.POOLSCOPE_BENCH_HEAP_SNAPSHOT) {
    const { writeHeapSnapshot } = await import('node:v8');
    writeHeapSnapshot(process.env.POOLSCOPE_BENCH_HEAP_SNAPSHOT);
  }
  return {
    heapUsed: mb(total),
    previousAnalyses: mb(total - afterPrevious),
    azureReads: mb(afterPrevious - afterAzure),
    kubeSources: mb(afterAzure - afterSources),
    sharedTables: mb(afterSources - afterTables),
    rest: mb(afterTables),
    analysisJsonBytesPerPool: detailBytes,
    analysisShape,
    sampledAnalysesAliveAfterClearingPrevious: aliveAfterPrevious,
    sampledAnalysesAliveAtEnd: alive(),
    sampled: sample.length,
  };
}

/**
 * POOLSCOPE_BENCH_CPU_PROFILE=<file>: a V8 CPU profile of the measurement window only (open it in Chrome
 * DevTools), and the functions with the most self time in the report.
 */
async function startProfile(): Promise<{
  stop(file: string): Promise<{ file: string; topSelfMs: { fn: string; ms: number }[] }>;
}> {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return {
    async stop(file) {
      const { profile } = (await session.post('Profiler.stop')) as unknown as {
        profile: {
          nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
          samples: number[];
          timeDeltas: number[];
        };
      };
      session.disconnect();
      writeFileSync(file, JSON.stringify(profile));
      const self = new Map<number, number>();
      profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
      const byFn = new Map<string, number>();
      for (const n of profile.nodes) {
        const us = self.get(n.id) ?? 0;
        if (!us) continue;
        const k = frameName(n.callFrame);
        byFn.set(k, (byFn.get(k) ?? 0) + us);
      }
      return {
        file,
        topSelfMs: [...byFn]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 25)
          .map(([fn, us]) => ({ fn, ms: Math.round(us / 1000) })),
      };
    },
  };
}

/** Where a profile node's function is, shortened (node_modules and the repository's own folders). */
function frameName(f: { functionName: string; url: string; lineNumber: number }): string {
  const where = f.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(server|lib)\//, '$1/');
  return `${f.functionName || '(anonymous)'} ${where}:${f.lineNumber + 1}`;
}

/**
 * POOLSCOPE_BENCH_ALLOC_PROFILE=<file>: V8's sampling heap profiler over the measurement window, keeping the
 * samples of objects the GC has already collected (what feeds the scavenges, not what stays): the profile (for
 * Chrome DevTools) and the functions allocating the most, in MB per second of the window.
 */
async function startAllocationProfile(): Promise<{
  stop(
    file: string,
    wallMs: number,
  ): Promise<{ file: string; totalMBPerSecond: number; topMBPerSecond: { fn: string; mbPerSecond: number }[] }>;
}> {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  // POOLSCOPE_BENCH_ALLOC_KIND=old: only what outlived the young generation (alive at the end, or collected by a
  // full GC): what fills the old generation and makes full collections come.
  const old = process.env.POOLSCOPE_BENCH_ALLOC_KIND === 'old';
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 64 * 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: !old,
  });
  type Node = {
    callFrame: { functionName: string; url: string; lineNumber: number };
    selfSize: number;
    children: Node[];
  };
  return {
    async stop(file, wallMs) {
      const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: Node } };
      session.disconnect();
      writeFileSync(file, JSON.stringify(profile));
      const byFn = new Map<string, number>();
      let total = 0;
      const walk = (n: Node) => {
        if (n.selfSize) {
          const k = frameName(n.callFrame);
          byFn.set(k, (byFn.get(k) ?? 0) + n.selfSize);
          total += n.selfSize;
        }
        n.children.forEach(walk);
      };
      walk(profile.head);
      const perSecond = (bytes: number) => Math.round((bytes / 2 ** 20 / (wallMs / 1000)) * 100) / 100;
      return {
        file,
        totalMBPerSecond: perSecond(total),
        topMBPerSecond: [...byFn]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 25)
          .map(([fn, bytes]) => ({ fn, mbPerSecond: perSecond(bytes) })),
      };
    },
  };
}
