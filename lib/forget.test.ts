import { describe, expect, it } from 'vitest';
import { forgetDropped, forgetGoneVms, forgetInstance } from './forget';
import { normaliseAzure } from './azure-model';
import { parseCache, parseProviderId } from './provider-id';
import { compareRowKeys, rowPlaces } from './row-order';
import { intern, isInterned, slim } from './slim';
import type { KubeObject } from './unstructured';

const id = (n: number) =>
  `azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/forget/virtualMachines/${n}`;

describe('forgetInstance', () => {
  it("drops a deleted VM's ID and Node name from the shared tables, and nothing else", () => {
    const node = slim('node', {
      metadata: { name: 'vm-forget-1' },
      spec: { providerID: id(1) },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    });
    const ampm = slim('ampm', {
      metadata: { name: 'a1', namespace: 'ns-forget' },
      spec: { providerID: id(2) },
      status: { provisioningState: 'Succeeded', nodeRef: { name: 'vm-forget-2' } },
    });
    const other = slim('machine', {
      metadata: { name: 'm3', namespace: 'ns-forget' },
      spec: { providerID: id(3) },
      status: { phase: 'Running' },
    });
    // What the collector asks of the IDs: parsed, and placed in the instance table's order.
    for (const n of [1, 2, 3]) parseProviderId(id(n));
    compareRowKeys(id(1), id(2));
    compareRowKeys(id(2), id(3));
    const parses = parseCache().size;
    const placed = rowPlaces().size;
    expect([id(1), 'vm-forget-1', id(2), 'vm-forget-2', id(3)].every(isInterned)).toBe(true);

    forgetInstance(node);
    forgetInstance(ampm);
    expect([id(1), 'vm-forget-1', id(2), 'vm-forget-2'].some(isInterned)).toBe(false);
    expect(parseCache().size).toBe(parses - 2);
    expect(rowPlaces().size).toBe(placed - 2);
    // The live Machine's ID, and strings many objects share (a namespace, a state), stay.
    expect([id(3), 'ns-forget', 'Succeeded', 'Running'].every(isInterned)).toBe(true);
    expect(other.spec?.providerID).toBe(id(3));
    // A forgotten ID still parses and sorts as before (worked out anew).
    expect(parseProviderId(id(1))).toMatchObject({ ok: true, scaleSet: 'forget', instanceId: '1' });
    expect(compareRowKeys(id(2), id(10))).toBeLessThan(0);
    // An Event, or a Cluster, is left alone.
    forgetInstance(
      slim('event', {
        metadata: { name: 'e', namespace: 'ns-forget' },
        involvedObject: { kind: 'Machine', name: 'm3' },
        message: id(3),
      }),
    );
    forgetInstance(slim('cluster', { metadata: { name: 'c', namespace: 'ns-forget' } }));
    expect(isInterned(id(3))).toBe(true);
    // A deleted MachinePool's list goes with it.
    forgetInstance(slim('mp', { metadata: { name: 'p', namespace: 'ns-forget' }, spec: { providerIDList: [id(3)] } }));
    expect(isInterned(id(3))).toBe(false);
  });

  it("drops the IDs of the VMs a scale set's new read no longer has", () => {
    const arm = (n: number) =>
      `/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/forget/virtualMachines/${n}`;
    const read = (ns: number[]) =>
      normaliseAzure(
        {
          id: '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/forget',
          name: 'forget',
          sku: { capacity: ns.length },
        },
        ns.map((n) => ({
          id: arm(n),
          name: `forget_${n}`,
          instanceId: String(n),
          properties: { provisioningState: 'Succeeded' },
        })),
      );
    const before = read([21, 22, 23]);
    expect(before.azure.state).toBe('ok');
    for (const n of [21, 22, 23]) parseProviderId(intern(id(n)));
    const parses = parseCache().size;
    expect(isInterned(id(21))).toBe(true);
    forgetGoneVms(before, read([22, 23, 24]));
    expect(parseCache().size).toBe(parses - 1);
    expect(isInterned(id(21))).toBe(false);
    // The scale set gone: all of them; no earlier read: nothing.
    forgetGoneVms(before, { state: 'not-found', reason: 'gone' } as never);
    expect(parseCache().size).toBe(parses - 3);
    forgetGoneVms(undefined, before);
    expect(parseCache().size).toBe(parses - 3);
  });
});

describe('forgetDropped', () => {
  const list = (name: string, ns: number[], previous?: KubeObject) =>
    slim(
      'mp',
      {
        metadata: { name, namespace: 'ns-forget', resourceVersion: String(ns.length) },
        spec: { providerIDList: ns.map(id) },
      },
      previous,
    );

  it("drops the IDs a pool's list update no longer has, and keeps the rest", () => {
    const before = list('p2', [31, 32, 33]);
    for (const n of [31, 32, 33]) {
      parseProviderId(id(n));
      compareRowKeys(id(n), id(30));
    }
    const parses = parseCache().size;
    const placed = rowPlaces().size;
    const after = list('p2', [32, 33, 34], before);
    forgetDropped(before, after);
    expect(isInterned(id(31))).toBe(false);
    expect([id(32), id(33), id(34)].every(isInterned)).toBe(true);
    expect(parseCache().size).toBe(parses - 1);
    expect(rowPlaces().size).toBe(placed - 1);
    // The same list again (the array slim kept), or reordered: nothing.
    const same = list('p2', [32, 33, 34], after);
    expect(same.spec?.providerIDList).toBe(after.spec?.providerIDList);
    forgetDropped(after, same);
    forgetDropped(same, list('p2', [34, 33, 32], same));
    expect([id(32), id(33), id(34)].every(isInterned)).toBe(true);
    // A list cleared, or gone from the spec: all of it.
    forgetDropped(same, slim('mp', { metadata: { name: 'p2', namespace: 'ns-forget' }, spec: {} }));
    expect([id(32), id(33), id(34)].some(isInterned)).toBe(false);
  });
});
