// API and page benchmark: a production build serving a seeded store (see api-seed.ts) to 50 concurrent
// clients that accept compressed answers, as browsers do; p50/p99 of the fleet, one 1,000-instance pool and its
// 30-day timeline (fixed instants, and the named range the page asks for), beside /api/healthz on the same server
// as the floor, and each p99 as a multiple of the floor's; then the fleet and pool pages in Chromium: LCP and
// bytes transferred per page.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { chromium, type Browser } from '@playwright/test';
import { standaloneServer } from './image';

const ROOT = path.resolve(import.meta.dirname, '..');
const PORT = 3210;

/** What a browser sends: every answer may come compressed. */
const BROWSER_HEADERS = { 'accept-encoding': 'gzip, deflate, br, zstd' };

async function load(
  url: string,
  seconds: number,
): Promise<{
  p50: number;
  p99: number;
  rps: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  kBPerAnswer: number;
}> {
  const r = await autocannon({ url, connections: 50, duration: seconds, headers: BROWSER_HEADERS });
  return {
    p50: r.latency.p50,
    p99: r.latency.p99,
    rps: Math.round(r.requests.average),
    errors: r.errors,
    timeouts: r.timeouts,
    non2xx: r.non2xx,
    kBPerAnswer: Math.round(r.throughput.total / Math.max(1, r.requests.total) / 1024),
  };
}

/** Each endpoint's p99 as a multiple of the floor's (healthz), the aims beside them. */
function ratios(floor: { p99: number }, got: Record<string, { p99: number }>): Record<string, number> {
  return Object.fromEntries(Object.entries(got).map(([k, v]) => [k, Math.round((v.p99 / floor.p99) * 100) / 100]));
}

/** One load of a page in a fresh tab: its LCP, and the bytes it transferred. */
async function loadPage(
  browser: Browser,
  url: string,
): Promise<{ lcpMs: number; fcpMs: number; jsKB: number; totalKB: number }> {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  try {
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
      const fcp = performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN;
      return { js, fcp, total: res.reduce((a, r) => a + r.transferSize, 0) + (nav?.transferSize ?? 0) };
    });
    return {
      lcpMs: Math.round(lcp),
      fcpMs: Math.round(sizes.fcp),
      jsKB: Math.round(sizes.js / 1024),
      totalKB: Math.round(sizes.total / 1024),
    };
  } finally {
    await page.close();
  }
}

/**
 * A page's LCP: its first load after the server started (`cold`: the page's code is loaded then), and the median
 * of three loads after it (`lcpMs`, what the aim is held to), each in a fresh tab.
 */
async function pageMetrics(url: string): Promise<Record<string, number>> {
  const browser = await chromium.launch({
    executablePath: process.env.POOLSCOPE_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
  try {
    const cold = await loadPage(browser, url);
    const warm: Awaited<ReturnType<typeof loadPage>>[] = [];
    for (let i = 0; i < 3; i++) warm.push(await loadPage(browser, url));
    const median = (k: 'lcpMs' | 'fcpMs') => warm.map((w) => w[k]).sort((a, b) => a - b)[1] as number;
    return {
      lcpMs: median('lcpMs'),
      fcpMs: median('fcpMs'),
      lcpColdMs: cold.lcpMs,
      jsKB: cold.jsKB,
      totalKB: cold.totalKB,
    };
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
    };
    const endpoints = {
      fleetMs: await load(`${base}/api/pools`, seconds),
      poolDetailMs: await load(big, seconds),
      poolTimeline30dMs: await load(timeline, seconds),
      // What the pool page itself asks for: the named range, shared by every reader for up to 5 s.
      poolTimelineRange30dMs: await load(`${big}/timeline?range=30d`, seconds),
    };
    // The floor measured again after the load: the lower of the two p99s is the one the ratios divide by.
    const healthzAfterMs = await load(`${base}/api/healthz`, seconds);
    const floor = Math.min((out.healthzMs as { p99: number }).p99, healthzAfterMs.p99);
    // Aims: fleet ≤ 2, pool detail ≤ 3, 30-day timeline ≤ 4 (issue #57).
    return { ...out, ...endpoints, healthzAfterMs, p99OverHealthz: ratios({ p99: floor }, endpoints) };
  } finally {
    server.kill('SIGTERM');
  }
}
