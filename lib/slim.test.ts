import { describe, expect, it } from 'vitest';
import { analyzePool } from './analyze';
import { SCENARIOS, buildScenario } from './fixtures/scenarios';
import {
  AKS_AGENT_POOL_LABEL,
  AMPM_POOL_LABEL,
  MACHINE_POOL_LABEL,
  compactTimeMs,
  isInterned,
  itemKey,
  labelOf,
  nameOf,
  namespaceOf,
  sameContent,
  slim,
  type SlimAmpm,
  type SlimMachine,
  type SlimNode,
} from './slim';
import type { PoolInput } from './pool-model';

function slimmed(input: PoolInput): PoolInput {
  return {
    ...input,
    machinePool: slim('mp', input.machinePool),
    azureMachinePool: input.azureMachinePool ? slim('amp', input.azureMachinePool) : input.azureMachinePool,
    azureMachinePoolMachines: input.azureMachinePoolMachines?.map((o) => slim('ampm', o)),
    machines: input.machines?.map((o) => slim('machine', o)),
    workload:
      input.workload?.state === 'ok'
        ? { state: 'ok', nodes: input.workload.nodes.map((n) => slim('node', n)) }
        : input.workload,
  };
}

describe('slim', () => {
  it.each(SCENARIOS.map((s) => s.id))('%s: the analysis of slimmed objects equals that of the full ones', (id) => {
    const b = buildScenario(id);
    expect(analyzePool(slimmed(b.input), { now: b.now })).toEqual(analyzePool(b.input, { now: b.now }));
  });

  it('cuts a Node from kubectl down to name, providerID, taints and whether it is Ready (no resourceVersion)', () => {
    const node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: 'n0',
        uid: 'u',
        resourceVersion: '7',
        creationTimestamp: new Date('2026-11-29T10:00:00Z') as unknown as string,
        labels: { a: 'b' },
        annotations: { x: 'y' },
      },
      spec: {
        providerID: 'azure:///x',
        taints: [{ key: 'node.cluster.x-k8s.io/uninitialized', effect: 'NoSchedule', timeAdded: new Date() }],
      },
      status: {
        conditions: [
          { type: 'MemoryPressure', status: 'False' },
          { type: 'Ready', status: 'True', lastTransitionTime: new Date('2026-11-29T10:01:00Z') },
        ],
        images: [{ names: ['big'] }],
        nodeInfo: { kubeletVersion: 'v1.33.0' },
      },
    };
    expect((slim('node', node) as SlimNode).toJSON()).toEqual({
      metadata: { name: 'n0' },
      spec: {
        providerID: 'azure:///x',
        taints: [{ key: 'node.cluster.x-k8s.io/uninitialized', effect: 'NoSchedule' }],
      },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    });
    // An AKS Node keeps its agent pool label and its kubelet version (an upgrade's progress), and a new version is
    // a change of content.
    const aks = (v: string) =>
      slim('node', {
        ...node,
        metadata: { ...node.metadata, labels: { [AKS_AGENT_POOL_LABEL]: 'user' } },
        status: { ...node.status, nodeInfo: { kubeletVersion: v } },
      });
    expect((aks('v1.33.0') as SlimNode).toJSON()).toMatchObject({
      metadata: { labels: { [AKS_AGENT_POOL_LABEL]: 'user' } },
      status: { nodeInfo: { kubeletVersion: 'v1.33.0' } },
    });
    expect(sameContent(aks('v1.33.0'), aks('v1.33.0'))).toBe(true);
    expect(sameContent(aks('v1.33.0'), aks('v1.34.1'))).toBe(false);
  });

  it('keeps only the pool label of an AzureMachinePoolMachine and drops managedFields elsewhere', () => {
    const ampm = {
      metadata: {
        name: 'a',
        namespace: 'ns',
        labels: { 'azuremachinepool.infrastructure.cluster.x-k8s.io/machine-pool': 'p', other: 'x' },
      },
    };
    expect(slim('ampm', ampm).metadata?.labels).toEqual({
      'azuremachinepool.infrastructure.cluster.x-k8s.io/machine-pool': 'p',
    });
    const mp = { metadata: { name: 'p', managedFields: [{ manager: 'm' }] }, spec: { replicas: 2 } };
    expect(slim('mp', mp)).toEqual({ metadata: { name: 'p' }, spec: { replicas: 2 } });
  });

  it("drops a MachinePool's nodeRefs (nothing reads them), and nothing else of its status", () => {
    const status = {
      phase: 'Running',
      replicas: 2,
      nodeRefs: [
        { apiVersion: 'v1', kind: 'Node', name: 'n0', uid: 'u0' },
        { apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'u1' },
      ],
    };
    const mp = { metadata: { name: 'p' }, spec: { replicas: 2 }, status };
    expect(slim('mp', mp).status).toEqual({ phase: 'Running', replicas: 2 });
    expect(status.nodeRefs).toHaveLength(2);
    // An AzureMachinePool keeps its status as it is.
    expect(slim('amp', { metadata: { name: 'p' }, status: { ready: true, nodeRefs: [] } }).status).toEqual({
      ready: true,
      nodeRefs: [],
    });
  });

  it("shares one copy of each providerID between a pool's lists and its instances", () => {
    const id = (n: number) =>
      `azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/v/virtualMachines/${n}-${Math.random()}`;
    const [a, b, c] = [id(1), id(2), id(3)];
    expect([a, b, c].some(isInterned)).toBe(false);
    const mp = slim('mp', { metadata: { name: 'p' }, spec: { replicas: 1, providerIDList: [a] } });
    slim('amp', { metadata: { name: 'p' }, spec: { providerIDList: [b] } });
    slim('ampm', { metadata: { name: 'x' }, spec: { providerID: c } });
    expect([a, b, c].every(isInterned)).toBe(true);
    expect(mp.spec?.providerIDList).toEqual([a]);
  });

  it("keeps an update's list the same IDs, sharing the new ones too (the object it replaces given)", () => {
    const id = (n: number) =>
      `azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/w/virtualMachines/${n}-${Math.random()}`;
    const [a, b] = [id(1), id(2)];
    const before = slim('mp', { metadata: { name: 'p' }, spec: { providerIDList: [a] } });
    expect(isInterned(b)).toBe(false);
    // The same IDs as text (as a new watch event parses them), one more.
    const after = slim('mp', { metadata: { name: 'p' }, spec: { providerIDList: [`${a}`.slice(0), b] } }, before);
    expect(after.spec?.providerIDList).toEqual([a, b]);
    expect(isInterned(b)).toBe(true);
  });

  it('keeps the list itself when an update leaves it as it was (what is worked out per list is not redone)', () => {
    const id = (n: number) =>
      `azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/u/virtualMachines/${n}`;
    const before = slim('amp', {
      metadata: { name: 'p', resourceVersion: '1' },
      spec: { providerIDList: [id(1), id(2)] },
      status: { ready: false },
    });
    // A status update: the same list as new text.
    const status = slim(
      'amp',
      {
        metadata: { name: 'p', resourceVersion: '2' },
        spec: { providerIDList: [id(1), id(2)] },
        status: { ready: true },
      },
      before,
    );
    expect(status.spec?.providerIDList).toBe(before.spec?.providerIDList);
    expect(status.status).toEqual({ ready: true });
    // The same IDs in another order, one fewer, one more: a list of its own each time.
    for (const list of [[id(2), id(1)], [id(1)], [id(1), id(2), id(3)]]) {
      const after = slim(
        'amp',
        { metadata: { name: 'p', resourceVersion: '3' }, spec: { providerIDList: list } },
        before,
      );
      expect(after.spec?.providerIDList).not.toBe(before.spec?.providerIDList);
      expect(after.spec?.providerIDList).toEqual(list);
    }
    // Nothing before to compare with (a first add): a list of its own.
    const first = slim('mp', { metadata: { name: 'q' }, spec: { providerIDList: [] } });
    expect(first.spec?.providerIDList).toEqual([]);
  });

  it("gives an update's list exactly its IDs in its order whatever moved (IDs added, removed, swapped, repeated)", () => {
    const id = (n: number) =>
      `azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/v/virtualMachines/${n}`;
    let seed = 11;
    const rand = (n: number) => (seed = (seed * 1664525 + 1013904223) >>> 0) % n;
    let before = slim('amp', {
      metadata: { name: 'p' },
      spec: { providerIDList: Array.from({ length: 20 }, (_, i) => id(i)) },
    });
    for (let step = 0; step < 300; step++) {
      const list = [...(before.spec?.providerIDList as string[])];
      const at = rand(list.length + 1);
      const edit = rand(4);
      if (edit === 0) list.splice(at, 0, id(100 + step));
      else if (edit === 1 && list.length) list.splice(at % list.length, 1);
      else if (edit === 2 && list.length > 1)
        list.splice(
          at % (list.length - 1),
          2,
          list[(at % (list.length - 1)) + 1] as string,
          list[at % (list.length - 1)] as string,
        );
      else list.splice(at, 0, list[rand(list.length)] ?? id(0));
      // As a watch event parses it: new strings of the same text.
      const after = slim(
        'amp',
        { metadata: { name: 'p' }, spec: { providerIDList: list.map((x) => `${x} `.trimEnd()) } },
        before,
      );
      expect(after.spec?.providerIDList).toEqual(list);
      before = after;
    }
  });

  it('tells updates the model cannot see (resourceVersion, dropped fields) from real ones', () => {
    const ampm = (rv: string, state: string, cond: string) =>
      slim('ampm', {
        metadata: { name: 'a', namespace: 'ns', resourceVersion: rv },
        spec: { providerID: 'azure:///x' },
        status: { provisioningState: state, conditions: [{ type: 'Ready', status: cond }] },
      });
    expect(sameContent(ampm('1', 'Succeeded', 'True'), ampm('2', 'Succeeded', 'False'))).toBe(true);
    expect(sameContent(ampm('1', 'Succeeded', 'True'), ampm('2', 'Failed', 'True'))).toBe(false);
    const node = (rv: string, taint: boolean) =>
      slim('node', {
        metadata: { name: 'n', resourceVersion: rv },
        spec: { providerID: 'azure:///x', ...(taint ? { taints: [{ key: 'k', effect: 'NoSchedule' }] } : {}) },
      });
    expect(sameContent(node('1', true), node('2', true))).toBe(true);
    expect(sameContent(node('1', true), node('2', false))).toBe(false);
    expect(sameContent(ampm('1', 'Succeeded', 'True'), node('1', false))).toBe(false);
    // Kinds kept whole are never called the same (every change of theirs may matter).
    const mp = slim('mp', { metadata: { name: 'p', resourceVersion: '1' } });
    expect(sameContent(mp, mp)).toBe(false);
  });

  it("reads a slimmed instance's name, namespace and pool label straight, and an API object's through metadata", () => {
    const raw = {
      metadata: { name: 'a', namespace: 'ns', labels: { [AMPM_POOL_LABEL]: 'p', [MACHINE_POOL_LABEL]: 'q' } },
    };
    for (const o of [slim('ampm', raw), raw]) {
      expect([nameOf(o), namespaceOf(o), labelOf(o, AMPM_POOL_LABEL)]).toEqual(['a', 'ns', 'p']);
    }
    expect(labelOf(slim('machine', raw), MACHINE_POOL_LABEL)).toBe('q');
    expect(labelOf(slim('machine', raw), AMPM_POOL_LABEL)).toBeUndefined();
    expect(labelOf(raw, MACHINE_POOL_LABEL)).toBe('q');
    const node = slim('node', { metadata: { name: 'n', namespace: 'ignored', labels: { x: 'y' } } });
    expect([nameOf(node), namespaceOf(node), labelOf(node, 'x')]).toEqual(['n', undefined, undefined]);
  });

  it("keeps an AMPM's and a Machine's name inside their key (`namespace/name`), and reads both back", () => {
    const raw = { metadata: { name: 'pool0-vmss-000001', namespace: 'team-a' } };
    for (const kind of ['ampm', 'machine'] as const) {
      const o = slim(kind, raw) as SlimAmpm | SlimMachine;
      expect(o.key).toBe('team-a/pool0-vmss-000001');
      expect([o.name, nameOf(o), o.metadata.name, o.namespace]).toEqual([
        'pool0-vmss-000001',
        'pool0-vmss-000001',
        'pool0-vmss-000001',
        'team-a',
      ]);
      // Updated, or named after the other kind's object: the same key.
      expect((slim(kind, raw, o) as SlimAmpm).key).toBe(o.key);
      expect((slim(kind === 'ampm' ? 'machine' : 'ampm', raw, o) as SlimAmpm).key).toBe(o.key);
      // Another name: its own key, whatever it is given.
      expect((slim(kind, { metadata: { name: 'other', namespace: 'team-a' } }, o) as SlimAmpm).key).toBe(
        'team-a/other',
      );
    }
    // The informer's cache key: the object's own key when slimmed, joined the same way from an API object.
    expect(itemKey(slim('ampm', raw))).toBe('team-a/pool0-vmss-000001');
    expect(itemKey(raw)).toBe('team-a/pool0-vmss-000001');
    expect(itemKey(slim('node', { metadata: { name: 'n0' } }))).toBe('n0');
    expect(itemKey(slim('machine', { metadata: { namespace: 'ns' } }))).toBe('ns/');
    // No namespace: the key is the name; no name: no key (and no name).
    expect((slim('ampm', { metadata: { name: 'x' } }) as SlimAmpm).key).toBe('x');
    expect(nameOf(slim('ampm', { metadata: { name: 'x' } }))).toBe('x');
    const nameless = slim('machine', { metadata: { namespace: 'ns' } }) as SlimMachine;
    expect([nameless.key, nameless.name]).toEqual([undefined, undefined]);
    expect(nameless.metadata).toEqual({ namespace: 'ns' });
  });

  it("keeps an AMPM's creationTimestamp as seconds when they give its text back, as the text otherwise", () => {
    const at = (creationTimestamp: unknown) =>
      slim('ampm', {
        metadata: { name: 'a', namespace: 'ns', creationTimestamp: creationTimestamp as string },
      }) as SlimAmpm;
    const k8s = at('2026-11-29T10:00:00Z');
    expect(k8s.created).toBe(Date.parse('2026-11-29T10:00:00Z') / 1000);
    expect(k8s.metadata.creationTimestamp).toBe('2026-11-29T10:00:00Z');
    expect(compactTimeMs(k8s.created)).toBe(Date.parse('2026-11-29T10:00:00Z'));
    // Text that seconds cannot give back stays as it came: a fraction, another offset, not a time at all.
    for (const text of ['2026-11-29T10:00:00.5Z', '2026-11-29T11:00:00+01:00', 'yesterday']) {
      expect(at(text).created).toBe(text);
      expect(at(text).metadata.creationTimestamp).toBe(text);
    }
    expect(compactTimeMs(at('2026-11-29T11:00:00+01:00').created)).toBe(Date.parse('2026-11-29T10:00:00Z'));
    expect(compactTimeMs(at('yesterday').created)).toBeNull();
    // A typed client's Date: its ISO text (milliseconds shown), kept as text.
    expect(at(new Date('2026-11-29T10:00:00Z')).metadata.creationTimestamp).toBe('2026-11-29T10:00:00.000Z');
    expect(at(undefined).created).toBeUndefined();
  });
});
