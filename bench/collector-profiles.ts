// The collector benchmark's optional V8 profiles of its window (POOLSCOPE_BENCH_CPU_PROFILE, _ALLOC_PROFILE),
// taken through the inspector in the measuring process: each written to a file, its top functions in the report.

import { writeFileSync } from 'node:fs';

/**
 * POOLSCOPE_BENCH_CPU_PROFILE=<file>: a V8 CPU profile of the measurement window only (open it in Chrome
 * DevTools), and the functions with the most self time in the report.
 */
export async function startProfile(): Promise<{
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
export async function startAllocationProfile(): Promise<{
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
