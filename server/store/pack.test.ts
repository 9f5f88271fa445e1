import { describe, expect, it } from 'vitest';
import { analyzePool } from '@/lib/analyze';
import { buildPool, type InstanceSpec } from '@/lib/fixtures/pool';
import { stableDetail } from '@/lib/transitions';
import {
  INSTANCE_ROW_PARTS,
  asciiJson,
  completeStored,
  deflateDoc,
  deflateIfShorter,
  inflateDoc,
  packDetail,
  parseStored,
  rowHash,
  rowKey,
  sameShape,
  shapeOf,
  splitStored,
  storedState,
  storedText,
  toStore,
  unpackDetail,
} from './pack';

/** The stored document as one JSON text (the stored layout puts each row on a line of its own). */
const storedJson = (d: Parameters<typeof storedState>[0]) => JSON.stringify(parseStored(storedText(storedState(d))));

describe('stored pool states', () => {
  it('write each spelling equal to the providerID once, keep other spellings, and read back the same', () => {
    // Instance 1's Node reports its ID in other case: case drift, kept as spelled.
    const built = buildPool({
      replicas: 3,
      instances: [{ member: '0' }, { member: '1', nodeProviderID: 'X' }, { member: '2', node: 'none' }],
    });
    const b2 = buildPool({
      replicas: 3,
      instances: [
        { member: '0' },
        { member: '1', nodeProviderID: built.ids[1]!.toUpperCase() },
        { member: '2', node: 'none' },
      ],
    });
    const d = analyzePool(b2.input, { now: b2.now });
    expect(d.drift.length).toBeGreaterThan(0);
    const packed = JSON.parse(storedJson(d)) as { instances: { sources: Record<string, unknown> }[] };
    const big = buildPool({ replicas: 100, instances: Array.from({ length: 100 }, (_, i) => ({ member: String(i) })) });
    const bd = analyzePool(big.input, { now: big.now });
    expect(storedJson(bd).length).toBeLessThan(JSON.stringify(stableDetail(bd)).length / 2);
    expect(unpackDetail(JSON.parse(storedJson(bd)) as object)).toEqual(JSON.parse(JSON.stringify(stableDetail(bd))));
    const row1 = packed.instances.find((r) => Object.values(r.sources).includes(built.ids[1]!.toUpperCase()));
    expect(row1?.sources.azure).toBe(1);
    expect(unpackDetail(JSON.parse(storedJson(d)) as object)).toEqual(JSON.parse(JSON.stringify(stableDetail(d))));
    // The caller's detail is not changed by packing.
    const before = JSON.stringify(d);
    packDetail(d);
    expect(JSON.stringify(d)).toBe(before);
  });

  it('deflate whole states, and read states stored plain before', () => {
    const json = JSON.stringify({
      ids: Array.from(
        { length: 200 },
        (_, i) =>
          `/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/pool/virtualMachines/${i}`,
      ),
    });
    const z = deflateDoc(json);
    expect(z.startsWith('z1:')).toBe(true);
    expect(z.length).toBeLessThan(json.length / 5);
    expect(inflateDoc(z)).toBe(json);
    expect(inflateDoc(json)).toBe(json);
    expect(deflateIfShorter('{"short":1}')).toBe('{"short":1}');
    expect(inflateDoc(deflateIfShorter(json))).toBe(json);
    expect(unpackDetail({ instances: [{ providerID: 'a', sources: { azure: 'a', node: null } }] })).toEqual({
      instances: [{ providerID: 'a', sources: { azure: 'a', node: null } }],
    });
  });

  it('lay a state out with one row per line, split it without parsing the rows, and read either layout', () => {
    const big = buildPool({ replicas: 5, instances: Array.from({ length: 5 }, (_, i) => ({ member: String(i) })) });
    const d = analyzePool(big.input, { now: big.now });
    const s = storedState(d);
    const text = storedText(s);
    const lines = text.split('\n');
    expect(lines).toHaveLength(6);
    expect(lines.slice(1)).toEqual(s.tables.instances.rows);
    expect(JSON.parse(lines[0]!)).toMatchObject({ instances: [], drift: [] });
    // Parsed, it is the packed document, with the instance table back at its place among the keys.
    expect(JSON.stringify(parseStored(text))).toBe(JSON.stringify(packDetail(d)));
    const split = splitStored(text);
    expect(split.tables.instances.keys).toEqual(d.instances.map((r) => r.providerID));
    expect(split.tables.instances.rows).toEqual(s.tables.instances.rows);
    // A state stored before (one JSON document) splits the same way.
    const legacy = splitStored(JSON.stringify(packDetail(d)));
    expect(legacy).toEqual(split);
    expect(parseStored(JSON.stringify(packDetail(d)))).toEqual(packDetail(d));
    // A pool without instances is plain JSON.
    const empty = storedState({ ...d, instances: [] });
    expect(storedText(empty)).not.toContain('\n');
    expect(splitStored(storedText(empty))).toEqual({
      rest: JSON.parse(storedText(empty)),
      tables: { instances: { keys: [], rows: [] }, drift: { keys: [], rows: [] } },
    });
  });

  it('lay drift items out after the instance rows, and read the layouts stored before (items in the document)', () => {
    const b = buildPool({
      replicas: 4,
      instances: [{ member: '0' }, { member: '1', node: 'none' }, { member: '2', inAzure: false }, { member: '3' }],
    });
    const d = analyzePool(b.input, { now: b.now });
    expect(d.drift.length).toBeGreaterThan(2);
    const s = storedState(d);
    const text = storedText(s);
    const lines = text.split('\n');
    const mark = lines.indexOf('"drift"');
    expect(mark).toBe(1 + d.instances.length);
    expect(lines.slice(1, mark)).toEqual(s.tables.instances.rows);
    expect(lines.slice(mark + 1)).toEqual(s.tables.drift.rows);
    expect(s.tables.drift.keys).toEqual(d.drift.map((x) => x.key));
    expect(JSON.stringify(parseStored(text))).toBe(JSON.stringify(packDetail(d)));
    expect(unpackDetail(parseStored(text))).toEqual(JSON.parse(JSON.stringify(stableDetail(d))));
    const split = splitStored(text);
    expect(split.tables.drift).toEqual(s.tables.drift);
    expect(split.rest).toEqual(JSON.parse(s.restText));
    // One JSON document (before version 4), and instance rows by line with the items in the document (version 4).
    const whole = JSON.stringify(packDetail(d));
    const v4 = [JSON.stringify({ ...packDetail(d), instances: [] }), ...(s.tables.instances.rows as string[])].join(
      '\n',
    );
    for (const old of [whole, v4]) {
      expect(splitStored(old)).toEqual(split);
      expect(JSON.stringify(parseStored(old))).toBe(JSON.stringify(packDetail(d)));
    }
    // Drift items but no instance rows: the items' line follows the document directly.
    const onlyDrift = storedText(storedState({ ...d, instances: [] }));
    expect(onlyDrift.split('\n')[1]).toBe('"drift"');
    expect((parseStored(onlyDrift).drift as unknown[]).length).toBe(d.drift.length);
    expect(() => parseStored(`${s.restText}\n"tables"\n{}`)).toThrow(/unknown table tables/);
  });

  it("read a row's key off its JSON, escaped or not", () => {
    expect(rowKey('{"providerID":"azure:///x/1","v":1}')).toBe('azure:///x/1');
    expect(rowKey(JSON.stringify({ providerID: 'a"b\\c', v: 1 }))).toBe('a"b\\c');
    expect(rowKey(JSON.stringify({ v: 1, providerID: 'later' }))).toBe('later');
    expect(rowKey('{"key":"ghost-in-machinepool:azure:///x/1","kind":"x"}', 'drift')).toBe(
      'ghost-in-machinepool:azure:///x/1',
    );
    expect(rowKey(JSON.stringify({ kind: 'x', key: 'k"1' }), 'drift')).toBe('k"1');
  });

  it('store text in ASCII, escaping what lies beyond it, so it reads back the same', () => {
    const value = { note: 'expected on CAPZ ≥ v1.20 — fine 🙂', plain: 'a"b\\c' };
    const json = asciiJson(JSON.stringify(value));
    expect(json).toMatch(/^[\x00-\x7f]*$/);
    expect(json).toContain('\\u2265');
    expect(JSON.parse(json)).toEqual(value);
    expect(asciiJson('{"a":1}')).toBe('{"a":1}');
    const b = buildPool({ replicas: 2, instances: [{ member: '0' }, { member: '1' }] });
    const d = analyzePool(b.input, { now: b.now });
    const wide = {
      ...d,
      notes: ['CAPZ ≥ v1.20'],
      instances: d.instances.map((r, i) =>
        i === 1 ? { ...r, azure: r.azure && { ...r.azure, errorMessage: 'échec' } } : r,
      ),
    };
    const text = storedText(storedState(wide));
    expect(text).toMatch(/^[\x00-\x7f]*$/);
    expect(unpackDetail(parseStored(text))).toEqual(JSON.parse(JSON.stringify(stableDetail(wide))));
  });

  it('hash an instance row or a drift item by everything its JSON says but the providerID it is keyed by: equal read back from the store, different after any change', () => {
    const b = buildPool({
      replicas: 4,
      azureReadMinutesAgo: 1,
      instances: [
        { member: '0' },
        { member: '1', node: 'none' },
        { member: '2', state: 'Failed', errorCode: 'OSProvisioningTimedOut' },
        { member: '3', inAzure: false, createdMinutesAgo: 0.5 },
      ],
    });
    const d = analyzePool(b.input, { now: b.now });
    expect(d.drift.length).toBeGreaterThan(0);
    const revived = unpackDetail(parseStored(storedText(storedState(d)))) as unknown as typeof d;
    const rows: [{ providerID: string | null }, { providerID: string | null }][] = [
      ...d.instances.map((r, i) => [r, revived.instances[i]!] as [typeof r, typeof r]),
      ...d.drift.map((x, i) => [x, revived.drift[i]!] as [typeof x, typeof x]),
    ];
    for (const [row, back] of rows) {
      expect(rowHash(back)).toBe(rowHash(row));
      // Every value the row's JSON holds, changed in turn (and every key renamed), changes the hash.
      const json = JSON.stringify(row);
      const seen = new Set([rowHash(row)]);
      const paths: (string | number)[][] = [];
      const walk = (v: unknown, path: (string | number)[]) => {
        if (v !== null && typeof v === 'object')
          for (const [k, x] of Object.entries(v)) walk(x, [...path, Array.isArray(v) ? Number(k) : k]);
        paths.push(path);
      };
      walk(row, []);
      // The providerID itself is the key rows are compared by: its characters are not part of the hash.
      for (const path of paths.filter((p) => p.length > 0 && !(p.length === 1 && p[0] === 'providerID'))) {
        for (const edit of ['value', 'key'] as const) {
          const copy = JSON.parse(json) as Record<string, unknown>;
          const parent = path
            .slice(0, -1)
            .reduce<Record<string | number, unknown>>((o, k) => o[k] as Record<string | number, unknown>, copy);
          const last = path[path.length - 1]!;
          if (edit === 'value') {
            const v = parent[last];
            parent[last] =
              typeof v === 'string'
                ? `${v}x`
                : typeof v === 'boolean'
                  ? !v
                  : typeof v === 'number'
                    ? v + 1
                    : v === null
                      ? 'x'
                      : null;
          } else if (!Array.isArray(parent)) {
            const entries = Object.entries(parent).map(([k, v]) => [k === last ? `${k}_` : k, v] as const);
            for (const k of Object.keys(parent)) delete parent[k];
            Object.assign(parent, Object.fromEntries(entries));
          } else continue;
          const h = rowHash(copy as unknown as typeof row);
          expect(seen.has(h), `${edit} at ${path.join('.')}`).toBe(false);
          seen.add(h);
        }
      }
      expect(seen.size).toBeGreaterThan(20);
    }
  });

  it('hash an instance row field by field over every field an analysis gives it (none left out)', () => {
    // Instance 3 is newer than Azure's last read: its row alone has the optional awaitingAzureRead.
    const b = buildPool({
      replicas: 4,
      azureReadMinutesAgo: 1,
      instances: [
        { member: '0' },
        { member: '1', node: 'none' },
        { member: '2', state: 'Failed', errorCode: 'OSProvisioningTimedOut' },
        { member: '3', inAzure: false, createdMinutesAgo: 0.5 },
      ],
    });
    const d = analyzePool(b.input, { now: b.now });
    const keys = (o: object | null) => (o === null ? [] : Object.keys(o).sort());
    const listed = (o: object) => Object.keys(o).sort();
    const optional = ['awaitingAzureRead'];
    expect(d.instances.filter((r) => 'awaitingAzureRead' in r)).toHaveLength(1);
    for (const row of d.instances) {
      expect(keys(row).filter((k) => !optional.includes(k))).toEqual(
        listed(INSTANCE_ROW_PARTS.fields).filter((k) => !optional.includes(k)),
      );
      expect(keys(row).filter((k) => !(k in INSTANCE_ROW_PARTS.fields))).toEqual([]);
      for (const part of ['sources', 'azure', 'ampm', 'machine', 'node', 'autoscaler'] as const) {
        if (row[part] !== null) expect(keys(row[part]), part).toEqual(listed(INSTANCE_ROW_PARTS[part]));
      }
    }
    // Each part is somewhere present, so the comparison above covered it.
    for (const part of ['azure', 'ampm', 'machine', 'node'] as const)
      expect(
        d.instances.some((r) => r[part] !== null),
        part,
      ).toBe(true);
  });

  it('leave out the rows the caller says are unchanged, and take them back from the previous stored state', () => {
    const b = buildPool({ replicas: 3, instances: [{ member: '0' }, { member: '1' }, { member: '2' }] });
    const d = analyzePool(b.input, { now: b.now });
    const full = storedState(d);
    const partial = storedState(d, { instances: (i) => i !== 1 });
    expect(partial.tables.instances.rows.map((r) => r === null)).toEqual([true, false, true]);
    expect(partial.tables.instances.rows[1]).toBe(full.tables.instances.rows[1]);
    expect(() => storedText(partial)).toThrow(/left out/);
    expect(storedText(completeStored(partial, splitStored(storedText(full)))!)).toBe(storedText(full));
    // The previous state lacks a row left out: the caller must serialise the whole state.
    const fewer = storedState({ ...d, instances: d.instances.slice(1) });
    expect(completeStored(partial, splitStored(storedText(fewer)))).toBeNull();
    expect(completeStored(partial, null)).toBeNull();
    expect(completeStored(full, null)).toBe(full);
  });

  it('find a pool analysed again the same as the state the store read back (after a restart), serialising no row', () => {
    // Instance 2 without its Node: one drift item.
    const members: InstanceSpec[] = [{ member: '0' }, { member: '1' }, { member: '2', node: 'none' }];
    const analyse = (m: typeof members) => {
      const b = buildPool({ replicas: 3, instances: m });
      return analyzePool(b.input, { now: b.now });
    };
    const d = analyse(members);
    const { stored } = toStore(d, undefined);
    // As the store revives it: parsed, unpacked, with its last change and the time it is read at.
    const revived = {
      ...(unpackDetail(parseStored(storedText(stored))) as unknown as typeof d),
      at: '2026-11-30T00:00:00.000Z',
    };
    revived.summary = { ...revived.summary, lastChange: '2026-11-29T00:00:00.000Z' };
    const before = shapeOf(revived);
    const again = toStore(analyse(members), before);
    expect(again.stored.tables.instances.rows).toEqual([null, null, null]);
    expect(again.stored.tables.drift.rows).toEqual([null]);
    expect(sameShape(before, again.shape, again.stored)).toBe(true);
    // One instance loses its Node: its row alone is serialised, with its new drift item, and the state is not the same.
    const changed = toStore(
      analyse(members.map((m) => (m.member === '1' ? { ...m, node: 'none' as const } : m))),
      before,
    );
    expect(changed.stored.tables.instances.rows.map((r) => r === null)).toEqual([true, false, true]);
    expect(changed.stored.tables.drift.keys).toHaveLength(2);
    expect(changed.stored.tables.drift.rows.filter((r) => r !== null)).toHaveLength(1);
    expect(sameShape(before, changed.shape, changed.stored)).toBe(false);
    // Only a drift item's content changed (its since): that item alone is serialised.
    const since = analyse(members);
    since.drift = since.drift.map((x) => ({ ...x, since: '2026-11-28T00:00:00.000Z' }));
    const moved = toStore(since, before);
    expect(moved.stored.tables.instances.rows).toEqual([null, null, null]);
    expect(moved.stored.tables.drift.rows.map((r) => r === null)).toEqual([false]);
    expect(sameShape(before, moved.shape, moved.stored)).toBe(false);
    // Given the analysis its shape was made of, the drift items the new one took over (the same objects) are not
    // hashed again: the same state to store as with hashing, and the shape's hash stands for them.
    const first = analyse(members);
    const firstStored = toStore(first, undefined);
    const next = analyzePool(buildPool({ replicas: 3, instances: members }).input, { now: first.at, previous: first });
    expect(next.drift[0]).toBe(first.drift[0]);
    const hashed = toStore(next, firstStored.shape);
    const taken = toStore(next, firstStored.shape, first);
    expect(taken.stored).toEqual(hashed.stored);
    expect(taken.shape).toEqual(hashed.shape);
    const key = first.drift[0]!.key;
    const skewed = { ...firstStored.shape, tables: { ...firstStored.shape.tables, drift: new Map([[key, 12345]]) } };
    expect(toStore(next, skewed, first).shape.tables.drift.get(key)).toBe(12345);
    expect(toStore(next, skewed).shape.tables.drift.get(key)).not.toBe(12345);
    expect(sameShape(undefined, again.shape, again.stored)).toBe(false);
  });
});
