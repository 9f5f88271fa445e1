import fjp from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { analyzePool } from '@/lib/analyze';
import type { PoolDetail } from '@/lib/api-types';
import { buildPool, type InstanceSpec } from '@/lib/fixtures/pool';
import { stableDetail } from '@/lib/transitions';
import { applyHistory, diffHistory, diffStoredRows, sameJson } from './history-patch';
import { completeStored, packDetail, splitStored, storedState, storedText } from './pack';
import { rowHash } from './shape';

/** A tiny deterministic PRNG, so a failing sequence can be replayed. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const roundTrip = (prev: object, next: object) => {
  const p = diffHistory(prev, next);
  expect(p).not.toBeNull();
  // Stored as JSON and applied to the previous state as read back from JSON.
  return applyHistory(JSON.parse(JSON.stringify(prev)) as object, JSON.parse(JSON.stringify(p)));
};

describe('history patches', () => {
  it('rebuild every state of a churning 100-instance pool exactly, and stay small', () => {
    const rand = rng(7);
    let members: InstanceSpec[] = Array.from({ length: 100 }, (_, i) => ({ member: String(i) }));
    let next = 100;
    let prev: PoolDetail | null = null;
    let prevStable: object | null = null;
    const sizes: number[] = [];
    let omitted = 0;
    let driftRows = 0;
    let driftWritten = 0;
    for (let step = 0; step < 60; step++) {
      // 1–3 instances change per step: one replaced by a new one, one failing, one losing its Node.
      members = members.map((m) =>
        rand() < 0.02 ? { ...m, state: 'Failed', errorCode: 'OSProvisioningTimedOut' } : m,
      );
      if (rand() < 0.7) members.splice(Math.floor(rand() * members.length), 1);
      if (rand() < 0.7)
        members.splice(Math.floor(rand() * members.length), 0, { member: String(next++), node: 'none' });
      if (rand() < 0.3) {
        const i = Math.floor(rand() * members.length);
        members[i] = { ...(members[i] as InstanceSpec), node: 'not-ready' };
      }
      const built = buildPool({ replicas: members.length, instances: members });
      const d = analyzePool(built.input, { now: built.now, previous: prev });
      const stable = JSON.parse(JSON.stringify(stableDetail(d))) as object;
      if (prevStable && prev) {
        expect(roundTrip(prevStable, stable), `step ${step}`).toEqual(stable);
        sizes.push(JSON.stringify(diffHistory(prevStable, stable)).length);
        // The store diffs the stored text by row: the same patch as of the whole packed documents.
        const [a, b] = [storedState(prev), storedState(d)];
        expect(diffStoredRows(splitStored(storedText(a)), splitStored(storedText(b))), `step ${step}`).toEqual(
          diffHistory(packDetail(prev), packDetail(d)),
        );
        // As the collector writes it: rows whose hash is unchanged left out, then taken from the stored text.
        const before = new Map(prev.instances.map((r) => [r.providerID, rowHash(r)]));
        const drifted = new Map(prev.drift.map((x) => [x.key, rowHash(x)]));
        const partial = storedState(d, {
          instances: (i) => before.get(d.instances[i]!.providerID) === rowHash(d.instances[i]!),
          drift: (i) => drifted.get(d.drift[i]!.key) === rowHash(d.drift[i]!),
        });
        const left = partial.tables.instances.rows.filter((r) => r === null).length;
        driftRows += d.drift.length;
        driftWritten += partial.tables.drift.rows.filter((r) => r !== null).length;
        expect(left, `step ${step}`).toBeGreaterThan(90);
        omitted += left;
        const completed = completeStored(partial, splitStored(storedText(a)));
        expect(completed && storedText(completed), `step ${step}`).toBe(storedText(b));
      }
      prev = d;
      prevStable = stable;
    }
    expect(omitted).toBeGreaterThan(59 * 90);
    // Drift items too: only those new or changed since the step before are serialised.
    expect(driftRows).toBeGreaterThan(59 * 5);
    expect(driftWritten).toBeLessThan(driftRows / 4);
    const keyframe = JSON.stringify(prevStable).length;
    const avg = sizes.reduce((a, b) => a + b, 0) / sizes.length;
    // A plain JSON Patch rewrites the rows below an inserted one; the keyed patch carries only what changed.
    expect(avg).toBeLessThan(keyframe / 10);
  });

  it('carries an instance inserted at the top as one row, where a JSON Patch rewrites the table', () => {
    const rows = Array.from({ length: 50 }, (_, i) => ({
      providerID: `id-${String(i + 10).padStart(3, '0')}`,
      state: 'Succeeded',
      note: 'x'.repeat(100),
    }));
    const prev = { summary: { n: 50 }, instances: rows, drift: [] };
    const next = {
      summary: { n: 51 },
      instances: [{ providerID: 'id-000', state: 'Creating', note: 'new' }, ...rows],
      drift: [],
    };
    const p = diffHistory(prev, next);
    expect(p?.tables.instances).toEqual({ add: [[null, next.instances[0]]] });
    expect(JSON.stringify(p).length).toBeLessThan(JSON.stringify(fjp.compare(prev, next)).length / 20);
    expect(roundTrip(prev, next)).toEqual(next);
  });

  it("removes, changes in place and adds after the right row, keeping the document's key order", () => {
    const prev = {
      a: 1,
      instances: [
        { providerID: 'a', v: 1 },
        { providerID: 'b', v: 1 },
        { providerID: 'c', v: 1 },
      ],
      drift: [{ key: 'k1' }],
      z: { q: 1 },
    };
    const next = {
      a: 2,
      instances: [
        { providerID: 'a', v: 2 },
        { providerID: 'a2', v: 0 },
        { providerID: 'c', v: 1 },
        { providerID: 'd', v: 0 },
      ],
      drift: [],
      z: { q: 1, r: 2 },
    };
    const p = diffHistory(prev, next);
    expect(p?.tables).toEqual({
      instances: {
        del: ['b'],
        set: [{ providerID: 'a', v: 2 }],
        add: [
          ['a', { providerID: 'a2', v: 0 }],
          ['c', { providerID: 'd', v: 0 }],
        ],
      },
      drift: { del: ['k1'] },
    });
    const rebuilt = roundTrip(prev, next);
    expect(JSON.stringify(rebuilt)).toBe(JSON.stringify(next));
  });

  it('diffs rows given as text like the documents they are, and declines the same things', () => {
    const table = (rows: object[], field: string) => ({
      keys: rows.map((r) => (r as Record<string, string>)[field] as string),
      rows: rows.map((r) => JSON.stringify(r)),
    });
    const text = (doc: { instances: object[]; drift?: object[] } & Record<string, unknown>) => ({
      rest: { ...doc, instances: [], ...(doc.drift ? { drift: [] } : {}) },
      tables: { instances: table(doc.instances, 'providerID'), drift: table(doc.drift ?? [], 'key') },
    });
    const prev = {
      a: 1,
      instances: [
        { providerID: 'a', v: 1 },
        { providerID: 'b', v: 1 },
        { providerID: 'c', v: 1 },
      ],
      drift: [{ key: 'k1' }],
    };
    const next = {
      a: 2,
      instances: [
        { providerID: 'a', v: 2 },
        { providerID: 'a2', v: 0 },
        { providerID: 'c', v: 1 },
      ],
      drift: [],
    };
    expect(diffStoredRows(text(prev), text(next))).toEqual(diffHistory(prev, next));
    const t = (ids: string[]) => ({ instances: ids.map((providerID) => ({ providerID })) });
    expect(diffStoredRows(text(t(['a', 'b'])), text(t(['b', 'a'])))).toBeNull();
    expect(diffStoredRows(text(t(['a', 'a'])), text(t(['a'])))).toBeNull();
    expect(diffStoredRows(text(t(['a'])), text(t(['a', 'a'])))).toBeNull();
    expect(diffStoredRows(text(t([])), { ...text(t([])), rest: { instances: [], extra: 1 } })).toBeNull();
  });

  it('declines what only a keyframe can say: a re-sorted table, duplicate keys, a new top-level field', () => {
    const t = (ids: string[]) => ids.map((providerID) => ({ providerID }));
    expect(diffHistory({ instances: t(['a', 'b']) }, { instances: t(['b', 'a']) })).toBeNull();
    expect(diffHistory({ instances: t(['a', 'a']) }, { instances: t(['a']) })).toBeNull();
    expect(diffHistory({ instances: [{ name: 'no key' }] }, { instances: [] })).toBeNull();
    expect(diffHistory({ instances: [] }, { instances: [], extra: 1 })).toBeNull();
    // A table that is not an array on one side is diffed as plain JSON.
    const p = diffHistory({ instances: null }, { instances: t(['a']) });
    expect(p?.tables).toEqual({});
    expect(roundTrip({ instances: null }, { instances: t(['a']) })).toEqual({ instances: t(['a']) });
  });

  it('refuses a patch that does not fit the state it is applied to', () => {
    const p = diffHistory(
      { instances: [{ providerID: 'a' }] },
      { instances: [{ providerID: 'a' }, { providerID: 'b' }] },
    );
    expect(() => applyHistory({ instances: [{ providerID: 'z' }] }, p!)).toThrow(/no row a/);
    expect(() => applyHistory({}, { ...p!, v: 3 as 2 })).toThrow(/unknown version 3/);
  });
});

describe('history patches: rows edited in place', () => {
  it("say what changed in a long row rather than repeat it, and keep the row's key order", () => {
    const long = 'x'.repeat(300);
    const prev = { instances: [{ providerID: 'a', path: long, node: { ready: true } }] };
    const next = { instances: [{ providerID: 'a', path: long, node: { ready: false }, extra: 1 }] };
    const p = diffHistory(prev, next);
    expect(p?.tables.instances?.edit).toEqual([
      [
        'a',
        [
          { op: 'replace', path: '/node/ready', value: false },
          { op: 'add', path: '/extra', value: 1 },
        ],
      ],
    ]);
    expect(JSON.stringify(roundTrip(prev, next))).toBe(JSON.stringify(next));
    // A row whose keys were reordered cannot be edited into shape: it is carried whole.
    const reordered = { instances: [{ providerID: 'a', node: { ready: true }, path: long }] };
    expect(diffHistory(prev, reordered)?.tables.instances).toEqual({ set: reordered.instances });
    expect(() => applyHistory({ instances: [] }, p!)).toThrow(/no row a to edit/);
  });

  it('sameJson tells JSON-identical values apart from the rest without building strings', () => {
    expect(sameJson({ a: [1, { b: null }] }, { a: [1, { b: null }] })).toBe(true);
    expect(sameJson({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(false);
    expect(sameJson([1], { 0: 1 })).toBe(false);
    expect(sameJson({ a: [1, 2] }, { a: [1] })).toBe(false);
    expect(sameJson(null, {})).toBe(false);
  });
});
