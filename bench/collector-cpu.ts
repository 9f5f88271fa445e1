// The collector benchmark's CPU figures: the machine's speed (a calibration run just before and just after the
// window, to compare runs on shared machines by), and the window's CPU in all and by thread (from /proc, Linux).

import { readdirSync, readFileSync } from 'node:fs';
import { pct } from './pct';

/** CPU time (ms) by thread id, with the thread's name. */
export type ThreadCpu = Map<string, { name: string; ms: number }>;

/**
 * The CPU ms of a fixed piece of work like the collector's (building, serialising, parsing and sorting 20,000
 * objects shaped like instance rows): the median of seven runs after one that compiles it.
 */
export function calibrate(): number {
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

/** CPU time (ms) per thread of this process, from /proc (Linux); null elsewhere. */
export function threadCpu(): ThreadCpu | null {
  try {
    const out: ThreadCpu = new Map();
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
function cpuByThread(a: ThreadCpu, b: ThreadCpu, wallMs: number): Record<string, number> {
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
 * The window's CPU figures of the report. The calibration after the window is left NaN, and the ratio with it:
 * {@link withCalibrationAfter} fills them in once every other figure is read.
 */
export function cpuFigures(
  cpu: NodeJS.CpuUsage,
  threads: { start: ThreadCpu | null; end: ThreadCpu | null },
  wallMs: number,
  speedBefore: number,
) {
  return {
    steadyCpuPercentOfOneCore: Math.round(((cpu.user + cpu.system) / 1000 / wallMs) * 1000) / 10,
    // The same, by thread (Linux): the main thread runs the collector's JavaScript; V8's workers mostly GC.
    ...(threads.start && threads.end
      ? { steadyCpuPercentByThread: cpuByThread(threads.start, threads.end, wallMs) }
      : {}),
    // CPU ms of a fixed piece of JavaScript run just before and just after the window, beside the simulator as the
    // collector runs: the machine's speed then (it varied twofold on these shared machines), to compare runs by.
    calibrationCpuMs: { before: speedBefore, after: NaN },
    // The CPU share per millisecond of the calibration's mean: the code's cost with the machine's speed taken out
    // (runs on machines of one kind gave 0.36–0.41 for the same code, 0.27–0.31 since the analysis stopped judging
    // instances by an Azure read older than them), to compare runs on different machines by.
    cpuPercentPerCalibrationMs: NaN,
  };
}

/** Runs the calibration after the window and fills in its figures (its second of work would count in them). */
export function withCalibrationAfter(out: ReturnType<typeof cpuFigures>): void {
  out.calibrationCpuMs.after = calibrate();
  out.cpuPercentPerCalibrationMs =
    Math.round(
      (out.steadyCpuPercentOfOneCore / ((out.calibrationCpuMs.before + out.calibrationCpuMs.after) / 2)) * 1000,
    ) / 1000;
}
