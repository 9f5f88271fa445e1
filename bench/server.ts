// Production-server benchmark: the production build (`node server.js`, the collector inside Next's server, as the
// image runs it) collecting a simulated fleet with churn, measured from outside as an operator sees the pod: its
// RSS and CPU (Linux /proc), and from its own /api/metrics, scraped every 15 s as Prometheus would, the share of
// time its collector spent analysing and writing. The `collector` suite measures the collector alone, in more
// detail; this one says whether the product itself costs what that one says.
// Size: POOLSCOPE_BENCH_FLEET (default 10x10x20,subs=4,churn=0.01); window: POOLSCOPE_BENCH_SECONDS (default 90).

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pct } from './pct';
import { startFleet } from './fleet';
import { imageEnv, imageNodeFlags, imagePreload, localLibrary, standaloneServer } from './image';

const PORT = 3211;
const SCRAPE_MS = 15_000;

/** Every sample of one metric in Prometheus text, by its label text. */
function samples(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labels = line.startsWith(`${name}{`) ? line.slice(name.length + 1, line.indexOf('}')) : '';
    out.set(labels, Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

/** The process's CPU ms and RSS MB (Linux); null elsewhere. */
function procStats(pid: number): { cpuMs: number; rssMB: number } | null {
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

export async function benchServer(): Promise<Record<string, unknown>> {
  const fleet = process.env.POOLSCOPE_BENCH_FLEET ?? '10x10x20,subs=4,churn=0.01';
  const seconds = Number(process.env.POOLSCOPE_BENCH_SECONDS ?? 90);
  const warmupLimit = Number(process.env.POOLSCOPE_BENCH_WARMUP_SECONDS ?? 300);
  const serverJs = standaloneServer();
  const sim = await startFleet(fleet, 'poolscope-bench-server-');
  const { env, contexts, stateDir } = sim;
  let server: ReturnType<typeof spawn> | null = null;
  let preload: string | null = null;
  let mallocConf: string | null = null;
  try {
    // As the image and the Deployment run it (the Dockerfile's CMD, LD_PRELOAD and MALLOC_CONF; deploy/base:
    // NODE_OPTIONS=--max-old-space-size=640).
    preload = imagePreload();
    mallocConf = imageEnv('MALLOC_CONF');
    server = spawn(process.execPath, [...imageNodeFlags(), serverJs], {
      cwd: path.dirname(serverJs),
      env: {
        ...process.env,
        ...env,
        ...(preload ? { LD_PRELOAD: localLibrary(preload) } : {}),
        ...(mallocConf ? { MALLOC_CONF: mallocConf } : {}),
        NODE_OPTIONS: '--max-old-space-size=640',
        PORT: String(PORT),
        HOSTNAME: '127.0.0.1',
        POOLSCOPE_DB_PATH: path.join(stateDir, 'bench.db'),
        POOLSCOPE_CONTEXTS: contexts.join(','),
        POOLSCOPE_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const pid = server.pid as number;
    const base = `http://127.0.0.1:${PORT}`;
    const scrape = async () => {
      const r = await fetch(`${base}/api/metrics`);
      if (!r.ok) throw new Error(`/api/metrics answered ${r.status}`);
      return r.text();
    };
    // Warm-up: until every pool is known and read from Azure (its azure_instances replica count is exported),
    // scraping as Prometheus would.
    const t0 = Date.now();
    let warmedUp = false;
    let pools = 0;
    while (Date.now() - t0 < warmupLimit * 1000) {
      await new Promise((r) => setTimeout(r, SCRAPE_MS));
      if (server.exitCode !== null) throw new Error(`the server exited (${server.exitCode})`);
      const text = await scrape().catch(() => '');
      pools = samples(text, 'poolscope_pools').get('') ?? 0;
      const read = [...samples(text, 'poolscope_pool_replicas').keys()].filter((l) =>
        l.includes('source="azure_instances"'),
      ).length;
      if (pools > 0 && read === pools) {
        warmedUp = true;
        break;
      }
    }
    const warmupSeconds = Math.round((Date.now() - t0) / 1000);
    const stage = (text: string) => samples(text, 'poolscope_collector_stage_seconds_total');
    const stage0 = stage(await scrape());
    const p0 = procStats(pid);
    const w0 = Date.now();
    const rss: number[] = [];
    let nextScrape = w0 + SCRAPE_MS;
    let scrapes = 1;
    while (Date.now() - w0 < seconds * 1000) {
      const s = procStats(pid);
      if (s) rss.push(s.rssMB);
      if (Date.now() >= nextScrape) {
        await scrape();
        scrapes++;
        nextScrape += SCRAPE_MS;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
    const stage1 = stage(await scrape());
    const p1 = procStats(pid);
    const wallMs = Date.now() - w0;
    const share = (label: string) =>
      Math.round((((stage1.get(label) ?? 0) - (stage0.get(label) ?? 0)) / (wallMs / 1000)) * 1000) / 10;
    return {
      fleet,
      seconds,
      contexts: contexts.length,
      // What the server ran with beside its flags: the library the image preloads (its malloc), by file name, and
      // the malloc's settings.
      preload,
      mallocConf,
      pools,
      allReadFromAzureSeconds: warmedUp ? warmupSeconds : null,
      // The server process as the pod's: CPU % of one core and RSS (Linux; null elsewhere).
      cpuPercentOfOneCore: p0 && p1 ? Math.round(((p1.cpuMs - p0.cpuMs) / wallMs) * 1000) / 10 : null,
      rssMB: rss.length ? { p50: Math.round(pct(rss, 50)), max: Math.round(Math.max(...rss)) } : null,
      // From its own metrics: % of one core its collector spent analysing pools and writing them.
      collectorStagePercent: { analyse: share('stage="analyse"'), write: share('stage="write"') },
      metricsScrapesInWindow: scrapes,
    };
  } finally {
    if (server && server.exitCode === null) {
      const exited = new Promise((r) => server?.on('exit', r));
      server.kill('SIGTERM');
      await exited;
    }
    await sim.stop();
  }
}
