// Kill -9 in the middle of collecting, again and again, while the pool keeps changing: every restart must find
// a consistent database and continue the timeline with no duplicated and no missing transitions.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { startSimulation } from '@/sim/index';
import { readScenario } from '@/sim/world/scenario';
import { openSqlite } from '../store/sqlite';
import { TimelineStore } from '../store/store';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const POOL = 'mgmt-weu/default/pool0';
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
});

function startCollector(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['--conditions=react-server', '--import', 'tsx', path.join(ROOT, 'server', 'testing', 'collector-process.ts')],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('collecting')) resolve(child);
    });
    child.stderr?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.on('exit', (code) => reject(new Error(`the collector exited (${code}) before collecting:\n${out}`)));
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a collector killed with SIGKILL mid-cycle', () => {
  it('leaves a consistent store; restarts continue the timeline without duplicates or gaps', async () => {
    const sim = await startSimulation(readScenario(path.join(ROOT, 'sim', 'scenarios', 'seed-one-vm-failed.yaml')), {
      speed: 20,
      log: () => {},
    });
    const dbFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'poolscope-crash-')), 'db.sqlite');
    const env = {
      ...(sim.env as Record<string, string>),
      POOLSCOPE_DB_PATH: dbFile,
      POOLSCOPE_CONTEXTS: 'mgmt-weu',
      POOLSCOPE_FAST_INTERVAL_SECONDS: '1',
      POOLSCOPE_SLOW_INTERVAL_SECONDS: '2',
      POOLSCOPE_AZURE_BUDGET_SHARE: '0.5',
    };
    try {
      let replicas = 3;
      for (let round = 0; round < 4; round++) {
        const child = await startCollector(env);
        // Keep the pool moving so that cycles write while the kill lands.
        for (let i = 0; i < 3; i++) {
          replicas = replicas === 3 ? 5 : 3;
          sim.runStep({ at: 0, line: 0, scale: { cluster: 'mgmt-weu', name: 'pool0', replicas } });
          await sleep(150 + Math.floor(Math.random() * 400));
        }
        child.kill('SIGKILL');
        await new Promise((r) => child.once('exit', r));
        // The database opens, passes SQLite's integrity check, and holds whole cycles only.
        const db = new Database(dbFile, { readonly: true });
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
        db.close();
      }
      // A last, undisturbed run catches up with the world.
      const last = await startCollector(env);
      const store = new TimelineStore(openSqlite(dbFile));
      try {
        const end = Date.now() + 30_000;
        let desired: number | null | undefined;
        while (Date.now() < end) {
          desired = (await store.currentPool(POOL))?.summary.replicas.desired;
          if (desired === replicas) break;
          await sleep(200);
        }
        expect(desired).toBe(replicas);
        const tl = await store.timeline(POOL, '2000-01-01T00:00:00.000Z', '2100-01-01T00:00:00.000Z');
        const desiredChanges = tl.filter((e) => e.field === 'replicas.desired');
        expect(desiredChanges.length).toBeGreaterThan(1);
        expect(desiredChanges.at(-1)?.to).toBe(String(replicas));
        // Every field's transitions chain: each starts from where the previous one ended (no gap, no duplicate).
        const lastValue = new Map<string, string | null>();
        for (const e of tl) {
          // Drift items and Events are entries of their own, not a value that changes.
          if (e.field === 'drift' || e.field.startsWith('event.')) continue;
          if (lastValue.has(e.field)) expect(e.from, `${e.field} at ${e.at}`).toBe(lastValue.get(e.field));
          // (A finding may keep its severity and change its evidence: that is a transition with a new text.)
          if (!e.field.startsWith('finding.')) expect(e.from, `${e.field} at ${e.at} changed to itself`).not.toBe(e.to);
          lastValue.set(e.field, e.to);
        }
        // Each instant appears once per field: no cycle was written twice.
        const seen = new Set<string>();
        for (const e of tl) {
          const k = `${e.at}|${e.field}|${e.from}|${e.to}|${e.detail ?? ''}`;
          expect(seen.has(k), k).toBe(false);
          seen.add(k);
        }
        // An Event is recorded once, however many restarts relisted it.
        const events = tl.filter((e) => e.field.startsWith('event.')).map((e) => `${e.field}|${e.to}|${e.detail}`);
        expect(events.length).toBeGreaterThan(0);
        expect(events.filter((e, i) => events.indexOf(e) !== i)).toEqual([]);
      } finally {
        last.kill('SIGKILL');
        await store.close();
      }
    } finally {
      await sim.stop();
    }
  }, 120_000);
});
