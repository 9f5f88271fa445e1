import { describe, expect, it } from 'vitest';
import { analyzePool } from '@/lib/analyze';
import type { InstanceRow } from '@/lib/api-types';
import { buildAksPool } from '@/lib/fixtures/aks-pool';
import { buildPool, type InstanceSpec } from '@/lib/fixtures/pool';
import { parseStored, storedState, storedText, unpackDetail } from './pack';
import { INSTANCE_ROW_PARTS, rowHash, sameShape, shapeOf, toStore } from './shape';

describe("pool states' shapes", () => {
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
        // A Node's agentPool is an AKS Node's label: a self-managed pool's Nodes have none.
        const skip = part === 'node' ? ['agentPool'] : [];
        if (row[part] !== null)
          expect(keys(row[part]), part).toEqual(listed(INSTANCE_ROW_PARTS[part]).filter((k) => !skip.includes(k)));
      }
    }
    // An AKS pool's Nodes carry their agent pool, and it counts in the row's hash.
    const aks = analyzePool(buildAksPool({ flavour: 'aks-aso', mpList: [0] }), { now: b.now });
    expect(aks.instances[0]?.node?.agentPool).toBe('pool1');
    const relabelled = structuredClone(aks.instances[0]) as InstanceRow;
    (relabelled.node as NonNullable<InstanceRow['node']>).agentPool = 'other';
    expect(rowHash(relabelled)).not.toBe(rowHash(aks.instances[0] as InstanceRow));
    // Each part is somewhere present, so the comparison above covered it.
    for (const part of ['azure', 'ampm', 'machine', 'node'] as const)
      expect(
        d.instances.some((r) => r[part] !== null),
        part,
      ).toBe(true);
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
