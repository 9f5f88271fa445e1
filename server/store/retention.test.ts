// Retention's job: prunes at start and on its interval, one prune at a time, logs and counts a failure (and
// tries again), and stops between two transactions of a running prune.

import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Retention } from './retention';
import { openSqlite } from './sqlite';
import { TimelineStore, type PruneOptions } from './store';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const DAY = 86_400_000;
const now = Date.parse('2026-12-04T12:00:00.000Z');

/** A SQLite store with `n` cycles a day apart, the newest now. */
async function storeWithCycles(n: number): Promise<TimelineStore> {
  const s = new TimelineStore(openSqlite(path.join(mkdtempSync(path.join(os.tmpdir(), 'poolscope-retention-')), 'r.db')));
  await s.migrate();
  for (let i = 0; i < n; i++) await s.writeCycle({ id: `c${i}`, at: new Date(now - (n - 1 - i) * DAY).toISOString() }, []);
  return s;
}

function recorder() {
  const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
  return {
    lines,
    log: {
      info: (fields: object, msg: string) => void lines.push({ level: 'info', msg, fields: fields as Record<string, unknown> }),
      error: (fields: object, msg: string) => void lines.push({ level: 'error', msg, fields: fields as Record<string, unknown> }),
    } as never,
  };
}

const cycles = async (s: TimelineStore) => (await (s as unknown as { db: { all(q: string): Promise<{ id: string }[]> } }).db.all('SELECT id FROM cycles ORDER BY at')).map((r) => r.id);

describe('retention', () => {
  it('prunes what is older than the retention at start, and logs what it deleted', async () => {
    const store = await storeWithCycles(10);
    const { lines, log } = recorder();
    const r = new Retention({ store, retentionDays: 3, log, now: () => now });
    cleanups.push(async () => {
      await r.stop();
      await store.close();
    });
    expect(r.get()).toMatchObject({ pruned: false, running: false, failures: 0, lastPrunedAt: new Date(now).toISOString() });
    r.start();
    expect(r.get().running).toBe(true);
    await r.pruneNow();
    // Three days back from now: the cycles of the last three days and today's stay.
    expect(await cycles(store)).toEqual(['c6', 'c7', 'c8', 'c9']);
    expect(r.get()).toMatchObject({ pruned: true, running: false, failures: 0, lastError: null, deleted: { cycles: 6, history: 0, transitions: 0, pools: 0 } });
    expect(lines).toEqual([expect.objectContaining({ level: 'info', msg: 'store pruned', fields: expect.objectContaining({ before: new Date(now - 3 * DAY).toISOString(), cycles: 6 }) })]);
  });

  it('runs one prune at a time, and again on its interval', async () => {
    let calls = 0;
    let release: () => void = () => {};
    const store = {
      prune: async () => {
        calls++;
        await new Promise<void>((r) => (release = r));
        return { transitions: 1, history: 2, cycles: 3, pools: 4, batches: 1 };
      },
    };
    const r = new Retention({ store, retentionDays: 1, log: recorder().log, intervalMs: 20 });
    cleanups.push(() => r.stop());
    r.start();
    const first = r.pruneNow();
    // The interval's ticks while it runs wait for it, they do not start another.
    await new Promise((res) => setTimeout(res, 80));
    expect(calls).toBe(1);
    release();
    await first;
    expect(r.get().deleted).toEqual({ transitions: 1, history: 2, cycles: 3, pools: 4 });
    await new Promise((res) => setTimeout(res, 80));
    expect(calls).toBe(2);
    release();
  });

  it('logs and counts a prune that fails, and the next one clears the error', async () => {
    const store = await storeWithCycles(5);
    let broken = true;
    const flaky = { prune: (before: string, o?: PruneOptions) => (broken ? Promise.reject(new Error('database or disk is full')) : store.prune(before, o)) };
    const { lines, log } = recorder();
    const r = new Retention({ store: flaky, retentionDays: 1, log, now: () => now });
    cleanups.push(async () => {
      await r.stop();
      await store.close();
    });
    await r.pruneNow();
    expect(r.get()).toMatchObject({ pruned: false, failures: 1, lastError: 'database or disk is full' });
    expect(lines.at(-1)).toMatchObject({ level: 'error', msg: 'store prune failed', fields: { err: 'database or disk is full' } });
    broken = false;
    await r.pruneNow();
    expect(r.get()).toMatchObject({ pruned: true, failures: 1, lastError: null });
    expect(await cycles(store)).toEqual(['c3', 'c4']);
  });

  it('stops a running prune between two transactions, and waits for it', async () => {
    const store = await storeWithCycles(40);
    const { lines, log } = recorder();
    let transactions = 0;
    const r = new Retention({ store, retentionDays: 1, log, now: () => now, prune: { batchRows: 1, pause: () => new Promise((res) => setTimeout(() => res(void transactions++), 5)) } });
    cleanups.push(() => store.close());
    r.start();
    await new Promise((res) => setTimeout(res, 30));
    await r.stop();
    const left = (await cycles(store)).length;
    // Some went, one a transaction, not all; and it does not start again.
    expect(left).toBe(40 - transactions);
    expect(left).toBeGreaterThan(2);
    expect(lines.at(-1)).toMatchObject({ level: 'info', msg: 'store prune stopped' });
    expect(r.get()).toMatchObject({ running: false, pruned: false, failures: 0 });
    r.start();
    await r.pruneNow();
    expect((await cycles(store)).length).toBe(left);
  });
});
