// The standalone server on a corrupt SQLite store. Start-up on a file damaged where it reads ends the process (exit
// 1, a message naming the file and what to do) instead of serving 500 on every path, liveness included, for ever.
// Damage met while serving shows on the page that met it, and fails readiness and liveness with the reason.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from '@playwright/test';

const ROOT = path.resolve(import.meta.dirname, '..');
const PORT = 3191;
const URL = `http://127.0.0.1:${PORT}`;

/** A store written by poolscope, damaged in `tables`; its file. */
function seed(tables: string[]): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'poolscope-e2e-corrupt-'));
  const r = spawnSync(
    process.execPath,
    [
      '--conditions=react-server',
      '--import',
      'tsx',
      path.join(ROOT, 'server', 'testing', 'seed-corrupt.ts'),
      dir,
      ...tables,
    ],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`seeding failed: ${r.stderr}`);
  return r.stdout.trim();
}

/** Servers still running when a test ends (one that timed out too) are killed. */
const running: ChildProcess[] = [];
test.afterEach(() => {
  for (const c of running.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});

/** The standalone server on `file`, with `env` besides; its output so far and its exit code once it exits. */
function serve(file: string, env: Record<string, string>) {
  const child = spawn(process.execPath, [path.join(ROOT, '.next', 'standalone', 'server.js')], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: String(PORT),
      HOSTNAME: '127.0.0.1',
      POOLSCOPE_DB_PATH: file,
      NEXT_TELEMETRY_DISABLED: '1',
      NODE_ENV: 'production',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  let output = '';
  child.stdout.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

const status = async (p: string) => (await fetch(`${URL}${p}`).catch(() => null))?.status ?? 0;

test('start-up on a store damaged where it reads exits 1 with a message, not a server answering 500', async () => {
  test.setTimeout(120_000);
  const file = seed(['pool_rows']);
  // The collector on, with a cluster that is never reached: the store fails first.
  const kubeconfig = path.join(path.dirname(file), 'kubeconfig');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'nowhere',
      clusters: [{ name: 'nowhere', cluster: { server: 'https://127.0.0.1:9' } }],
      users: [{ name: 'u', user: { token: 'x' } }],
      contexts: [{ name: 'nowhere', context: { cluster: 'nowhere', user: 'u' } }],
    }),
  );
  const s = serve(file, { KUBECONFIG: kubeconfig });
  const code = await Promise.race([s.exited, new Promise<'running'>((r) => setTimeout(() => r('running'), 30_000))]);
  expect(
    code,
    `the server still runs; healthz answers ${await status('/api/healthz')}\n${s.output().slice(0, 1500)}`,
  ).toBe(1);
  expect(s.output()).toContain(`poolscope's SQLite store ${file} is corrupt (table pool_rows: `);
  expect(s.output()).toContain(
    `With poolscope stopped, restore ${file} from a backup, or move it away together with ${file}-wal and ${file}-shm`,
  );
  expect(s.output()).not.toMatch(/^\s+at /m);
});

test('damage met while serving: the page names the store problem, readiness and liveness fail', async ({ page }) => {
  test.setTimeout(120_000);
  const file = seed(['pool_history']);
  serve(file, { POOLSCOPE_COLLECTOR: 'false' });
  await expect.poll(() => status('/api/readyz'), { timeout: 60_000 }).toBe(200);
  // The pool as it was half an hour into its history: the damaged pages.
  await page.goto(`${URL}/pools/mgmt-weu/default/busy?at=2026-11-29T10:30:00.000Z`);
  await expect(page.getByRole('alert').filter({ hasText: 'The store is failing' })).toContainText(
    `poolscope's SQLite store ${file} is corrupt`,
  );
  for (const p of ['/api/readyz', '/api/healthz']) {
    const res = await fetch(`${URL}${p}`);
    expect(res.status, p).toBe(503);
    expect(((await res.json()) as { error: { code: string } }).error.code, p).toBe('store-failing');
  }
});
