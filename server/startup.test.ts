// Start-up that cannot go on ends the process: exit code 1 and a message saying what is wrong and what to do, no
// stack trace. Under Next a start-up that rejects instead leaves a server answering every request, liveness
// included, with 500, for ever.

import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { corruptHeader, corruptTables, seedStore } from './testing/corrupt-store';

const ROOT = path.resolve(import.meta.dirname, '..');

/**
 * What the test runner's Node was started with, passed on: npm test's node24 suite preloads the better-sqlite3
 * built for Node 24 (NODE_OPTIONS, POOLSCOPE_TEST_SQLITE_ADDON: scripts/node24.mjs).
 */
const runnersNode = (): Record<string, string> =>
  Object.fromEntries(
    ['NODE_OPTIONS', 'POOLSCOPE_TEST_SQLITE_ADDON'].flatMap((k) =>
      process.env[k] ? [[k, process.env[k] as string]] : [],
    ),
  );

/** Runs start-up as the server does, with `env` over a bare environment; its exit code and output. */
function start(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(
    process.execPath,
    ['--conditions=react-server', '--import', 'tsx', path.join(ROOT, 'server', 'testing', 'start-process.ts')],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        NODE_ENV: 'test',
        POOLSCOPE_LOG_LEVEL: 'warn',
        ...runnersNode(),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

/** A kubeconfig whose one context points at nothing (the collector fails on the store before it calls it). */
function kubeconfig(dir: string): string {
  const file = path.join(dir, 'kubeconfig');
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'nowhere',
      clusters: [{ name: 'nowhere', cluster: { server: 'https://127.0.0.1:9' } }],
      users: [{ name: 'u', user: { token: 'x' } }],
      contexts: [{ name: 'nowhere', context: { cluster: 'nowhere', user: 'u' } }],
    }),
  );
  return file;
}

const advice = (file: string) =>
  `With poolscope stopped, restore ${file} from a backup, or move it away together with ${file}-wal and ${file}-shm (poolscope then starts with an empty store).`;

describe('start-up on a corrupt SQLite store', () => {
  it.each([
    ['without the collector', false],
    ['with the collector', true],
  ])(
    'exits 1 with a message naming the file and what to do (%s)',
    async (_name, collecting) => {
      const file = await seedStore();
      corruptTables(file, ['pool_rows']);
      const env: Record<string, string> = { POOLSCOPE_DB_PATH: file, POOLSCOPE_COLLECTOR: String(collecting) };
      if (collecting) env.KUBECONFIG = kubeconfig(path.dirname(file));
      const r = await start(env);
      expect(r.code).toBe(1);
      expect(r.stdout).not.toMatch(/started|start-up rejected/);
      expect(r.stderr).toMatch(
        new RegExp(`^poolscope's SQLite store ${file} is corrupt \\(table pool_rows: [^\\n]+\\)\\. `),
      );
      expect(r.stderr.trimEnd().endsWith(advice(file))).toBe(true);
      // One line: no stack trace.
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    },
    60_000,
  );

  it('exits 1 with the same advice when the header is overwritten', async () => {
    const file = await seedStore();
    corruptHeader(file);
    const r = await start({ POOLSCOPE_DB_PATH: file, POOLSCOPE_COLLECTOR: 'false' });
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd()).toBe(
      `poolscope's SQLite store ${file} is corrupt (SQLITE_NOTADB: file is not a database). ${advice(file)}`,
    );
  }, 60_000);

  it('starts on a sound store', async () => {
    const file = await seedStore();
    const r = await start({ POOLSCOPE_DB_PATH: file, POOLSCOPE_COLLECTOR: 'false' });
    expect({ code: r.code, stdout: r.stdout.trim() }).toEqual({ code: 0, stdout: 'started' });
  }, 60_000);
});
