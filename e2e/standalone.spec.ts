// What the container image runs: the standalone server from the build output, started with only documented
// settings (the simulator's env file, a port, a database path), serves the dashboard, collects, and on SIGTERM
// stops cleanly — live streams ended, collector stopped, store closed — and exits 0.

import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { simEnv } from './fleet';

const ROOT = path.resolve(import.meta.dirname, '..');
const PORT = 3190;

test('the standalone server serves the dashboard and shuts down gracefully on SIGTERM', async ({ page }) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'poolscope-standalone-'));
  const child = spawn(process.execPath, [path.join(ROOT, '.next', 'standalone', 'server.js')], {
    // Only the documented environment: no inherited variables beyond PATH and HOME (NODE_ENV is what the
    // standalone server sets for itself).
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...simEnv(),
      PORT: String(PORT),
      HOSTNAME: '127.0.0.1',
      POOLSCOPE_DB_PATH: path.join(dir, 'poolscope.db'),
      NEXT_TELEMETRY_DISABLED: '1',
      NODE_ENV: 'production',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    await expect
      .poll(async () => (await fetch(`http://127.0.0.1:${PORT}/api/readyz`).catch(() => null))?.status ?? 0, {
        timeout: 60_000,
      })
      .toBe(200);
    await page.goto(`http://127.0.0.1:${PORT}/`);
    await expect(page.locator('tr[data-pool="mgmt-neu/default/general"]')).toBeVisible();
    // A live stream is open when the signal comes; it must end, not hang.
    const stream = await fetch(`http://127.0.0.1:${PORT}/api/stream`);
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    const t0 = Date.now();
    child.kill('SIGTERM');
    let ended = false;
    for (;;) {
      const r = await reader.read().catch(() => ({ done: true }));
      if (r.done) {
        ended = true;
        break;
      }
    }
    expect(ended).toBe(true);
    expect(await exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(25_000);
    const lines = output
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.find((l) => l.msg === 'shutting down')).toMatchObject({
      level: 'info',
      signal: 'SIGTERM',
      service: 'poolscope',
    });
    expect(lines.find((l) => l.msg === 'stopped cleanly')).toBeTruthy();
    // Requests were logged as JSON with what makes them traceable; the collector's cycles in a summary (a minute's,
    // or at shutdown what is left), not one line each.
    expect(lines.find((l) => l.msg === 'request' && l.path === '/api/stream')).toMatchObject({
      status: 200,
      requestId: expect.any(String),
    });
    expect(lines.find((l) => l.msg === 'collector cycles')).toMatchObject({
      level: 'info',
      cycles: expect.any(Number),
      poolStates: expect.any(Number),
      firstCycle: expect.any(String),
    });
    expect(lines.filter((l) => l.msg === 'collector cycle')).toEqual([]);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});
