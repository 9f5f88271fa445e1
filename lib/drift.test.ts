import { describe, expect, it } from 'vitest';
import type { DriftKind } from './api-types';
import { computeDrift, countDrift } from './drift';
import { DEFAULT_AZURE, NOW, minutesBefore } from './fixtures/objects';
import { buildPool, healthyInstances, instanceProviderId, type InstanceSpec, type PoolSpec } from './fixtures/pool';
import { joinSources } from './join';
import { buildPoolModel } from './pool-model';

const id = (m: string) => instanceProviderId(DEFAULT_AZURE, 'pool0', m);

function drift(spec: PoolSpec, previous?: Parameters<typeof computeDrift>[2]['previous'], now = NOW) {
  const model = buildPoolModel(buildPool(spec).input);
  return computeDrift(model, joinSources(model), { now, previous });
}

const kinds = (spec: PoolSpec) => drift(spec).map((d) => `${d.kind}@${d.providerID?.split('/').pop() ?? ''}`);

describe('drift kinds', () => {
  it('come in the order of their keys (code units), which the store gives back', () => {
    const items = drift({
      replicas: 4,
      instances: [
        { member: '10', node: 'none' },
        { member: '2', inAzure: false, node: 'none' },
        { member: '1', node: 'none' },
        { member: '3', ampm: false },
      ],
    });
    const keys = items.map((d) => d.key);
    expect(keys.length).toBeGreaterThan(4);
    expect(keys).toEqual([...keys].sort());
    expect(new Set(items.map((d) => d.kind)).size).toBeGreaterThan(2);
  });

  it.each<[string, PoolSpec, string[]]>([
    ['none for a healthy pool', { replicas: 3, instances: healthyInstances(3) }, []],
    [
      'missing-from-machinepool: in Azure and the AMP list, not in the MP list',
      { replicas: 2, instances: healthyInstances(2), mp: { providerIDList: [id('0')] } },
      ['missing-from-machinepool@1'],
    ],
    [
      'ghost-in-machinepool: in the MP list, gone from Azure',
      {
        replicas: 1,
        instances: [{ member: '0' }, { member: '1', inAzure: false, ampm: false, node: 'none' }],
        mp: { providerIDList: [id('0'), id('1')] },
      },
      ['ghost-in-machinepool@1'],
    ],
    [
      'missing-from-azuremachinepool: in Azure, no AMPM yet',
      {
        replicas: 2,
        instances: [{ member: '0' }, { member: '1', ampm: false }],
        mp: { providerIDList: [id('0'), id('1')] },
      },
      ['missing-from-azuremachinepool@1'],
    ],
    [
      'ghost-in-azuremachinepool (and in the MP list): VM deleted out of band',
      { replicas: 2, instances: [{ member: '0' }, { member: '1', inAzure: false, node: 'none' }] },
      ['ghost-in-azuremachinepool@1', 'ghost-in-machinepool@1'],
    ],
    [
      'instance-without-node: running, no Node',
      { replicas: 1, instances: [{ member: '0', node: 'none' }] },
      ['instance-without-node@0'],
    ],
    [
      'node-without-instance: a Node in this scale set with no VM',
      {
        replicas: 1,
        instances: [{ member: '0' }, { member: '9', inAzure: false, ampm: false }],
        mp: { providerIDList: [id('0')] },
      },
      ['node-without-instance@9'],
    ],
    [
      'case-mismatch, and nothing else for that ID',
      { replicas: 1, instances: [{ member: '0', nodeProviderID: id('0').replace('prod-weu', 'PROD-WEU') }] },
      ['case-mismatch@0'],
    ],
    [
      'order-only: same IDs, other order',
      {
        replicas: 2,
        instances: healthyInstances(2),
        amp: { providerIDList: [id('1'), id('0')] },
        mp: { providerIDList: [id('0'), id('1')] },
      },
      ['order-only@'],
    ],
  ])('%s', (_name, spec, expected) => {
    expect(kinds(spec)).toEqual(expected);
  });

  it('does not count instances Azure is deleting as missing', () => {
    expect(
      kinds({
        replicas: 1,
        instances: [{ member: '0' }, { member: '1', state: 'Deleting', ampm: false, node: 'none' }],
        mp: { providerIDList: [id('0')] },
      }),
    ).toEqual([]);
  });

  it('does not call anything a ghost when Azure could not be read', () => {
    expect(
      kinds({
        replicas: 1,
        instances: [{ member: '0' }, { member: '1', inAzure: false }],
        azure: { unknown: 'timeout' },
      }),
    ).toEqual([]);
  });

  describe('with an Azure read older than some Kubernetes objects', () => {
    // Azure listed the VMs 2 min ago (its Date header). Instance 1's AMPM is a minute old: its VM may have been
    // created since the read. Instance 2's AMPM is 5 min old: its VM existed when Azure listed the scale set.
    const spec = (two: Partial<InstanceSpec> = {}): PoolSpec => ({
      replicas: 3,
      azureReadMinutesAgo: 2,
      instances: [
        { member: '0' },
        { member: '1', inAzure: false, createdMinutesAgo: 1 },
        { member: '2', inAzure: false, createdMinutesAgo: 5, ...two },
      ],
    });

    it('takes an ID whose AMPM is newer than the read for not read yet, and one whose AMPM is older for gone', () => {
      expect(kinds(spec())).toEqual([
        'ghost-in-azuremachinepool@2',
        'ghost-in-machinepool@2',
        'node-without-instance@2',
      ]);
    });

    it('counts an AMPM made in the second of the read as newer (both are whole seconds)', () => {
      expect(kinds(spec({ createdMinutesAgo: 2 }))).toEqual([]);
      expect(kinds(spec({ createdMinutesAgo: 2 + 1 / 60 }))).toEqual([
        'ghost-in-azuremachinepool@2',
        'ghost-in-machinepool@2',
        'node-without-instance@2',
      ]);
    });

    it('still reports what the Kubernetes objects alone show for a new ID (in the AMP list, not in the MP list)', () => {
      expect(kinds({ ...spec(), mp: { providerIDList: [id('0'), id('2')] } })).toEqual([
        'ghost-in-azuremachinepool@2',
        'ghost-in-machinepool@2',
        'missing-from-machinepool@1',
        'node-without-instance@2',
      ]);
    });

    it('takes an instance the read lists whose AMPM was deleted after the read for gone since, not for drift', () => {
      // Instance 3 is in the read, running, with no AMPM, Machine or Node left and in neither list any more.
      const gone = (minutesAgo: number | null, extra: Partial<PoolSpec> = {}): string[] =>
        kinds({
          replicas: 1,
          azureReadMinutesAgo: 2,
          instances: [{ member: '0' }, { member: '3', ampm: false, node: 'none' }],
          mp: { providerIDList: [id('0')] },
          ...(minutesAgo === null ? {} : { departedAmpms: [{ member: '3', minutesAgo }] }),
          ...extra,
        });
      expect(gone(1)).toEqual([]);
      expect(gone(2)).toEqual([]);
      // Deleted before the read (the read should not have listed it), or no deletion seen: what the read says counts.
      expect(gone(3)).toEqual([
        'instance-without-node@3',
        'missing-from-azuremachinepool@3',
        'missing-from-machinepool@3',
      ]);
      expect(gone(null)).toEqual([
        'instance-without-node@3',
        'missing-from-azuremachinepool@3',
        'missing-from-machinepool@3',
      ]);
      expect(gone(1, { azureReadMinutesAgo: undefined })).toEqual([
        'instance-without-node@3',
        'missing-from-azuremachinepool@3',
        'missing-from-machinepool@3',
      ]);
      // Still in the MachinePool list (frozen), it is no ghost either until Azure says it is gone.
      expect(gone(1, { mp: { providerIDList: [id('0'), id('3')] } })).toEqual([]);
    });

    it('does not excuse an ID without an AMPM (nothing tells when it appeared), nor one when the read time is unknown', () => {
      expect(
        kinds({
          ...spec(),
          instances: [{ member: '0' }, { member: '1', inAzure: false, ampm: false }],
          mp: { providerIDList: [id('0')] },
        }),
      ).toEqual(['node-without-instance@1']);
      expect(kinds({ ...spec(), azureReadMinutesAgo: undefined })).toEqual([
        'ghost-in-azuremachinepool@1',
        'ghost-in-azuremachinepool@2',
        'ghost-in-machinepool@1',
        'ghost-in-machinepool@2',
        'node-without-instance@1',
        'node-without-instance@2',
      ]);
    });
  });

  it('does not report Node drift when the workload cluster is unreachable', () => {
    expect(kinds({ replicas: 1, instances: [{ member: '0', node: 'none' }], workload: { unreachable: 'x' } })).toEqual(
      [],
    );
  });

  it('ignores Nodes of other scale sets in the same workload cluster', () => {
    const b = buildPool({ replicas: 1, instances: healthyInstances(1) });
    if (b.input.workload?.state !== 'ok') throw new Error('expected nodes');
    b.input.workload.nodes.push({
      metadata: { name: 'other' },
      spec: { providerID: instanceProviderId(DEFAULT_AZURE, 'pool1', '0') },
    });
    const model = buildPoolModel(b.input);
    expect(computeDrift(model, joinSources(model), { now: NOW })).toEqual([]);
  });

  it('lists which sources hold the ID in each item', () => {
    const [item] = drift({ replicas: 2, instances: healthyInstances(2), mp: { providerIDList: [id('0')] } });
    expect(item).toEqual({
      key: `missing-from-machinepool:${id('1').slice('azure://'.length).toLowerCase()}`,
      kind: 'missing-from-machinepool',
      severity: 'warning',
      providerID: id('1'),
      sources: { azure: id('1'), amp: id('1'), mp: null, ampm: id('1'), machine: id('1'), node: id('1') },
      summary: 'Not in the MachinePool providerIDList: cluster-autoscaler cannot see this instance.',
      since: null,
    });
  });
});

describe('since', () => {
  const spec: PoolSpec = { replicas: 3, instances: healthyInstances(3), mp: { providerIDList: [id('0')] } };

  it('is unknown without a previous analysis', () => {
    expect(drift(spec).map((d) => d.since)).toEqual([null, null]);
  });

  it('carries forward what was seen before and stamps new items with now', () => {
    const first = drift(spec);
    const earlier = minutesBefore(NOW, 30);
    const previous = [{ ...first[0]!, since: earlier }];
    const later = minutesBefore(NOW, -5);
    expect(drift(spec, previous, later).map((d) => d.since)).toEqual([earlier, later]);
  });

  it('keeps an item that says what it said before as that very object, and makes a new one when anything changed', () => {
    const before = drift(spec, [], minutesBefore(NOW, 10));
    expect(before).toHaveLength(2);
    const same = drift(spec, before);
    expect(same[0]).toBe(before[0]);
    expect(same[1]).toBe(before[1]);
    // Instance 1's Node now spells its ID in capitals: its item's sources differ (and a case-mismatch replaces
    // it); instance 2's item is untouched.
    const changed = drift(
      {
        ...spec,
        instances: [{ member: '0' }, { member: '1', nodeProviderID: id('1').toUpperCase() }, { member: '2' }],
      },
      before,
    );
    const kept = changed.filter((d) => before.includes(d));
    expect(kept.map((d) => d.key)).toEqual(before.filter((d) => d.providerID === id('2')).map((d) => d.key));
    expect(changed.length).toBeGreaterThan(kept.length);
    // A previous item with other sources is not taken over, though its since is.
    const moved = [{ ...before[0]!, sources: { ...before[0]!.sources, node: 'elsewhere' } }, before[1]!];
    const again = drift(spec, moved);
    expect(again[0]).not.toBe(moved[0]);
    expect(again[0]).toEqual({ ...moved[0], sources: before[0]!.sources });
    expect(again[1]).toBe(before[1]);
  });
});

describe('countDrift', () => {
  it('counts items by kind', () => {
    const items = drift({ replicas: 2, instances: [{ member: '0' }, { member: '1', inAzure: false, node: 'none' }] });
    expect(countDrift(items)).toEqual<Partial<Record<DriftKind, number>>>({
      'ghost-in-machinepool': 1,
      'ghost-in-azuremachinepool': 1,
    });
  });
});
