// One contract, two drivers: SQLite always; PostgreSQL when one is reachable (CI starts it on 127.0.0.1:5432).

import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzePool } from '@/lib/analyze';
import type { PoolDetail } from '@/lib/api-types';
import { buildScenario } from '@/lib/fixtures/scenarios';
import { diffDetails } from '@/lib/transitions';
import { createTestDatabase } from '../testing/postgres';
import { openPostgres } from './postgres';
import { openSqlite } from './sqlite';
import { KEYFRAME_EVERY, TimelineStore, type SqlDb } from './store';

const testDb = await createTestDatabase('PostgreSQL store contract tests');
const pgAvailable = testDb !== null;

afterAll(async () => {
  await testDb?.drop();
});

const drivers: [string, boolean, () => SqlDb][] = [
  ['sqlite', true, () => openSqlite(path.join(mkdtempSync(path.join(os.tmpdir(), 'poolscope-store-')), 'test.db'))],
  [`postgres${pgAvailable ? '' : ' (skipped: no PostgreSQL reachable; see the warning above)'}`, pgAvailable, () => openPostgres(testDb?.url ?? '')],
];

const t0 = Date.parse('2026-11-29T10:00:00.000Z');
const at = (minutes: number) => new Date(t0 + minutes * 60_000).toISOString();

/** A pool whose desired replica count walks 3, 4, 5, …: one change per step. */
function details(steps: number): PoolDetail[] {
  const out: PoolDetail[] = [];
  let prev: PoolDetail | null = null;
  for (let i = 0; i < steps; i++) {
    const b = buildScenario('s05-flexible', { replicas: 3 + i });
    const d: PoolDetail = analyzePool(b.input, { now: at(i), previous: prev });
    out.push(d);
    prev = d;
  }
  return out;
}

describe.each(drivers)('timeline store contract: %s', (_name, available, open) => {
  let store: TimelineStore;
  beforeAll(async () => {
    if (!available) return;
    store = new TimelineStore(open());
    await store.migrate();
  });
  afterAll(async () => {
    await store?.close();
  });

  it.skipIf(!available)('migrates once, versioned', async () => {
    expect(await store.migrate()).toEqual([]);
  });

  it.skipIf(!available)('stores cycles, serves the current state, the timeline and any past instant', async () => {
    const ds = details(KEYFRAME_EVERY + 8);
    let prev: PoolDetail | null = null;
    for (const [i, d] of ds.entries()) {
      await store.writeCycle({ id: `c${i}`, at: at(i) }, [{ detail: d, transitions: diffDetails(prev, d, at(i)) }]);
      prev = d;
    }
    const key = ds[0]!.summary.key;
    const current = await store.currentPool(key, at(100));
    expect(current?.summary.replicas.desired).toBe(3 + ds.length - 1);
    expect(current?.summary.lastChange).toBe(at(ds.length - 1));
    expect(current?.at).toBe(at(100));
    expect((await store.currentPools()).map((p) => p.summary.key)).toEqual([key]);
    expect(await store.currentSummaries()).toEqual([current?.summary]);

    const tl = await store.timeline(key, at(5), at(7));
    expect(tl.filter((e) => e.field === 'replicas.desired').map((e) => [e.at, e.from, e.to])).toEqual([
      [at(5), '7', '8'], [at(6), '8', '9'], [at(7), '9', '10'],
    ]);
    // Past instants, across a keyframe boundary, between changes, and before the first.
    for (const m of [0, 3.5, KEYFRAME_EVERY - 1, KEYFRAME_EVERY, KEYFRAME_EVERY + 7.9]) {
      const past = await store.poolAt(key, at(m));
      expect(past?.summary.replicas.desired, `at +${m} min`).toBe(3 + Math.floor(m));
      expect(past?.at).toBe(at(m));
    }
    expect(await store.poolAt(key, at(-1))).toBeNull();
    expect(await store.lastCycle()).toEqual({ id: `c${ds.length - 1}`, at: at(ds.length - 1) });
  });

  it.skipIf(!available)('migration 2 fills the summaries of pools stored before it', async () => {
    // A database at version 1 with one pool, as an earlier poolscope left it.
    const db = open();
    const old = new TimelineStore(db);
    await old.migrate();
    const [d] = details(1);
    await old.writeCycle({ id: 'old', at: at(0) }, [{ detail: d!, transitions: [] }]);
    await db.run('DROP TABLE pool_summaries');
    await db.run('DELETE FROM schema_migrations WHERE version = 2');
    expect(await old.migrate()).toEqual([2]);
    expect((await old.currentSummaries()).find((s) => s.key === d!.summary.key)?.replicas.desired).toBe(d!.summary.replicas.desired);
    await old.close();
  });

  it.skipIf(!available)('writes a cycle atomically: a failure leaves nothing of it', async () => {
    const before = await store.stats();
    const [d] = details(1);
    const bad = { detail: d!, transitions: [{ at: at(200), poolKey: d!.summary.key, field: null as unknown as string, from: null, to: 'x' }] };
    await expect(store.writeCycle({ id: 'broken', at: at(200) }, [bad])).rejects.toThrow();
    expect(await store.stats()).toEqual(before);
    expect((await store.lastCycle())?.id).not.toBe('broken');
  });

  it.skipIf(!available)('appends markers (a resync) to a pool\'s timeline without touching its state history', async () => {
    const key = details(1)[0]!.summary.key;
    const statsBefore = await store.stats();
    const stateBefore = await store.currentPool(key, at(300));
    const marker = { at: at(150), poolKey: key, field: 'resync', from: null, to: 'sync-provider-ids: done', detail: 'alice copied 5 IDs' };
    await store.appendEntries([marker]);
    expect((await store.timeline(key, at(149), at(151))).filter((e) => e.field === 'resync')).toEqual([marker]);
    expect(await store.currentPool(key, at(300))).toEqual(stateBefore);
    expect((await store.stats()).historyRows).toBe(statsBefore.historyRows);
    await expect(store.appendEntries([{ ...marker, field: null as unknown as string }, marker])).rejects.toThrow();
    expect((await store.timeline(key, at(149), at(151))).filter((e) => e.field === 'resync')).toHaveLength(1);
  });

  it.skipIf(!available)('prunes old rows but can still show the state at the cutoff', async () => {
    const key = details(1)[0]!.summary.key;
    const cutoff = at(KEYFRAME_EVERY + 3);
    const expected = await store.poolAt(key, cutoff);
    const r = await store.prune(cutoff);
    expect(r.transitions).toBeGreaterThan(0);
    expect(r.history).toBeGreaterThan(0);
    expect(await store.poolAt(key, cutoff)).toEqual(expected);
    expect(await store.timeline(key, at(0), at(KEYFRAME_EVERY + 2))).toEqual([]);
  });
});
