// Production-server benchmark: the production build (`node server.js`, the collector inside Next's server, as the
// image runs it) collecting a simulated fleet with churn, measured from outside as an operator sees the pod: its
// RSS and CPU (Linux /proc), and from its own /api/metrics, scraped every 15 s as Prometheus would, the share of
// time its collector spent analysing and writing. The `collector` suite measures the collector alone, in more
// detail; this one says whether the product itself costs what that one says.
// Size: POOLSCOPE_BENCH_FLEET (default 10x10x20,subs=4,churn=0.01); window: POOLSCOPE_BENCH_SECONDS (default 90).

import { pct } from './pct';
import { startFleet } from './fleet';
import { procStats, samples, startProductionServer, untilAllRead } from './prod-server';

const PORT = 3211;
const SCRAPE_MS = 15_000;

export async function benchServer(): Promise<Record<string, unknown>> {
  const fleet = process.env.POOLSCOPE_BENCH_FLEET ?? '10x10x20,subs=4,churn=0.01';
  const seconds = Number(process.env.POOLSCOPE_BENCH_SECONDS ?? 90);
  const warmupLimit = Number(process.env.POOLSCOPE_BENCH_WARMUP_SECONDS ?? 300);
  const sim = await startFleet(fleet, 'poolscope-bench-server-');
  const { contexts } = sim;
  let server: ReturnType<typeof startProductionServer> | null = null;
  try {
    server = startProductionServer(sim, PORT);
    const { preload, mallocConf, scrape } = server;
    const pid = server.process.pid as number;
    // Warm-up: until every pool is known and read from Azure, scraping as Prometheus would.
    const warm = await untilAllRead(server, warmupLimit, SCRAPE_MS);
    const pools = warm.pools;
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
      allReadFromAzureSeconds: warm.seconds,
      // The server process as the pod's: CPU % of one core and RSS (Linux; null elsewhere).
      cpuPercentOfOneCore: p0 && p1 ? Math.round(((p1.cpuMs - p0.cpuMs) / wallMs) * 1000) / 10 : null,
      rssMB: rss.length ? { p50: Math.round(pct(rss, 50)), max: Math.round(Math.max(...rss)) } : null,
      // From its own metrics: % of one core its collector spent analysing pools and writing them.
      collectorStagePercent: { analyse: share('stage="analyse"'), write: share('stage="write"') },
      metricsScrapesInWindow: scrapes,
    };
  } finally {
    await server?.stop();
    await sim.stop();
  }
}
