// The collector benchmark's memory diagnostics, read in the measuring process: where its resident memory is at the
// end (V8's spaces, the kernel's split, mappings), the optional trace of it from before the window, and its GCs.

import { readFileSync, writeFileSync } from 'node:fs';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import v8 from 'node:v8';

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/** A garbage collection's kind: a scavenge of the young generation (minor), a full mark-compact (major), … */
export function gcKind(e: PerformanceEntry): string {
  return GC_KINDS[(e as unknown as { detail?: { kind?: number } }).detail?.kind ?? -1] ?? 'other';
}

/** A full GC now (the bench starts this process with --expose-gc). */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('the collector bench needs node --expose-gc');
  gc();
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
export function memoryBySpace(): Record<string, unknown> {
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
      kind = mappingKind((head[3] ?? '').trim());
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

/** The kind of a mapping of /proc/self/smaps, by its name (the anonymous ones have none). */
function mappingKind(name: string): string {
  if (name === '[heap]') return 'mallocHeap';
  if (name.startsWith('[stack')) return 'stacks';
  if (name.startsWith('/')) return 'files';
  return name ? 'other' : 'otherAnonymous';
}

/** The memory trace's steps: started before the bench's steps ahead of the window, stopped at its end. */
export interface MemoryTrace {
  start(): void;
  stop(): void;
  mark(what: string): void;
}

/**
 * POOLSCOPE_BENCH_MEMORY_TRACE=<file>: from the bench's steps ahead of the window to the window's end, a JSON line
 * every 250 ms with the RSS and the kernel's split of it (anonymous, file), V8's heap (reserved, used) and what V8
 * counts outside it, in MB; a line per garbage collection (its kind and ms); and a line marking each step
 * (`checkpoint`, `calibration`, `full GC`, `pause`, `window`) and each probe's stages (`probe: client`, …), with a
 * sample just before it: to line a peak up with what made it.
 */
export function memoryTrace(file: string | undefined): MemoryTrace | null {
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
