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
      warn: (fields: object, msg: string) => void lines.push({ level: 'warn', msg, fields: fields as Record<string, unknown> }),
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
    // Reports what it deletes as the store does: each transaction's rows, each pool dropped.
    const store = {
      prune: async (_before: string, o?: PruneOptions) => {
        calls++;
        await new Promise<void>((r) => (release = r));
        o?.onDeleted?.('transitions', 1);
        o?.onDeleted?.('history', 2);
        o?.onDeleted?.('cycles', 3);
        for (let i = 0; i < 4; i++) o?.onDropped?.(`ctx/ns/p${i}`);
        return { transitions: 1, history: 2, cycles: 3, pools: 4, batches: 4 };
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
    // What it deleted before it stopped counts (a long prune's progress shows in the metrics).
    expect(r.get()).toMatchObject({ running: false, pruned: false, failures: 0, deleted: { cycles: transactions } });
    r.start();
    await r.pruneNow();
    expect((await cycles(store)).length).toBe(left);
  });
});

describe('retention with a size limit (POOLSCOPE_RETENTION_MAX_SIZE)', () => {
  const HOUR = 3_600_000;
  /** A store with an 8 KB timeline entry an hour for 20 days, the newest now, and `lastHourKB` more in the last hour. */
  async function filled(lastHourKB = 0): Promise<TimelineStore> {
    const s = await storeWithCycles(0);
    const entries = Array.from({ length: 20 * 24 }, (_, i) => ({ at: new Date(now - (20 * 24 - 1 - i) * HOUR).toISOString(), poolKey: 'ctx/ns/pool', field: 'event.Big', from: null, to: `hour ${i}`, detail: 'x'.repeat(8192) }));
    const recent = Array.from({ length: lastHourKB / 8 }, (_, i) => ({ at: new Date(now - 60_000).toISOString(), poolKey: 'ctx/ns/pool', field: 'event.Recent', from: null, to: `recent ${i}`, detail: 'y'.repeat(8192) }));
    await s.appendEntries([...entries, ...recent]);
    return s;
  }
  const used = async (s: TimelineStore) => (await s.sizeBytes()) - ((await s.freeBytes()) ?? 0);
  const timeline = (s: TimelineStore) => s.timeline('ctx/ns/pool', '2000-01-01T00:00:00.000Z', '2100-01-01T00:00:00.000Z');

  it('prunes the oldest history past the retention days until the store fits, and says so', async () => {
    const store = await filled();
    const { lines, log } = recorder();
    const max = 2 * 2 ** 20;
    expect(await used(store)).toBeGreaterThan(max);
    const r = new Retention({ store, retentionDays: 30, maxBytes: max, log, now: () => now });
    cleanups.push(async () => {
      await r.stop();
      await store.close();
    });
    await r.pruneNow();
    const st = r.get();
    expect(st.usedBytes).toBeLessThanOrEqual(max);
    expect(await used(store)).toBe(st.usedBytes);
    // The oldest went, the newest stayed; the cutoff says where history now starts.
    const left = await timeline(store);
    expect(left.length).toBeGreaterThan(0);
    expect(left.length).toBeLessThan(20 * 24);
    expect(left.at(-1)?.to).toBe(`hour ${20 * 24 - 1}`);
    expect(left[0]!.at >= (st.cutoff as string)).toBe(true);
    expect(Date.parse(st.cutoff as string)).toBeGreaterThan(now - 20 * 24 * HOUR);
    expect(lines.map((l) => `${l.level} ${l.msg}`)).toEqual(['info store pruned', 'warn store pruned to its size limit: history before this is gone']);
    // The next run finds it fits: nothing more goes.
    await r.pruneNow();
    expect(await timeline(store)).toHaveLength(left.length);
  });

  it('keeps the last hour even past the limit, and says the limit is too small', async () => {
    const store = await filled(2048);
    const { lines, log } = recorder();
    const r = new Retention({ store, retentionDays: 30, maxBytes: 2 ** 20, log, now: () => now });
    cleanups.push(async () => {
      await r.stop();
      await store.close();
    });
    await r.pruneNow();
    const left = await timeline(store);
    expect(left.filter((e) => e.field === 'event.Recent')).toHaveLength(256);
    expect(left.every((e) => Date.parse(e.at) >= now - HOUR)).toBe(true);
    expect(r.get()).toMatchObject({ pruned: true, failures: 0 });
    expect(lines.some((l) => l.level === 'error' && /only its last hour left/.test(l.msg))).toBe(true);
  });
});
