import { describe, expect, it } from 'vitest';
import { analyzePool } from '@/lib/analyze';
import { buildPool } from '@/lib/fixtures/pool';
import { stableDetail } from '@/lib/transitions';
import { deflateDoc, deflateIfShorter, inflateDoc, packDetail, storedState, unpackDetail } from './pack';

const storedJson = (d: Parameters<typeof storedState>[0]) => storedState(d).json;

describe('stored pool states', () => {
  it('write each spelling equal to the providerID once, keep other spellings, and read back the same', () => {
    // Instance 1's Node reports its ID in other case: case drift, kept as spelled.
    const built = buildPool({ replicas: 3, instances: [{ member: '0' }, { member: '1', nodeProviderID: 'X' }, { member: '2', node: 'none' }] });
    const b2 = buildPool({ replicas: 3, instances: [{ member: '0' }, { member: '1', nodeProviderID: built.ids[1]!.toUpperCase() }, { member: '2', node: 'none' }] });
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
    const json = JSON.stringify({ ids: Array.from({ length: 200 }, (_, i) => `/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/pool/virtualMachines/${i}`) });
    const z = deflateDoc(json);
    expect(z.startsWith('z1:')).toBe(true);
    expect(z.length).toBeLessThan(json.length / 5);
    expect(inflateDoc(z)).toBe(json);
    expect(inflateDoc(json)).toBe(json);
    expect(deflateIfShorter('{"short":1}')).toBe('{"short":1}');
    expect(inflateDoc(deflateIfShorter(json))).toBe(json);
    expect(unpackDetail({ instances: [{ providerID: 'a', sources: { azure: 'a', node: null } }] })).toEqual({ instances: [{ providerID: 'a', sources: { azure: 'a', node: null } }] });
  });
});
