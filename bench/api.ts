// API and page benchmark: a production build serving a seeded store (see api-seed.ts) to 50 concurrent
// clients; p50/p99 of the fleet, one 1,000-instance pool and its 30-day timeline, beside /api/healthz on the
// same server as the floor; then the pool page in Chromium: LCP and JavaScript transferred per page.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { chromium } from '@playwright/test';
import { standaloneServer } from './image';

const ROOT = path.resolve(import.meta.dirname, '..');
const PORT = 3210;

async function load(
  url: string,
  seconds: number,
): Promise<{ p50: number; p99: number; rps: number; errors: number; non2xx: number }> {
  const r = await autocannon({ url, connections: 50, duration: seconds });
  return {
    p50: r.latency.p50,
    p99: r.latency.p99,
    rps: Math.round(r.requests.average),
    errors: r.errors,
    non2xx: r.non2xx,
  };
}

async function pageMetrics(url: string): Promise<{ lcpMs: number; jsKB: number; totalKB: number }> {
  const browser = await chromium.launch({
    executablePath: process.env.POOLSCOPE_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    // Not 'networkidle': the page keeps its change stream open.
    await page.goto(url, { waitUntil: 'load' });
    await page.waitForTimeout(1500);
    const lcp = await page.evaluate(
      () =>
        new Promise<number>((resolve) => {
          new PerformanceObserver((l) => {
            const e = l.getEntries().at(-1);
            resolve(e ? e.startTime : NaN);
          }).observe({ type: 'largest-contentful-paint', buffered: true });
          setTimeout(() => resolve(NaN), 3000);
        }),
    );
    const sizes = await page.evaluate(() => {
      const res = performance.getEntriesByType('resource') as PerformanceResourceTiming[];
      const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
      const js = res
        .filter((r) => r.initiatorType === 'script' || r.name.endsWith('.js'))
        .reduce((a, r) => a + r.transferSize, 0);
      return { js, total: res.reduce((a, r) => a + r.transferSize, 0) + (nav?.transferSize ?? 0) };
    });
    return { lcpMs: Math.round(lcp), jsKB: Math.round(sizes.js / 1024), totalKB: Math.round(sizes.total / 1024) };
  } finally {
    await browser.close();
  }
}

export async function benchApi(): Promise<Record<string, unknown>> {
  const seconds = Number(process.env.POOLSCOPE_BENCH_SECONDS ?? 10);
  const serverJs = standaloneServer();
  // POOLSCOPE_BENCH_API_DB reuses a store seeded by an earlier run (seeding takes minutes).
  const reuse = process.env.POOLSCOPE_BENCH_API_DB;
  const db =
    reuse && existsSync(reuse)
      ? reuse
      : path.join(mkdtempSync(path.join(os.tmpdir(), 'poolscope-bench-api-')), 'bench.db');
  const t0 = Date.now();
  let storeStats: unknown = 'reused';
  if (db !== reuse) {
    const seed = spawnSync(
      process.execPath,
      ['--conditions=react-server', '--import', 'tsx', path.join(ROOT, 'bench', 'api-seed.ts'), db],
      { cwd: ROOT, encoding: 'utf8' },
    );
    if (seed.status !== 0) throw new Error(`seeding failed: ${seed.stderr}`);
    storeStats = JSON.parse(seed.stdout.trim().split('\n').at(-1) ?? '{}') as unknown;
  }
  const seedSeconds = Math.round((Date.now() - t0) / 1000);
  const server = spawn(process.execPath, [serverJs], {
    cwd: ROOT,
    env: {
      ...process.env,
      HOSTNAME: '127.0.0.1',
      PORT: String(PORT),
      POOLSCOPE_COLLECTOR: 'false',
      POOLSCOPE_DB_PATH: db,
      NEXT_TELEMETRY_DISABLED: '1',
    },
    stdio: 'ignore',
  });
  try {
    const base = `http://127.0.0.1:${PORT}`;
    for (let i = 0; i < 300; i++) {
      if (
        await fetch(`${base}/api/healthz`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const to = new Date().toISOString();
    const from = new Date(Date.now() - 30 * 86_400_000).toISOString();
    const big = `${base}/api/pools/mgmt-00/default/big`;
    const timeline = `${big}/timeline?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
    const body = (await (await fetch(timeline)).json()) as { entries: unknown[] };
    const out: Record<string, unknown> = {
      store: storeStats,
      db,
      seedSeconds,
      connections: 50,
      secondsPerEndpoint: seconds,
      timelineEntries30d: body.entries.length,
      // Pages first, on an idle server (after a load test it is still working through the queued requests).
      fleetPage: await pageMetrics(`${base}/`),
      poolPage30d: await pageMetrics(`${base}/pools/mgmt-00/default/big?range=30d`),
      healthzMs: await load(`${base}/api/healthz`, seconds),
      fleetMs: await load(`${base}/api/pools`, seconds),
      poolDetailMs: await load(big, seconds),
      poolTimeline30dMs: await load(timeline, seconds),
    };
    return out;
  } finally {
    server.kill('SIGTERM');
  }
}
