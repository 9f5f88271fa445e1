import { describe, expect, it } from 'vitest';
import { forgetGoneVms, forgetInstance } from './forget';
import { normaliseAzure } from './pool-model';
import { parseCache, parseProviderId } from './provider-id';
import { compareRowKeys, rowPlaces } from './row-order';
import { intern, isInterned, slim } from './slim';

const id = (n: number) => `azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/forget/virtualMachines/${n}`;

describe('forgetInstance', () => {
  it('drops a deleted VM\'s ID and Node name from the shared tables, and nothing else', () => {
    const node = slim('node', { metadata: { name: 'vm-forget-1' }, spec: { providerID: id(1) }, status: { conditions: [{ type: 'Ready', status: 'True' }] } });
    const ampm = slim('ampm', { metadata: { name: 'a1', namespace: 'ns-forget' }, spec: { providerID: id(2) }, status: { provisioningState: 'Succeeded', nodeRef: { name: 'vm-forget-2' } } });
    const other = slim('machine', { metadata: { name: 'm3', namespace: 'ns-forget' }, spec: { providerID: id(3) }, status: { phase: 'Running' } });
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
    // Objects that are not per-VM (a MachinePool, an Event) are left alone.
    forgetInstance(slim('mp', { metadata: { name: 'p', namespace: 'ns-forget' }, spec: { providerIDList: [id(3)] } }));
    expect(isInterned(id(3))).toBe(true);
  });

  it('drops the IDs of the VMs a scale set\'s new read no longer has', () => {
    const arm = (n: number) => `/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/forget/virtualMachines/${n}`;
    const read = (ns: number[]) => normaliseAzure({ id: '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/forget', name: 'forget', sku: { capacity: ns.length } }, ns.map((n) => ({ id: arm(n), name: `forget_${n}`, instanceId: String(n), properties: { provisioningState: 'Succeeded' } })));
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
