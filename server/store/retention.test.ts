// Retention's job: prunes at start and on its interval, one prune at a time, logs and counts a failure (and
// tries again), and stops between two transactions of a running prune.

import { mkdtempSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
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

/**
 * A SQLite store with `n` cycles a day apart, the newest now; `legacy`: its file created before poolscope turned
 * incremental vacuum on (by another program: a table is there already).
 */
async function storeWithCycles(
  n: number,
  file = path.join(mkdtempSync(path.join(os.tmpdir(), 'poolscope-retention-')), 'r.db'),
  legacy = false,
): Promise<TimelineStore> {
  if (legacy) {
    const d = new Database(file);
    d.exec('CREATE TABLE before_poolscope (x INTEGER)');
    d.close();
  }
  const s = new TimelineStore(openSqlite(file));
  await s.migrate();
  for (let i = 0; i < n; i++)
    await s.writeCycle({ id: `c${i}`, at: new Date(now - (n - 1 - i) * DAY).toISOString() }, []);
  return s;
}

function recorder() {
  const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
  return {
    lines,
    log: {
      info: (fields: object, msg: string) =>
        void lines.push({ level: 'info', msg, fields: fields as Record<string, unknown> }),
      warn: (fields: object, msg: string) =>
        void lines.push({ level: 'warn', msg, fields: fields as Record<string, unknown> }),
      error: (fields: object, msg: string) =>
        void lines.push({ level: 'error', msg, fields: fields as Record<string, unknown> }),
    } as never,
  };
}

const cycles = async (s: TimelineStore) =>
  (
    await (s as unknown as { db: { all(q: string): Promise<{ id: string }[]> } }).db.all(
      'SELECT id FROM cycles ORDER BY at',
    )
  ).map((r) => r.id);

describe('retention', () => {
  it('prunes what is older than the retention at start, and logs what it deleted', async () => {
    const store = await storeWithCycles(10);
    const { lines, log } = recorder();
    const r = new Retention({ store, retentionDays: 3, log, now: () => now });
    cleanups.push(async () => {
      await r.stop();
      await store.close();
    });
    expect(r.get()).toMatchObject({
      pruned: false,
      running: false,
      failures: 0,
      lastPrunedAt: new Date(now).toISOString(),
    });
    r.start();
    expect(r.get().running).toBe(true);
    await r.pruneNow();
    // Three days back from now: the cycles of the last three days and today's stay.
    expect(await cycles(store)).toEqual(['c6', 'c7', 'c8', 'c9']);
    expect(r.get()).toMatchObject({
      pruned: true,
      running: false,
      failures: 0,
      lastError: null,
      deleted: { cycles: 6, history: 0, transitions: 0, pools: 0 },
    });
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'info',
        msg: 'store pruned',
        fields: expect.objectContaining({ before: new Date(now - 3 * DAY).toISOString(), cycles: 6 }),
      }),
    ]);
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
    const flaky = {
      prune: (before: string, o?: PruneOptions) =>
        broken ? Promise.reject(new Error('database or disk is full')) : store.prune(before, o),
    };
    const { lines, log } = recorder();
    const r = new Retention({ store: flaky, retentionDays: 1, log, now: () => now });
    cleanups.push(async () => {
      await r.stop();
      await store.close();
    });
    await r.pruneNow();
    expect(r.get()).toMatchObject({ pruned: false, failures: 1, lastError: 'database or disk is full' });
    expect(lines.at(-1)).toMatchObject({
      level: 'error',
      msg: 'store prune failed',
      fields: { err: 'database or disk is full' },
    });
    broken = false;
    await r.pruneNow();
    expect(r.get()).toMatchObject({ pruned: true, failures: 1, lastError: null });
    expect(await cycles(store)).toEqual(['c3', 'c4']);
  });

  it('stops a running prune between two transactions, and waits for it', async () => {
    const store = await storeWithCycles(40);
    const { lines, log } = recorder();
    let transactions = 0;
    const r = new Retention({
      store,
      retentionDays: 1,
      log,
      now: () => now,
      prune: { batchRows: 1, pause: () => new Promise((res) => setTimeout(() => res(void transactions++), 5)) },
    });
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

/** A pragma's first value, read from the store's own connection. */
const pragma = async (s: TimelineStore, name: string) =>
  Object.values(
    (
      await (s as unknown as { db: { all(q: string): Promise<Record<string, unknown>[]> } }).db.all(`PRAGMA ${name}`)
    )[0] ?? {},
  )[0];

describe('retention with a size limit (POOLSCOPE_RETENTION_MAX_SIZE)', () => {
  const HOUR = 3_600_000;
  /** A store with an 8 KB timeline entry an hour for 20 days, the newest now, and `lastHourKB` more in the last hour. */
  async function filled(lastHourKB = 0, file?: string, legacy = false): Promise<TimelineStore> {
    const s = await storeWithCycles(0, file, legacy);
    const entries = Array.from({ length: 20 * 24 }, (_, i) => ({
      at: new Date(now - (20 * 24 - 1 - i) * HOUR).toISOString(),
      poolKey: 'ctx/ns/pool',
      field: 'event.Big',
      from: null,
      to: `hour ${i}`,
      detail: 'x'.repeat(8192),
    }));
    const recent = Array.from({ length: lastHourKB / 8 }, (_, i) => ({
      at: new Date(now - 60_000).toISOString(),
      poolKey: 'ctx/ns/pool',
      field: 'event.Recent',
      from: null,
      to: `recent ${i}`,
      detail: 'y'.repeat(8192),
    }));
    await s.appendEntries([...entries, ...recent]);
    return s;
  }
  const used = async (s: TimelineStore) => (await s.sizeBytes()) - ((await s.freeBytes()) ?? 0);
  const timeline = (s: TimelineStore) =>
    s.timeline('ctx/ns/pool', '2000-01-01T00:00:00.000Z', '2100-01-01T00:00:00.000Z');

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
    expect(lines.map((l) => `${l.level} ${l.msg}`)).toEqual([
      'info store pruned',
      'warn store pruned to its size limit: history before this is gone',
    ]);
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

  describe('giving free room back to the file system', () => {
    const keep = { fraction: 0.1, minBytes: 0 };
    /** Five days of the store's twenty kept (three quarters of the file freed), with `shrinkKeep`; its log. */
    const retained = (store: TimelineStore, shrinkKeep = keep) => {
      const { lines, log } = recorder();
      const r = new Retention({ store, retentionDays: 5, log, now: () => now, shrinkKeep });
      cleanups.push(async () => {
        await r.stop();
        await store.close();
      });
      return { r, lines };
    };

    it('shrinks the file to a tenth free once a prune left more than a fifth free, and keeps the history left whole', async () => {
      const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'poolscope-retention-')), 'r.db');
      const store = await filled(0, file);
      const { r, lines } = retained(store);
      const sizeBefore = await store.sizeBytes();
      await r.pruneNow();
      const size = await store.sizeBytes();
      const free = (await store.freeBytes()) as number;
      expect(size).toBeLessThan(sizeBefore / 2);
      // A tenth of the file as it is now, give or take a page.
      expect(free).toBeLessThanOrEqual(size * keep.fraction + 4096);
      expect(free).toBeGreaterThanOrEqual(size * keep.fraction - 8192);
      expect(r.get().shrunkBytes).toBe(sizeBefore - size);
      expect(lines.map((l) => `${l.level} ${l.msg}`)).toEqual(['info store pruned', 'info store file shrunk']);
      // The file on disk too, once the WAL is written back into it.
      await pragma(store, 'wal_checkpoint(TRUNCATE)');
      expect(statSync(file).size).toBe(size);
      expect(await pragma(store, 'integrity_check')).toBe('ok');
      const left = await timeline(store);
      expect(left).toHaveLength(5 * 24 + 1);
      expect(left.map((e) => e.to)).toEqual(Array.from({ length: 5 * 24 + 1 }, (_, i) => `hour ${15 * 24 - 1 + i}`));
      // Nothing more to give back: the next prune leaves the file as it is.
      await r.pruneNow();
      expect(await store.sizeBytes()).toBe(size);
      expect(lines.filter((l) => l.msg === 'store file shrunk')).toHaveLength(1);
    });

    it('shrinks in small transactions, letting others run between them, and stops when asked', async () => {
      const store = await filled();
      cleanups.push(() => store.close());
      await store.prune(new Date(now - 5 * DAY).toISOString());
      const [size, free] = [await store.sizeBytes(), (await store.freeBytes()) as number];
      const stop = new AbortController();
      let pauses = 0;
      let written = 0;
      const pause = async () => {
        // Another writer (the collector) between two transactions.
        await store.appendEntries([
          {
            at: new Date(now).toISOString(),
            poolKey: 'ctx/ns/pool',
            field: 'event.Between',
            from: null,
            to: `between ${written++}`,
          },
        ]);
        if (++pauses === 3) stop.abort(new Error('stopped by the test'));
      };
      await expect(store.shrink(0, { batchPages: 10, pause, signal: stop.signal })).rejects.toThrow(
        'stopped by the test',
      );
      expect(await store.sizeBytes()).toBeLessThanOrEqual(size - 3 * 10 * 4096);
      expect(await store.sizeBytes()).toBeGreaterThan(size - free);
      // Run again, it finishes; what was written between its transactions is there, and so is the history.
      const shrunk = (await store.shrink(0, { batchPages: 10, pause: async () => void pauses++ })) as number;
      expect(pauses).toBeGreaterThan(free / 4096 / 10 - 1);
      expect(shrunk).toBeGreaterThan(0);
      expect(await store.freeBytes()).toBe(0);
      const left = await timeline(store);
      expect(
        left
          .filter((e) => e.field === 'event.Between')
          .map((e) => e.to)
          .sort(),
      ).toEqual(['between 0', 'between 1', 'between 2']);
      expect(left.filter((e) => e.field === 'event.Big')).toHaveLength(5 * 24 + 1);
    });

    it('keeps the free room it is told to keep', async () => {
      const store = await filled();
      const { r } = retained(store, { fraction: 0.1, minBytes: 2 ** 20 });
      await r.pruneNow();
      const free = (await store.freeBytes()) as number;
      expect(free).toBeGreaterThanOrEqual(2 ** 20 - 4096);
      expect(free).toBeLessThanOrEqual(2 ** 20);
      expect(r.get().shrunkBytes).toBeGreaterThan(0);
    });

    it('says once how to shrink a file created before incremental vacuum, and prunes it as before', async () => {
      const store = await filled(0, undefined, true);
      expect(await pragma(store, 'auto_vacuum')).toBe(0);
      const { r, lines } = retained(store);
      const sizeBefore = await store.sizeBytes();
      await r.pruneNow();
      await r.pruneNow();
      expect(await store.sizeBytes()).toBe(sizeBefore);
      expect(await timeline(store)).toHaveLength(5 * 24 + 1);
      expect(r.get()).toMatchObject({ pruned: true, failures: 0, shrunkBytes: 0 });
      const told = lines.filter((l) => l.level === 'warn');
      expect(told).toHaveLength(1);
      expect(told[0]!.msg).toMatch(/PRAGMA auto_vacuum = INCREMENTAL; VACUUM/);
    });
  });

  it('a new SQLite store is created with incremental auto-vacuum', async () => {
    const store = await storeWithCycles(0);
    cleanups.push(() => store.close());
    expect(await pragma(store, 'auto_vacuum')).toBe(2);
  });
});
