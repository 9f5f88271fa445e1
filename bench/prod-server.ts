// The production server as the image runs it (its Node flags, LD_PRELOAD and MALLOC_CONF; deploy/base's heap cap),
// on a simulated fleet, and what an operator reads of it from outside: its metrics and /proc. Shared by the suites
// that run it (`server`, `crowd`).

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { SimulatedFleet } from './fleet';
import { imageEnv, imageNodeFlags, imagePreload, localLibrary, standaloneServer } from './image';

/** Every sample of one metric in Prometheus text, by its label text. */
export function samples(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labels = line.startsWith(`${name}{`) ? line.slice(name.length + 1, line.indexOf('}')) : '';
    out.set(labels, Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

/** The process's CPU ms and RSS MB (Linux); null elsewhere. */
export function procStats(pid: number): { cpuMs: number; rssMB: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const rss = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    // utime + stime, in USER_HZ (100 on Linux).
    return { cpuMs: (Number(fields[11]) + Number(fields[12])) * 10, rssMB: rss ? Number(rss[1]) / 1024 : NaN };
  } catch {
    return null;
  }
}

export interface ProductionServer {
  process: ChildProcess;
  base: string;
  /** The library preloaded as its malloc (file name) and the malloc's settings, as the image sets them. */
  preload: string | null;
  mallocConf: string | null;
  scrape(): Promise<string>;
  stop(): Promise<void>;
}

/** Starts `.next/standalone/server.js` collecting `sim`'s fleet, as the image and the Deployment run it. */
export function startProductionServer(
  sim: SimulatedFleet,
  port: number,
  extraEnv: Record<string, string> = {},
): ProductionServer {
  const serverJs = standaloneServer();
  const preload = imagePreload();
  const mallocConf = imageEnv('MALLOC_CONF');
  const child = spawn(process.execPath, [...imageNodeFlags(), serverJs], {
    cwd: path.dirname(serverJs),
    env: {
      ...process.env,
      ...sim.env,
      ...(preload ? { LD_PRELOAD: localLibrary(preload) } : {}),
      ...(mallocConf ? { MALLOC_CONF: mallocConf } : {}),
      NODE_OPTIONS: '--max-old-space-size=640',
      PORT: String(port),
      HOSTNAME: '127.0.0.1',
      POOLSCOPE_DB_PATH: path.join(sim.stateDir, 'bench.db'),
      POOLSCOPE_CONTEXTS: sim.contexts.join(','),
      POOLSCOPE_LOG_LEVEL: 'warn',
      ...extraEnv,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  return {
    process: child,
    base,
    preload,
    mallocConf,
    async scrape() {
      const r = await fetch(`${base}/api/metrics`);
      if (!r.ok) throw new Error(`/api/metrics answered ${r.status}`);
      return r.text();
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.on('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * Scrapes every `everyMs` until every pool is known and read from Azure (its azure_instances replica count is
 * exported), or `limitSeconds` pass; how long it took (null when it ran out) and the pools.
 */
export async function untilAllRead(
  server: ProductionServer,
  limitSeconds: number,
  everyMs: number,
): Promise<{ seconds: number | null; pools: number }> {
  const t0 = Date.now();
  let pools = 0;
  while (Date.now() - t0 < limitSeconds * 1000) {
    await new Promise((r) => setTimeout(r, everyMs));
    if (server.process.exitCode !== null) throw new Error(`the server exited (${server.process.exitCode})`);
    const text = await server.scrape().catch(() => '');
    pools = samples(text, 'poolscope_pools').get('') ?? 0;
    const read = [...samples(text, 'poolscope_pool_replicas').keys()].filter((l) =>
      l.includes('source="azure_instances"'),
    ).length;
    if (pools > 0 && read === pools) return { seconds: Math.round((Date.now() - t0) / 1000), pools };
  }
  return { seconds: null, pools };
}
