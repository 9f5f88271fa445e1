// The collector benchmark's measurement window: the counters read at its edges and what changed between them, and
// what it samples each second (RSS, V8's heap, and the latency probes of its first seconds), as report figures.

import type { PoolDetail } from '../lib/api-types';
import type { InformerActivity } from '../server/kube/informer';
import type { WriteStats } from '../server/store/store';
import { threadCpu, type ThreadCpu } from './collector-cpu';
import type { MemoryTrace } from './collector-memory';
import type { Probe, ProbeFn } from './collector-probe';
import { pct } from './pct';

/** Where the counters read at the window's edges come from. */
export interface Counters {
  informerActivity(): Map<string, InformerActivity>;
  store: { writeStats(): WriteStats };
  col: { watchRestarts(): { restarts: number }[] };
}

/** The counters as the window opens. */
export interface WindowStart {
  kube: Map<string, InformerActivity>;
  writes: WriteStats;
  restarts: number;
  cpu: NodeJS.CpuUsage;
  threads: ThreadCpu | null;
  /** When the window opened (Date.now()). */
  wall: number;
}

/** The counters as it closes, and the window's length and CPU. */
export interface WindowEnd extends Omit<WindowStart, 'wall'> {
  wallMs: number;
}

export function readStart(c: Counters): WindowStart {
  const kube = c.informerActivity();
  const writes = c.store.writeStats();
  const restarts = restartCount(c.col);
  const cpu = process.cpuUsage();
  const threads = threadCpu();
  return { kube, writes, restarts, cpu, threads, wall: Date.now() };
}

export function readEnd(c: Counters, start: WindowStart): WindowEnd {
  const wallMs = Date.now() - start.wall;
  const cpu = process.cpuUsage(start.cpu);
  const threads = threadCpu();
  const kube = c.informerActivity();
  const writes = c.store.writeStats();
  const restarts = restartCount(c.col);
  return { wallMs, cpu, threads, kube, writes, restarts };
}

function restartCount(col: { watchRestarts(): { restarts: number }[] }): number {
  return col.watchRestarts().reduce((n, r) => n + r.restarts, 0);
}

/** What the window sampled: memory each second, and the latency probes. */
export interface WindowSamples {
  rss: number[];
  heap: { total: number; used: number; external: number }[];
  latencies: number[];
  requestLatencies: number[];
  deliveries: number[];
  arrivals: number[];
  timedOut: number;
  /** Patches the simulated API server did not take (it can stall for seconds under a 100k churn). */
  patchErrors: string[];
}

/** Until `end` (Date.now()): each second a memory sample, and a probe of the next pool in the first 20. */
export async function sampleWindow(
  pools: readonly PoolDetail[],
  probe: ProbeFn,
  end: number,
  trace: MemoryTrace | null,
): Promise<WindowSamples> {
  const s: WindowSamples = {
    rss: [],
    heap: [],
    latencies: [],
    requestLatencies: [],
    deliveries: [],
    arrivals: [],
    timedOut: 0,
    patchErrors: [],
  };
  const samples = Math.min(20, pools.length);
  trace?.mark('window');
  for (let i = 0; Date.now() < end; i++) {
    const mem = process.memoryUsage();
    s.rss.push(mem.rss);
    s.heap.push({ total: mem.heapTotal, used: mem.heapUsed, external: mem.external });
    if (i < samples) {
      const p = pools[i % pools.length];
      if (!p) break;
      addProbe(s, await probe(p));
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  return s;
}

function addProbe(s: WindowSamples, r: Probe): void {
  if (r.seen) {
    s.requestLatencies.push(r.seen.requestMs);
    s.latencies.push(r.seen.latencyMs);
    if (r.seen.arrival) {
      s.deliveries.push(r.seen.arrival.deliveryMs);
      s.arrivals.push(r.seen.arrival.storeMs);
    }
  }
  if (r.timedOut) s.timedOut++;
  s.patchErrors.push(...r.errors);
}

/** The report's memory figures of the window, and the highest RSS since the start. */
export function memoryInWindow(rssMax: number, s: WindowSamples) {
  const p50MB = (xs: number[]) => Math.round(pct(xs, 50) / 2 ** 20);
  return {
    rssMaxFromStartMB: Math.round(rssMax / 2 ** 20),
    steadyRssMB: {
      p50: p50MB(s.rss),
      max: Math.round(Math.max(...s.rss) / 2 ** 20),
      atMax: atMax(s.rss, s.heap),
    },
    // What of the RSS is V8's heap (reserved, and in use between collections) and memory outside it (buffers).
    steadyHeapMB: {
      totalP50: p50MB(s.heap.map((h) => h.total)),
      usedP50: p50MB(s.heap.map((h) => h.used)),
      externalP50: p50MB(s.heap.map((h) => h.external)),
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

/** The report's figures of the latency probes. */
export function probeFigures(s: WindowSamples) {
  const { latencies, requestLatencies, deliveries, arrivals, patchErrors } = s;
  return {
    // From the API server's answer to the stored transition, and from before the request (API server included).
    changeToTransitionMs: {
      samples: latencies.length,
      p50: pct(latencies, 50),
      p95: pct(latencies, 95),
      notSeenWithin10s: s.timedOut,
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
  };
}

/** What the Kubernetes watches did between two readings, by kind. */
export function kubeDelta(
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

/** The store's writes between two readings, per second of the window and per pool state stored. */
export function writesDelta(
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
