// What the collector did during the collector benchmark's window, recorded as it happened: its cycles (how long
// each change waited to be stored, and behind what), its garbage collections and the event loop's delays.

import { PerformanceObserver, monitorEventLoopDelay } from 'node:perf_hooks';
import type { Collector, CycleEvent } from '../server/collector/collector';
import { gcKind } from './collector-memory';
import { pct } from './pct';

/** Listens from its creation (the cycles, GCs and event loop); counts the changes that reach it after open(). */
export class WindowActivity {
  private readonly col: Collector;
  // What happened in the last few seconds (cycles, long collections), and a copy of it as the slowest change in
  // the window was stored: what that change waited behind.
  private readonly recent: { end: number; what: string }[] = [];
  private slowest: { lagMs: number; before: string[] } | null = null;
  private lastCycleEnd = 0;
  /** When the window began (performance.now()). */
  private window0 = Infinity;
  private longestGap: { ms: number; failedWrites: number; lastError: string | null } = {
    ms: 0,
    failedWrites: 0,
    lastError: null,
  };
  // Garbage collection in the window, by kind (a scavenge of the young generation, or a full mark-compact).
  // How late the event loop ran what was due (a cycle's timer, a watch's data): its delays in the window.
  private readonly loopDelay = monitorEventLoopDelay({ resolution: 10 });
  private readonly gcStats: Record<string, { count: number; ms: number }> = {};
  private readonly gcObserver = new PerformanceObserver((list) => this.onGc(list.getEntries()));
  // Every Kubernetes change in the window (the churn's, not only the paused probes): how long it waited to be stored.
  private readonly changeLags: number[] = [];
  // And the cycles that analysed something: how long each took, and how many pools it wrote.
  private readonly cycleMs: number[] = [];
  private readonly cyclePools: number[] = [];
  // The part of each lag spent before the cycle that stored it began (waiting for a cycle, or behind others).
  private readonly changeWaits: number[] = [];
  /** Time the cycles spent analysing and writing (main thread). */
  readonly stageMs = { analyse: 0, write: 0 };
  private readonly onCycle = (e: CycleEvent) => this.cycle(e);

  constructor(col: Collector) {
    this.col = col;
    this.loopDelay.enable();
    this.gcObserver.observe({ entryTypes: ['gc'] });
    col.bus.on('cycle', this.onCycle);
  }

  /** The window begins: changes that reached the collector before now are not counted. */
  open(): void {
    this.window0 = performance.now();
  }

  stop(): void {
    this.gcObserver.disconnect();
    this.loopDelay.disable();
    this.col.bus.off('cycle', this.onCycle);
  }

  private onGc(entries: PerformanceEntry[]): void {
    for (const e of entries) {
      const kind = gcKind(e);
      const g = (this.gcStats[kind] ??= { count: 0, ms: 0 });
      g.count++;
      g.ms += e.duration;
      if (e.duration >= 5)
        this.recent.push({ end: e.startTime + e.duration, what: `gc ${kind} ${Math.round(e.duration)} ms` });
    }
  }

  private cycle(e: CycleEvent): void {
    this.stageMs.analyse += e.analyseMs;
    this.stageMs.write += e.writeMs;
    const now = performance.now();
    // Changes that reached the collector before the window are not counted: the checkpoint and calibration just
    // before it hold the event loop up to a second (the bench's own doing), and the first cycle after stored them.
    const lags = e.changeLags.filter((s) => now - s * 1000 >= this.window0);
    for (const s of lags) {
      this.changeLags.push(s * 1000);
      this.changeWaits.push(Math.max(0, s - e.seconds) * 1000);
    }
    if (e.changeLags.length || e.pools) {
      this.cycleMs.push(e.seconds * 1000);
      this.cyclePools.push(e.pools);
    }
    while (this.recent.length && (this.recent[0] as { end: number }).end < now - 5000) this.recent.shift();
    // The longest time without a cycle ending (the cadence is 250 ms; a backlog runs them back to back).
    if (this.lastCycleEnd && now - this.lastCycleEnd > this.longestGap.ms) {
      const failedWrites = this.col.storeWritesFailing;
      this.longestGap = { ms: Math.round(now - this.lastCycleEnd), failedWrites, lastError: this.col.lastError };
    }
    this.lastCycleEnd = now;
    this.recent.push({ end: now, what: describe(e) });
    const lag = Math.max(0, ...lags) * 1000;
    if (lag > (this.slowest?.lagMs ?? 0))
      this.slowest = {
        lagMs: Math.round(lag),
        before: this.recent
          .filter((r) => r.end >= now - lag - 500)
          .map((r) => `${Math.round(r.end - now)} ms: ${r.what}`),
      };
  }

  /** The window's garbage collections by kind: how many, and their ms. */
  gcInWindow(): Record<string, { count: number; ms: number }> {
    return Object.fromEntries(
      Object.entries(this.gcStats).map(([k, g]) => [k, { count: g.count, ms: Math.round(g.ms) }]),
    );
  }

  /** The cycles that analysed something: their duration and the pools they wrote. */
  busyCycles() {
    const { cycleMs, cyclePools } = this;
    return {
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
    };
  }

  eventLoopDelayMs() {
    return {
      p50: Math.round(this.loopDelay.percentile(50) / 1e6),
      p99: Math.round(this.loopDelay.percentile(99) / 1e6),
      max: Math.round(this.loopDelay.max / 1e6),
    };
  }

  /** The report's figures of the changes stored in the window, and of the cycles' gaps. */
  changeFigures() {
    const { changeLags, changeWaits } = this;
    return {
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
      slowestChange: this.slowest,
      // The longest time between two cycles' ends, and the store's refusals in a row then (cycles back off after one).
      longestCycleGapMs: this.longestGap,
    };
  }
}

/** A cycle, as the slowest change's account of what it waited behind shows it. */
function describe(e: CycleEvent): string {
  return e.changeLags.length || e.pools || e.waiting
    ? `cycle ${Math.round(e.seconds * 1000)} ms: ${e.changeLags.length} changed, ${e.pools} written, ${e.waiting} waiting, analyse ${Math.round(e.analyseMs)} ms, write ${Math.round(e.writeMs)} ms`
    : `cycle ${Math.round(e.seconds * 1000)} ms: nothing to do`;
}
