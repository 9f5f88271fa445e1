// One contract, two drivers: SQLite always; PostgreSQL when one is reachable (CI starts it on 127.0.0.1:5432).
// Long because it is one contract: every case runs on both drivers, so a case split out would be run twice over.

import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzePool } from '@/lib/analyze';
import type { PoolDetail } from '@/lib/api-types';
import { buildPool, type InstanceSpec } from '@/lib/fixtures/pool';
import { buildScenario } from '@/lib/fixtures/scenarios';
import { diffDetails, stableDetail } from '@/lib/transitions';
import { createTestDatabase } from '../testing/postgres';
import { openPostgres } from './postgres';
import { STORE_TABLES } from './schema';
import { storedState, storedText } from './pack';
import { openSqlite } from './sqlite';
import { PATCH_WEIGHT_PER_KEYFRAME, TimelineStore, type SqlDb } from './store';

/** Patches between keyframes in these tests (the default is larger): the as-of reads cross keyframes. */
const KEYFRAME_EVERY = 8;

const testDb = await createTestDatabase('PostgreSQL store contract tests');
const pgAvailable = testDb !== null;

afterAll(async () => {
  await testDb?.drop();
});

/** The store's driver, for reading its rows directly. */
const db = (s: TimelineStore) => (s as unknown as { db: SqlDb }).db;

const drivers: [string, boolean, () => SqlDb][] = [
  ['sqlite', true, () => openSqlite(path.join(mkdtempSync(path.join(os.tmpdir(), 'poolscope-store-')), 'test.db'))],
  [
    `postgres${pgAvailable ? '' : ' (skipped: no PostgreSQL reachable; see the warning above)'}`,
    pgAvailable,
    () => openPostgres(testDb?.url ?? ''),
  ],
];

const t0 = Date.parse('2026-11-29T10:00:00.000Z');
const at = (minutes: number) => new Date(t0 + minutes * 60_000).toISOString();

/** A pool whose desired replica count walks 3, 4, 5, …: one change per step. */
function details(steps: number, name?: string): PoolDetail[] {
  const out: PoolDetail[] = [];
  let prev: PoolDetail | null = null;
  for (let i = 0; i < steps; i++) {
    const b = buildScenario('s05-flexible', { replicas: 3 + i, ...(name ? { name } : {}) });
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
    store = new TimelineStore(open(), { maxPatchesPerKeyframe: KEYFRAME_EVERY - 1 });
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
      [at(5), '7', '8'],
      [at(6), '8', '9'],
      [at(7), '9', '10'],
    ]);
    // Past instants, across a keyframe boundary, between changes, and before the first.
    for (const m of [0, 3.5, KEYFRAME_EVERY - 1, KEYFRAME_EVERY, KEYFRAME_EVERY + 7.9]) {
      const past = await store.poolAt(key, at(m));
      expect(past?.summary.replicas.desired, `at +${m} min`).toBe(3 + Math.floor(m));
      expect(past?.at).toBe(at(m));
    }
    expect(await store.poolAt(key, at(-1))).toBeNull();
    // The record starts at the first state: poolAt answers from there on, and not before.
    expect(await store.recordStart(key)).toBe(at(0));
    expect(await store.recordStart('other/default/nope')).toBeNull();
    expect(await store.lastCycle()).toEqual({ id: `c${ds.length - 1}`, at: at(ds.length - 1) });
  });

  it.skipIf(!available)(
    "takes a cycle's writes one at a time, each written before the next is asked for, and keeps none of a cycle that fails",
    async () => {
      const s = new TimelineStore(open());
      await s.migrate();
      const pools = ['lazy-a', 'lazy-b', 'lazy-c'].map((name) => details(2, name));
      // When asked for each next write, how many states the store has written (in the open transaction).
      const seen: number[] = [];
      function* writes(step: number, failAt?: number) {
        for (const [i, ds] of pools.entries()) {
          seen.push(s.writeStats().states);
          if (i === failAt) throw new Error('analysis of the third pool failed');
          yield { detail: ds[step]!, transitions: diffDetails(step ? ds[step - 1]! : null, ds[step]!, at(step)) };
        }
        seen.push(s.writeStats().states);
      }
      const desired = async () =>
        Promise.all(pools.map(async (ds) => (await s.currentPool(ds[0]!.summary.key))?.summary.replicas.desired));
      await s.writeCycle({ id: 'lazy0', at: at(0) }, writes(0));
      expect(seen).toEqual([0, 1, 2, 3]);
      expect(await desired()).toEqual([3, 3, 3]);
      seen.length = 0;
      // The writer fails after two pools were written: nothing of the cycle stays, not even what it counted.
      await expect(s.writeCycle({ id: 'lazy1', at: at(1) }, writes(1, 2))).rejects.toThrow(
        'analysis of the third pool failed',
      );
      expect(seen).toEqual([3, 4, 5]);
      expect(s.writeStats().states).toBe(3);
      expect(await desired()).toEqual([3, 3, 3]);
      const cycles = await db(s).all<{ id: string; pools: number | string }>(
        "SELECT id, pools FROM cycles WHERE id LIKE 'lazy%'",
      );
      expect(cycles.map((c) => [c.id, Number(c.pools)])).toEqual([['lazy0', 3]]);
      await s.close();
    },
  );

  it.skipIf(!available)(
    'refuses a store whose schema has a version it does not know, and changes nothing of it',
    async () => {
      const db = open();
      const s = new TimelineStore(db);
      await s.migrate();
      const tablesOf = async () =>
        (
          await db.all<{ name: string }>(
            db.dialect === 'postgres'
              ? 'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1'
              : "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY 1",
          )
        ).map((r) => r.name);
      // The whole schema comes in one step.
      expect(await tablesOf()).toEqual([...STORE_TABLES].sort());
      // As a pre-release build (ten migrations) or a later poolscope left it.
      await db.run('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?), (?, ?)', [9, at(0), 10, at(0)]);
      await expect(s.migrate()).rejects.toThrow(
        /its schema has version 9, 10, which this poolscope does not know \(it knows 1\): another build made this store/,
      );
      expect(await tablesOf()).toEqual([...STORE_TABLES].sort());
      await db.run('DELETE FROM schema_migrations WHERE version > 1');
      await s.close();
    },
  );

  it.skipIf(!available)(
    "keeps a churning pool's history as keyed row patches, a keyframe once they weigh some times as much, and shows every past state exactly",
    async () => {
      const keyframes: number[] = [];
      for (const weight of [1, PATCH_WEIGHT_PER_KEYFRAME]) {
        const s = new TimelineStore(open(), { patchWeightPerKeyframe: weight });
        await s.migrate();
        let members: InstanceSpec[] = Array.from({ length: 100 }, (_, i) => ({ member: String(i) }));
        let prev: PoolDetail | null = null;
        const states: PoolDetail[] = [];
        for (let i = 0; i < 40; i++) {
          // One instance replaced at the top of the table (every row below it shifts), one Node lost.
          members = [{ member: String(1000 + i), node: 'none' }, ...members.slice(0, -1)];
          members[50] = { ...(members[50] as InstanceSpec), node: i % 2 ? 'ready' : 'not-ready' };
          const built = buildPool({ name: `churn-${weight}`, replicas: members.length, instances: members });
          const d = analyzePool(built.input, { now: at(i), previous: prev });
          await s.writeCycle({ id: `churn${weight}-${i}`, at: at(i) }, [
            { detail: d, transitions: diffDetails(prev, d, at(i)) },
          ]);
          states.push(d);
          prev = d;
        }
        const key = states[0]!.summary.key;
        const history = await db(s).all<{ kind: string; body: string }>(
          'SELECT kind, body FROM pool_history WHERE pool_key = ? ORDER BY seq',
          [key],
        );
        const full = storedText(storedState(states[0]!)).length;
        // Keyframes are deflated, patches carry only the rows that changed.
        let sinceKey = 0;
        let keyframe = 0;
        let most = 0;
        for (const h of history) {
          if (h.kind === 'key') {
            expect(h.body.length).toBeLessThan(full / 8);
            keyframe = h.body.length;
            sinceKey = 0;
          } else {
            expect(h.kind).toBe('rows');
            expect(h.body.length).toBeLessThan(2_000);
            // A new keyframe comes once the patches since the last one would weigh `weight` times as much.
            sinceKey += h.body.length;
            expect(sinceKey).toBeLessThan(keyframe * weight);
            most = Math.max(most, sinceKey / keyframe);
          }
        }
        expect(most, `weight ${weight}`).toBeGreaterThan(weight * 0.6);
        keyframes.push(history.filter((h) => h.kind === 'key').length);
        expect(history.filter((h) => h.kind === 'rows').length).toBeGreaterThan(history.length / 2);
        for (const [i, d] of states.entries()) {
          const past = await s.poolAt(key, at(i + 0.5));
          expect(past && stableDetail(past), `state ${i}`).toEqual(JSON.parse(JSON.stringify(stableDetail(d))));
        }
        await s.close();
      }
      // The default writes fewer keyframes (each reads, serialises and deflates the whole state).
      expect(keyframes[1]!).toBeLessThan(keyframes[0]!);
    },
  );

  it.skipIf(!available)(
    'refuses to read a history row of a kind it does not know, rather than show a state it cannot build',
    async () => {
      const d0 = open();
      const s = new TimelineStore(d0);
      await s.migrate();
      const ds = details(2, 'unknown-kind');
      await s.writeCycle({ id: 'k0', at: at(0) }, [{ detail: ds[0]!, transitions: [] }]);
      const key = ds[0]!.summary.key;
      // As a JSON Patch row of a pre-release build.
      await d0.run('INSERT INTO pool_history (pool_key, seq, at, kind, body) VALUES (?, ?, ?, ?, ?)', [
        key,
        2,
        at(1),
        'patch',
        '[]',
      ]);
      expect((await s.poolAt(key, at(0.5)))?.summary.replicas.desired).toBe(3);
      await expect(s.poolAt(key, at(1.5))).rejects.toThrow(
        `state 2 of pool ${key} is stored as 'patch', which this build cannot read`,
      );
      await s.close();
    },
  );

  it.skipIf(!available)(
    'compares an analysis with what it wrote last: the same is not written, and only a committed write counts',
    async () => {
      const d0 = open();
      const s = new TimelineStore(d0);
      await s.migrate();
      const [a, b] = details(2, 'compared');
      const again = () => structuredClone(a!);
      // Nothing written yet: everything is new.
      expect(s.sameAsWritten(again(), a)).toBe(false);
      await s.writeCycle({ id: 'cmp0', at: at(0) }, [{ detail: a!, transitions: [] }]);
      expect(s.sameAsWritten(again(), a)).toBe(true);
      expect(s.sameAsWritten(structuredClone(b!), a)).toBe(false);
      // A cycle that fails stores nothing, and the store still compares with what it did store.
      function* failing() {
        yield { detail: structuredClone(b!), transitions: [] };
        throw new Error('the next analysis failed');
      }
      await expect(s.writeCycle({ id: 'cmp1', at: at(1) }, failing())).rejects.toThrow('the next analysis failed');
      expect(s.sameAsWritten(again(), a)).toBe(true);
      // Another store over the same database (the same driver here) knows what was written once it resumes from it.
      const other = new TimelineStore(d0);
      expect(other.sameAsWritten(again(), a)).toBe(false);
      expect((await other.resumeWriting(at(0))).map((p) => p.summary.key)).toContain(a!.summary.key);
      expect(other.sameAsWritten(again(), a)).toBe(true);
      await s.close();
    },
  );

  it.skipIf(!available)(
    'takes the rows a write leaves out from the stored state only when that is the state it was compared with',
    async () => {
      const db = open();
      const s = new TimelineStore(db);
      await s.migrate();
      const state = (instances: InstanceSpec[]) => {
        const b = buildPool({ name: 'partial', replicas: 4, instances });
        return analyzePool(b.input, { now: b.now });
      };
      const four = ['0', '1', '2', '3'].map((member): InstanceSpec => ({ member }));
      const d0 = state(four);
      const d1 = state(four.map((m) => (m.member === '1' ? { ...m, node: 'none' } : m)));
      const d2 = state(
        four.map((m) => (m.member === '2' ? { ...m, state: 'Failed', errorCode: 'OSProvisioningTimedOut' } : m)),
      );
      const key = d0.summary.key;
      const same = (d: PoolDetail | null) => stableDetail(d!);
      await s.writeCycle({ id: 'p0', at: at(0) }, [{ detail: d0, transitions: [] }]);
      // A second store (another replica, or a writer from before a leader change) that last saw the state of 0.
      const stale = new TimelineStore(db);
      await stale.resumeWriting(at(0));
      expect(s.sameAsWritten(d1, d0)).toBe(false);
      await s.writeCycle({ id: 'p1', at: at(1) }, [{ detail: d1, transitions: [] }]);
      expect(s.writeStats().changedRows).toBe(1);
      expect(same(await s.currentPool(key, at(1)))).toEqual(JSON.parse(JSON.stringify(stableDetail(d1))));
      expect(same(await s.poolAt(key, at(0.5)))).toEqual(JSON.parse(JSON.stringify(stableDetail(d0))));
      // Compared with the state of 0, d2 leaves out member 1's row, which the store has as of 1 (its Node gone):
      // the store serialises the whole state instead.
      expect(stale.sameAsWritten(d2, d0)).toBe(false);
      await stale.writeCycle({ id: 'p2', at: at(2) }, [{ detail: d2, transitions: [] }]);
      expect(stale.writeStats()).toMatchObject({ states: 1, changedRows: 0, wholeTables: 1 });
      expect(same(await s.currentPool(key, at(2)))).toEqual(JSON.parse(JSON.stringify(stableDetail(d2))));
      expect(same(await s.poolAt(key, at(2)))).toEqual(JSON.parse(JSON.stringify(stableDetail(d2))));
      await s.close();
    },
  );

  it.skipIf(!available)(
    "reads the stored row keys when the pool's row counts other rows than it wrote last",
    async () => {
      const db = open();
      const s = new TimelineStore(db);
      await s.migrate();
      const state = (instances: InstanceSpec[]) => {
        const b = buildPool({ name: 'keys', replicas: 3, instances });
        return analyzePool(b.input, { now: b.now });
      };
      const d0 = state([{ member: '0' }, { member: '1' }, { member: '2' }]);
      const d1 = state([{ member: '0' }, { member: '1', node: 'none' }, { member: '2' }]);
      const key = d0.summary.key;
      await s.writeCycle({ id: 'keys0', at: at(0) }, [{ detail: d0, transitions: [] }]);
      const [counted] = await db.all<{ rows_instances: number; rows_drift: number }>(
        'SELECT rows_instances, rows_drift FROM pools WHERE pool_key = ?',
        [key],
      );
      expect([Number(counted?.rows_instances), Number(counted?.rows_drift)]).toEqual([3, d0.drift.length]);
      // A row lost behind the store's back (counted as gone): trusting its memory, the store would leave out
      // member 2's row, which is no longer there.
      const [gone] = await db.all<{ row_key: string }>(
        "SELECT row_key FROM pool_rows WHERE pool_key = ? AND tbl = 'instances' ORDER BY row_key DESC LIMIT 1",
        [key],
      );
      await db.run('DELETE FROM pool_rows WHERE pool_key = ? AND row_key = ?', [key, gone!.row_key]);
      await db.run('UPDATE pools SET rows_instances = 2 WHERE pool_key = ?', [key]);
      expect(s.sameAsWritten(d1, d0)).toBe(false);
      await s.writeCycle({ id: 'keys1', at: at(1) }, [{ detail: d1, transitions: [] }]);
      expect(stableDetail((await s.currentPool(key, at(1)))!)).toEqual(JSON.parse(JSON.stringify(stableDetail(d1))));
      const [after] = await db.all<{ rows_instances: number; n: number }>(
        'SELECT rows_instances, (SELECT COUNT(*) FROM pool_rows r WHERE r.pool_key = p.pool_key AND r.tbl = ?) AS n FROM pools p WHERE pool_key = ?',
        ['instances', key],
      );
      expect([Number(after?.rows_instances), Number(after?.n)]).toEqual([3, 3]);
      await s.close();
    },
  );
  it.skipIf(!available)(
    'written as the collector writes (changed rows only), touches only the rows that changed, and every state reads back exactly',
    async () => {
      const d0 = open();
      // Every statement the store runs, to tell which rows a write touched.
      const statements: string[] = [];
      const driftWrites: string[] = [];
      const spy: SqlDb = {
        ...d0,
        run: (sql, params) => {
          statements.push(sql);
          if (/pool_rows/.test(sql) && params?.includes('drift')) driftWrites.push(sql.split(' ')[0] as string);
          return d0.run(sql, params);
        },
        all: (sql, params) => {
          statements.push(sql);
          return d0.all(sql, params);
        },
        tx: (fn) => d0.tx(() => fn(spy)),
      };
      const s = new TimelineStore(spy, { maxPatchesPerKeyframe: 5 });
      await s.migrate();
      let members: InstanceSpec[] = Array.from({ length: 40 }, (_, i) => ({ member: String(i) }));
      let prev: PoolDetail | null = null;
      const states: PoolDetail[] = [];
      for (let i = 0; i < 14; i++) {
        // By turns: a row added, one removed, one changed with a drift item appearing (its Node gone), the rest
        // changed (replicas) with that drift item clearing (its Node back).
        if (i % 4 === 1) members = [...members, { member: String(100 + i) }];
        if (i % 4 === 2) members = members.filter((_, j) => j !== 3 + i);
        if (i % 4 === 3) members = members.map((m, j) => (j === i ? { ...m, node: 'none' } : m));
        if (i % 4 === 0) members = members.map((m) => (m.node === 'none' ? { member: m.member } : m));
        const built = buildPool({
          name: 'collector-way',
          replicas: members.length + (i % 4 === 0 ? i : 0),
          instances: members,
        });
        const d = analyzePool(built.input, { now: at(i), previous: prev });
        // The collector's way: compared with what the store wrote last, only the changed rows serialised.
        if (prev) expect(s.sameAsWritten(d, prev)).toBe(false);
        statements.length = 0;
        const counted = s.writeStats();
        const [{ n: storedBefore }] = (await d0.all<{ n: number }>(
          'SELECT COUNT(*) AS n FROM pool_rows WHERE pool_key = ?',
          [d.summary.key],
        )) as [{ n: number }];
        await s.writeCycle({ id: `cw${i}`, at: at(i) }, [{ detail: d, transitions: [] }]);
        d.summary.lastChange = at(i);
        if (i > 0) expect(statements).not.toContain('SELECT tbl, row_key FROM pool_rows WHERE pool_key = ?');
        // Nor counted: the pool's row says how many there are.
        expect(statements.filter((q) => /COUNT/.test(q))).toEqual([]);
        const [counts] = await d0.all<{ rows_instances: number; rows_drift: number; ni: number; nd: number }>(
          "SELECT rows_instances, rows_drift, (SELECT COUNT(*) FROM pool_rows r WHERE r.pool_key = p.pool_key AND r.tbl = 'instances') AS ni, (SELECT COUNT(*) FROM pool_rows r WHERE r.pool_key = p.pool_key AND r.tbl = 'drift') AS nd FROM pools p WHERE pool_key = ?",
          [d.summary.key],
        );
        expect([Number(counts?.rows_instances), Number(counts?.rows_drift)], `counts at step ${i}`).toEqual([
          Number(counts?.ni),
          Number(counts?.nd),
        ]);
        const rowWrites = statements.filter((q) => /pool_rows/.test(q) && !/^SELECT/.test(q));
        // The write counters say what the statements did.
        const now = s.writeStats();
        expect(now.states - counted.states).toBe(1);
        expect(now.rowsWritten - counted.rowsWritten).toBe(rowWrites.length);
        // Rows read back: one by one those it changed, and the whole tables when it wrote a keyframe.
        const keyframe = now.keyframes - counted.keyframes;
        expect(keyframe + (now.patches - counted.patches)).toBe(1);
        const oneByOne = statements.filter((q) =>
          q.startsWith('SELECT body FROM pool_rows WHERE pool_key = ? AND tbl = ? AND row_key = ?'),
        ).length;
        expect(now.rowsRead - counted.rowsRead).toBe(oneByOne + (i > 0 && keyframe ? Number(storedBefore) : 0));
        expect(now.changedRows - counted.changedRows).toBe(i === 0 ? 0 : 1);
        if (i === 0) expect(rowWrites.filter((q) => q.startsWith('INSERT'))).toHaveLength(40);
        else {
          // Never the whole tables again: at most the one row that changed, and the drift item that came or went.
          expect(rowWrites.length, `step ${i}: ${rowWrites.join('; ')}`).toBeLessThanOrEqual(
            i % 4 === 3 || i % 4 === 0 ? 2 : 1,
          );
          expect(rowWrites.some((q) => q === 'DELETE FROM pool_rows WHERE pool_key = ?')).toBe(false);
        }
        const key = d.summary.key;
        expect(stableDetail((await s.currentPool(key, at(i)))!), `current at step ${i}`).toEqual(
          JSON.parse(JSON.stringify(stableDetail(d))),
        );
        states.push(d);
        prev = d;
      }
      const key = states[0]!.summary.key;
      // Drift items came and went as rows of their own.
      expect(driftWrites.filter((q) => q === 'INSERT').length).toBeGreaterThanOrEqual(3);
      expect(driftWrites.filter((q) => q === 'DELETE').length).toBeGreaterThanOrEqual(2);
      const kinds = (
        await d0.all<{ kind: string }>('SELECT kind FROM pool_history WHERE pool_key = ? ORDER BY seq', [key])
      ).map((r) => r.kind);
      // Keyframes come (every sixth row here) also on this path.
      expect(kinds.filter((k) => k === 'key').length).toBeGreaterThanOrEqual(2);
      expect(kinds.filter((k) => k === 'rows').length).toBeGreaterThan(kinds.length / 2);
      for (const [i, d] of states.entries()) {
        expect(stableDetail((await s.poolAt(key, at(i + 0.5)))!), `state ${i}`).toEqual(
          JSON.parse(JSON.stringify(stableDetail(d))),
        );
      }
      expect((await s.currentPools(at(20))).filter((p) => p.summary.key === key).map((p) => stableDetail(p))).toEqual([
        JSON.parse(JSON.stringify(stableDetail(states.at(-1)!))),
      ]);
      await s.close();
    },
  );

  it.skipIf(!available)(
    "keeps a table it could not give back in the same order (not in the table's order, a key twice) whole, and reads it back as written",
    async () => {
      const s = new TimelineStore(open());
      await s.migrate();
      const b = buildPool({
        name: 'odd-order',
        replicas: 3,
        instances: ['0', '1', '2'].map((member): InstanceSpec => ({ member })),
      });
      const d = analyzePool(b.input, { now: b.now });
      const reversed: PoolDetail = { ...d, instances: [...d.instances].reverse() };
      await s.writeCycle({ id: 'r0', at: at(0) }, [{ detail: reversed, transitions: [] }]);
      expect(stableDetail((await s.currentPool(d.summary.key, at(0)))!).instances.map((r) => r.providerID)).toEqual(
        reversed.instances.map((r) => r.providerID),
      );
      const twice: PoolDetail = { ...d, instances: [...d.instances, d.instances[2]!] };
      await s.writeCycle({ id: 'r1', at: at(1) }, [{ detail: twice, transitions: [] }]);
      expect(stableDetail((await s.currentPool(d.summary.key, at(1)))!)).toEqual(
        JSON.parse(JSON.stringify(stableDetail(twice))),
      );
      expect(stableDetail((await s.poolAt(d.summary.key, at(0.5)))!).instances.map((r) => r.providerID)).toEqual(
        reversed.instances.map((r) => r.providerID),
      );
      // Back in order: kept apart again.
      await s.writeCycle({ id: 'r2', at: at(2) }, [{ detail: d, transitions: [] }]);
      expect(
        await db(s).all("SELECT row_key FROM pool_rows WHERE pool_key = ? AND tbl = 'instances'", [d.summary.key]),
      ).toHaveLength(3);
      expect(stableDetail((await s.currentPool(d.summary.key, at(2)))!)).toEqual(
        JSON.parse(JSON.stringify(stableDetail(d))),
      );
      // Drift items out of their order: the same.
      const drifting = buildPool({
        name: 'odd-order',
        replicas: 3,
        instances: [{ member: '0', node: 'none' }, { member: '1', inAzure: false }, { member: '2' }],
      });
      const dd = analyzePool(drifting.input, { now: drifting.now });
      expect(dd.drift.length).toBeGreaterThan(1);
      const backwards: PoolDetail = { ...dd, drift: [...dd.drift].reverse() };
      await s.writeCycle({ id: 'r3', at: at(3) }, [{ detail: backwards, transitions: [] }]);
      expect(await db(s).all('SELECT row_key FROM pool_rows WHERE pool_key = ?', [d.summary.key])).toHaveLength(0);
      expect(stableDetail((await s.currentPool(d.summary.key, at(3)))!)).toEqual(
        JSON.parse(JSON.stringify(stableDetail(backwards))),
      );
      await s.writeCycle({ id: 'r4', at: at(4) }, [{ detail: dd, transitions: [] }]);
      expect(
        await db(s).all("SELECT row_key FROM pool_rows WHERE pool_key = ? AND tbl = 'drift'", [d.summary.key]),
      ).toHaveLength(dd.drift.length);
      expect(stableDetail((await s.currentPool(d.summary.key, at(4)))!)).toEqual(
        JSON.parse(JSON.stringify(stableDetail(dd))),
      );
      expect(stableDetail((await s.poolAt(d.summary.key, at(3.5)))!)).toEqual(
        JSON.parse(JSON.stringify(stableDetail(backwards))),
      );
      await s.close();
    },
  );

  it.skipIf(!available)('writes a cycle atomically: a failure leaves nothing of it', async () => {
    const before = await store.stats();
    const [d] = details(1);
    const bad = {
      detail: d!,
      transitions: [{ at: at(200), poolKey: d!.summary.key, field: null as unknown as string, from: null, to: 'x' }],
    };
    const counted = store.writeStats();
    // A pool of its own written first, then the bad one.
    const [fine] = details(1, 'atomic-fine');
    await expect(
      store.writeCycle({ id: 'broken', at: at(200) }, [{ detail: fine!, transitions: [] }, bad]),
    ).rejects.toThrow();
    expect(await store.stats()).toEqual(before);
    // Nor in the write counters.
    expect(store.writeStats()).toEqual(counted);
    expect((await store.lastCycle())?.id).not.toBe('broken');
  });

  it.skipIf(!available)(
    "appends markers (a resync) to a pool's timeline without touching its state history",
    async () => {
      const key = details(1)[0]!.summary.key;
      const statsBefore = await store.stats();
      const stateBefore = await store.currentPool(key, at(300));
      const marker = {
        at: at(150),
        poolKey: key,
        field: 'resync',
        from: null,
        to: 'sync-provider-ids: done',
        detail: 'alice copied 5 IDs',
      };
      await store.appendEntries([marker]);
      expect((await store.timeline(key, at(149), at(151))).filter((e) => e.field === 'resync')).toEqual([marker]);
      expect(await store.currentPool(key, at(300))).toEqual(stateBefore);
      expect((await store.stats()).historyRows).toBe(statsBefore.historyRows);
      await expect(store.appendEntries([{ ...marker, field: null as unknown as string }, marker])).rejects.toThrow();
      expect((await store.timeline(key, at(149), at(151))).filter((e) => e.field === 'resync')).toHaveLength(1);
    },
  );

  it.skipIf(!available)(
    "changes a pool's version with each state, and with each entry stored without one (Events, resync markers)",
    async () => {
      const d = details(1)[0]!;
      const key = d.summary.key;
      const v0 = await store.poolVersion(key);
      expect(v0).not.toBeNull();
      await store.appendEntries([{ at: at(400), poolKey: key, field: 'resync', from: null, to: 'reconcile: done' }]);
      const v1 = await store.poolVersion(key);
      expect(v1).not.toBe(v0);
      const event = { at: at(401), poolKey: key, field: 'event.Warning', from: null, to: 'AzureMachinePool/x' };
      await store.writeCycle({ id: 'events-only', at: at(401) }, [
        { detail: d, transitions: [event], detailUnchanged: true },
      ]);
      const v2 = await store.poolVersion(key);
      expect(v2).not.toBe(v1);
      // A cycle that stores nothing for the pool leaves it as it is.
      await store.writeCycle({ id: 'nothing', at: at(402) }, [{ detail: d, transitions: [], detailUnchanged: true }]);
      expect(await store.poolVersion(key)).toBe(v2);
      expect(await store.poolVersion('ctx/ns/no-such-pool')).toBeNull();
    },
  );

  it.skipIf(!available)(
    'stores 9,001 changes of one pool at once (its change notice capped) and reads them back in pages, both ways',
    async () => {
      const key = 'ctx/ns/many-changes';
      // 9,001 entries, three to an instant: the 4,000-row pages end inside an instant's group.
      const entries = Array.from({ length: 9001 }, (_, i) => ({
        at: new Date(Date.parse('2026-11-01T00:00:00Z') + Math.floor(i / 3) * 1000).toISOString(),
        poolKey: key,
        field: `event.f${i}`,
        from: null,
        to: String(i),
      }));
      // Stored in another order than time's: the read orders by instant, then by when each was stored.
      await store.appendEntries([...entries.slice(4500), ...entries.slice(0, 4500)]);
      const all = await store.timeline(key, entries[0]!.at, entries.at(-1)!.at);
      expect(all.length).toBe(9001);
      const byInstant = [...entries.slice(4500), ...entries.slice(0, 4500)]
        .map((e, stored) => ({ e, stored }))
        .sort((a, b) => (a.e.at < b.e.at ? -1 : a.e.at > b.e.at ? 1 : a.stored - b.stored))
        .map((x) => x.e.to);
      expect(all.map((e) => e.to)).toEqual(byInstant);
      expect((await store.timeline(key, entries[3000]!.at, entries[3002]!.at)).map((e) => e.to)).toEqual([
        '3000',
        '3001',
        '3002',
      ]);
      // The same, newest first, a page at a time: pages of 2,500 end inside an instant's group too.
      const paged: string[] = [];
      let before: { at: string; id: number } | null = null;
      for (let n = 0; n < 10; n++) {
        const page: Awaited<ReturnType<typeof store.changesPage>> = await store.changesPage(
          key,
          entries[0]!.at,
          entries.at(-1)!.at,
          before,
          2500,
        );
        paged.push(...page.map((r) => r.entry.to as string));
        if (page.length < 2500) break;
        before = page.at(-1)!.position;
      }
      expect(paged).toEqual([...byInstant].reverse());
    },
  );

  it.skipIf(!available)(
    "records when each pool's scale set was last read from Azure: a later read replaces it, an earlier one does not",
    async () => {
      expect(await store.azureReadAt('ctx/ns/read-a')).toBeNull();
      await store.recordAzureReads([
        ['ctx/ns/read-a', at(1)],
        ['ctx/ns/read-b', at(2)],
      ]);
      expect(await store.azureReadAt('ctx/ns/read-a')).toBe(at(1));
      expect(await store.azureReadAt('ctx/ns/read-b')).toBe(at(2));
      await store.recordAzureReads([
        ['ctx/ns/read-a', at(3)],
        ['ctx/ns/read-b', at(1)],
      ]);
      expect(await store.azureReadAt('ctx/ns/read-a')).toBe(at(3));
      expect(await store.azureReadAt('ctx/ns/read-b')).toBe(at(2));
      // Nothing to record: no transaction fails.
      await store.recordAzureReads([]);
      expect(await store.azureReadAt('ctx/ns/read-a')).toBe(at(3));
    },
  );

  it.skipIf(!available)('reports its size on disk, which grows with what it stores', async () => {
    const before = await store.sizeBytes();
    expect(before).toBeGreaterThan(0);
    // A 200-instance pool's keyframe and rows, and a few hundred timeline entries with long text: well over a page.
    const instances: InstanceSpec[] = Array.from({ length: 200 }, (_, i) => ({ member: String(i) }));
    const d = analyzePool(buildPool({ name: 'size', replicas: 200, instances }).input, { now: at(400) });
    const entries = Array.from({ length: 300 }, (_, i) => ({
      at: at(400),
      poolKey: d.summary.key,
      field: 'event.Size',
      from: null,
      to: `entry ${i}`,
      detail: 'x'.repeat(400),
    }));
    await store.writeCycle({ id: 'size', at: at(400) }, [{ detail: d, transitions: entries }]);
    expect(await store.sizeBytes()).toBeGreaterThan(before + 100_000);
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

/** A pool's history, timeline and cycles over `steps` minutes (a keyframe every KEYFRAME_EVERY). */
async function storeHistory(s: TimelineStore, steps: number, name: string): Promise<string> {
  const ds = details(steps, name);
  let prev: PoolDetail | null = null;
  for (const [i, d] of ds.entries()) {
    await s.writeCycle({ id: `${name}-c${i}`, at: at(i) }, [{ detail: d, transitions: diffDetails(prev, d, at(i)) }]);
    prev = d;
  }
  return ds[0]!.summary.key;
}

// Retention counts what it deletes across the whole store: a database of its own on PostgreSQL.
const pruneDb = pgAvailable ? await createTestDatabase('PostgreSQL retention tests') : null;
afterAll(async () => {
  await pruneDb?.drop();
});
const pruneDrivers: [string, boolean, () => SqlDb][] = [
  drivers[0]!,
  [drivers[1]![0], pruneDb !== null, () => openPostgres(pruneDb?.url ?? '')],
];

describe.each(pruneDrivers)('retention (prune) on %s', (_name, available, open) => {
  let store: TimelineStore;
  let keys: string[];
  const steps = 3 * KEYFRAME_EVERY + 4;
  beforeAll(async () => {
    if (!available) return;
    store = new TimelineStore(open(), { maxPatchesPerKeyframe: KEYFRAME_EVERY - 1 });
    await store.migrate();
    keys = [await storeHistory(store, steps, 'prune-a'), await storeHistory(store, steps, 'prune-b')];
  });
  afterAll(async () => {
    await store?.close();
  });

  it.skipIf(!available)(
    'works in transactions of the batch size, letting others run between them, and stops when asked',
    async () => {
      const cutoff = at(2 * KEYFRAME_EVERY + 1);
      const later = [cutoff, at(2 * KEYFRAME_EVERY + 5), at(steps - 1)];
      const expected = await Promise.all(keys.flatMap((k) => later.map((t) => store.poolAt(k, t))));
      const before = await store.stats();
      // What must go: each pool's history before its last keyframe at or before the cutoff.
      let doomed = 0;
      for (const k of keys) {
        const [cut] = await db(store).all<{ seq: number }>(
          "SELECT MAX(seq) AS seq FROM pool_history WHERE pool_key = ? AND kind = 'key' AND at <= ?",
          [k, cutoff],
        );
        expect(Number(cut?.seq)).toBeGreaterThan(KEYFRAME_EVERY);
        const [n] = await db(store).all<{ n: number }>(
          'SELECT COUNT(*) AS n FROM pool_history WHERE pool_key = ? AND seq < ?',
          [k, cut?.seq],
        );
        doomed += Number(n?.n);
      }
      // Stopped after its third transaction: it has deleted something, and every moment from the cutoff on reads as it did.
      const stop = new AbortController();
      let pauses = 0;
      const pause = async () => {
        if (++pauses === 3) stop.abort(new Error('stopped by the test'));
      };
      await expect(store.prune(cutoff, { batchRows: 2, pause, signal: stop.signal })).rejects.toThrow(
        'stopped by the test',
      );
      const stopped = await store.stats();
      expect(stopped.historyRows).toBe(before.historyRows - 6);
      expect(await Promise.all(keys.flatMap((k) => later.map((t) => store.poolAt(k, t))))).toEqual(expected);
      // Run again, it finishes the job, two rows a transaction, pausing after each.
      pauses = 0;
      const r = await store.prune(cutoff, { batchRows: 2, pause });
      expect(pauses).toBe(r.batches);
      // SQLite keeps the pages it freed, for the rows to come.
      if (store.dialect === 'sqlite') expect(await store.freeBytes()).toBeGreaterThan(0);
      else expect(await store.freeBytes()).toBeNull();
      // SQLite gives them back to the file system when asked (retention does once a fifth of the file is free), and
      // every moment reads as it did; PostgreSQL keeps its free space (autovacuum).
      if (store.dialect === 'sqlite') {
        const [size, free] = [await store.sizeBytes(), (await store.freeBytes()) as number];
        const shrunk = await store.shrink(0);
        expect(shrunk).toBeGreaterThanOrEqual(free);
        expect(await store.sizeBytes()).toBe(size - (shrunk as number));
        expect(await store.freeBytes()).toBe(0);
        expect(await Promise.all(keys.flatMap((k) => later.map((t) => store.poolAt(k, t))))).toEqual(expected);
      } else expect(await store.shrink(0)).toBeNull();
      // The rest of that history; the timelines and the cycles before the cutoff.
      expect(r.history).toBe(doomed - 6);
      expect(r.batches).toBeGreaterThanOrEqual(Math.ceil((r.history + r.transitions + r.cycles) / 2));
      expect(r.cycles).toBe(2 * (2 * KEYFRAME_EVERY + 1));
      expect(await Promise.all(keys.flatMap((k) => later.map((t) => store.poolAt(k, t))))).toEqual(expected);
      for (const k of keys) {
        expect(await store.poolAt(k, at(2 * KEYFRAME_EVERY - 1))).toBeNull();
        expect(await store.timeline(k, at(0), at(2 * KEYFRAME_EVERY))).toEqual([]);
        expect((await store.timeline(k, cutoff, at(steps))).length).toBeGreaterThan(0);
      }
      // Nothing more to do: one transaction per table's last (empty) batch.
      const again = await store.prune(cutoff);
      expect({ ...again, batches: 0 }).toEqual({ transitions: 0, history: 0, cycles: 0, pools: 0, batches: 0 });
    },
  );
});

describe.each(pruneDrivers)('retention of deleted pools on %s', (_name, available, open) => {
  it.skipIf(!available)(
    'drops a pool deleted before the cutoff whole, and keeps one deleted since (or not deleted)',
    async () => {
      const store = new TimelineStore(open(), { maxPatchesPerKeyframe: KEYFRAME_EVERY - 1 });
      await store.migrate();
      try {
        const keys = [
          await storeHistory(store, 12, 'gone-early'),
          await storeHistory(store, 12, 'gone-late'),
          await storeHistory(store, 12, 'alive'),
        ];
        // The first two MachinePools go, at minutes 20 and 40: their last state marked deleted.
        for (const [key, minute] of [
          [keys[0]!, 20],
          [keys[1]!, 40],
        ] as const) {
          const last = (await store.currentPool(key))!;
          const gone: PoolDetail = { ...last, summary: { ...last.summary, deletedAt: at(minute) } };
          await store.writeCycle({ id: `delete-${key}`, at: at(minute) }, [
            { detail: gone, transitions: diffDetails(last, gone, at(minute)) },
          ]);
        }
        expect((await store.currentPool(keys[0]!))?.summary.deletedAt).toBe(at(20));
        expect((await store.currentSummaries()).find((p) => p.key === keys[1])?.deletedAt).toBe(at(40));
        await store.recordAzureReads(keys.map((k) => [k, at(15)] as const));
        const dropped: string[] = [];
        const r = await store.prune(at(30), { batchRows: 3, onDropped: (k) => dropped.push(k) });
        expect(r.pools).toBe(1);
        expect(dropped).toEqual([keys[0]]);
        expect(await store.currentPool(keys[0]!)).toBeNull();
        expect(await store.poolAt(keys[0]!, at(10))).toBeNull();
        expect(await store.timeline(keys[0]!, at(0), at(100))).toEqual([]);
        expect(
          (await store.currentSummaries())
            .map((p) => p.key)
            .filter((k) => keys.includes(k))
            .sort(),
        ).toEqual([keys[1], keys[2]].sort());
        const [rows] = await db(store).all<{ n: number }>('SELECT COUNT(*) AS n FROM pool_rows WHERE pool_key = ?', [
          keys[0],
        ]);
        expect(Number(rows?.n)).toBe(0);
        expect(await store.azureReadAt(keys[0]!)).toBeNull();
        expect(await store.azureReadAt(keys[1]!)).toBe(at(15));
        // Deleted after the cutoff: kept, its deletion on its timeline; the pool never deleted is untouched.
        expect((await store.currentPool(keys[1]!))?.summary.deletedAt).toBe(at(40));
        expect((await store.timeline(keys[1]!, at(0), at(100))).filter((e) => e.field === 'pool')).toEqual([
          { at: at(40), poolKey: keys[1], field: 'pool', from: 'present', to: 'deleted' },
        ]);
        expect((await store.currentPool(keys[2]!))?.summary.deletedAt).toBeUndefined();

        // Deleted before the next cutoff, but a MachinePool of its name comes back while it is being dropped (once its
        // deletion's history row, which only dropping it deletes, is gone): kept.
        let back = false;
        const comeBack = async () => {
          if (back) return;
          const [left] = await db(store).all<{ n: number }>(
            'SELECT COUNT(*) AS n FROM pool_history WHERE pool_key = ? AND at = ?',
            [keys[1], at(40)],
          );
          if (Number(left?.n) > 0) return;
          back = true;
          const last = (await store.currentPool(keys[1]!))!;
          const again: PoolDetail = { ...last, summary: { ...last.summary, deletedAt: undefined } };
          delete again.summary.deletedAt;
          await store.writeCycle({ id: 'back', at: at(60) }, [
            { detail: again, transitions: diffDetails(last, again, at(60)) },
          ]);
        };
        const r2 = await store.prune(at(50), { batchRows: 3, pause: comeBack });
        expect(back).toBe(true);
        expect(r2.pools).toBe(0);
        const kept = await store.currentPool(keys[1]!);
        expect(kept?.summary.deletedAt).toBeUndefined();
        expect((await store.currentSummaries()).some((p) => p.key === keys[1] && !p.deletedAt)).toBe(true);
        expect(
          (await store.timeline(keys[1]!, at(0), at(100))).filter((e) => e.field === 'pool').map((e) => e.to),
        ).toEqual(['present']);
      } finally {
        await store.close();
      }
    },
  );
});

describe('retention on SQLite: through the indexes, not scans', () => {
  // A plan that scans would make the hourly prune (and the last-cycle read at every metrics scrape) grow with the
  // store: minutes at a few GB, holding the process's only thread (bench: npm run bench -- prune).
  const plan = async (s: TimelineStore, sql: string, params: unknown[]) =>
    (await db(s).all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params)).map((r) => r.detail).join(' | ');
  it('seeks keyframes, pools, timeline entries and cycles by index', async () => {
    const s = new TimelineStore(drivers[0]![2]());
    await s.migrate();
    try {
      expect(
        await plan(s, "SELECT MAX(seq) AS seq FROM pool_history WHERE pool_key = ? AND kind = 'key' AND at <= ?", [
          'k',
          at(0),
        ]),
      ).toMatch(/COVERING INDEX pool_history_keys/);
      expect(
        await plan(s, 'SELECT pool_key FROM pool_history WHERE pool_key > ? ORDER BY pool_key LIMIT 1', ['k']),
      ).toMatch(/SEARCH pool_history USING (COVERING )?INDEX/);
      expect(
        await plan(s, 'SELECT id FROM transitions WHERE pool_key = ? AND at < ? ORDER BY at LIMIT ?', ['k', at(0), 10]),
      ).toMatch(/INDEX transitions_pool_at/);
      expect(await plan(s, 'SELECT id FROM cycles WHERE at < ? ORDER BY at LIMIT ?', [at(0), 10])).toMatch(
        /INDEX cycles_at/,
      );
      expect(await plan(s, 'SELECT id, at FROM cycles ORDER BY at DESC, id DESC LIMIT 1', [])).toMatch(
        /INDEX cycles_at/,
      );
      expect(await plan(s, 'SELECT id, at FROM cycles ORDER BY at DESC, id DESC LIMIT 1', [])).not.toMatch(
        /TEMP B-TREE/,
      );
    } finally {
      await s.close();
    }
  });
});
