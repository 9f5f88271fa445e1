import { describe, expect, it } from 'vitest';
import { analyzePool } from '@/lib/analyze';
import { buildPool } from '@/lib/fixtures/pool';
import { stableDetail } from '@/lib/transitions';
import {
  asciiJson,
  completeStored,
  deflateDoc,
  deflateIfShorter,
  inflateDoc,
  packDetail,
  parseStored,
  rowKey,
  splitStored,
  storedState,
  storedText,
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

  it('lay a state out with one row per line, split it without parsing the rows, and read it back', () => {
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
    // A pool without instances is plain JSON.
    const empty = storedState({ ...d, instances: [] });
    expect(storedText(empty)).not.toContain('\n');
    expect(splitStored(storedText(empty))).toEqual({
      rest: JSON.parse(storedText(empty)),
      tables: { instances: { keys: [], rows: [] }, drift: { keys: [], rows: [] } },
    });
  });

  it('lay drift items out after the instance rows, and read them back', () => {
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
});
