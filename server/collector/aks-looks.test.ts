// Looking at AKS managed clusters: each agent pool's scale set found by AKS's pool tag in the node resource group,
// when the cluster is GET and its group listed again, and both within their budgets (Compute's regional one for the
// list, with its Retry-After).

import { describe, expect, it } from 'vitest';
import type { ManagedClusterRead, ManagedClusterRef } from '../azure/aks-reader';
import type { AzureReader, ListedScaleSet, ScaleSetsRead } from '../azure/reader';
import { Scheduler } from '../azure/scheduler';
import { AksLooks } from './aks-looks';

const SUB = '6f0a3c1e-2b4d-4e8f-9a1b-7c5d3e2f1a0b';
const REF: ManagedClusterRef = { subscriptionId: SUB, resourceGroup: 'prod-weu', cluster: 'aks-weu' };
const ID = `/subscriptions/${SUB}/resourcegroups/prod-weu/providers/microsoft.containerservice/managedclusters/aks-weu`;
const NODE_RG = 'MC_prod-weu_aks-weu_westeurope';

const scaleSet = (name: string, tags: Record<string, unknown>): ListedScaleSet => ({
  id: `/subscriptions/${SUB}/resourceGroups/${NODE_RG}/providers/Microsoft.Compute/virtualMachineScaleSets/${name}`,
  location: 'westeurope',
  tags,
});
const key = (name: string) =>
  `azure:///subscriptions/${SUB}/resourcegroups/${NODE_RG}/providers/microsoft.compute/virtualmachinescalesets/${name}`.toLowerCase();

/** An AzureReader that answers from what the test sets, counting the calls. */
function fakeAzure() {
  const f = {
    cluster: {
      state: 'ok',
      managedCluster: {
        id: ID,
        name: 'aks-weu',
        location: 'West Europe',
        properties: { nodeResourceGroup: NODE_RG, kubernetesVersion: '1.34.1', currentKubernetesVersion: '1.33.2' },
      },
      readAt: '2026-12-07T00:00:00.000Z',
      remaining: {},
      calls: 1,
    } as ManagedClusterRead,
    list: { state: 'ok', scaleSets: [], remaining: {}, calls: 1 } as ScaleSetsRead,
    gets: 0,
    lists: [] as string[],
  };
  const reader = {
    readManagedCluster: async () => {
      f.gets++;
      return f.cluster;
    },
    listScaleSets: async (_sub: string, rg: string) => {
      f.lists.push(rg);
      return f.list;
    },
  } as unknown as AzureReader;
  return { f, reader };
}

function setup() {
  let t = 1_000_000;
  const { f, reader } = fakeAzure();
  const scheduler = new Scheduler({ fastSeconds: 15, slowSeconds: 120, budgetShare: 0.1, random: () => 0.5 });
  const looks = new AksLooks(reader, scheduler, () => t);
  return { f, looks, scheduler, advance: (ms: number) => (t += ms), now: () => t };
}

describe('AksLooks', () => {
  it("finds each agent pool's scale set by AKS's tag in the node resource group the cluster names", async () => {
    const { f, looks } = setup();
    f.list = {
      state: 'ok',
      scaleSets: [
        scaleSet('aks-user-1-vmss', { 'aks-managed-poolName': 'user' }),
        scaleSet('aks-jobs-2-vmss', { poolName: 'Jobs' }),
        scaleSet('other', { team: 'x' }),
      ],
      remaining: {},
      calls: 1,
    };
    const r = await looks.look(ID, REF, ['user', 'jobs'], false);
    expect(r).toEqual({ aksCalls: 1, computeCalls: 1, moved: true });
    expect(f.lists).toEqual([NODE_RG]);
    expect(looks.scaleSetOf(ID, 'user')).toBe(key('aks-user-1-vmss'));
    expect(looks.scaleSetOf(ID, 'JOBS')).toBe(key('aks-jobs-2-vmss'));
    expect(looks.regionOf(ID)).toBe('westeurope');
    expect(looks.managedClusterInput(ID)).toMatchObject({ state: 'ok', readAt: Date.parse('2026-12-07T00:00:00Z') });
  });

  it('looks again while a pool moves, lists again for a pool not found (at most a minute apart), else rests', async () => {
    const { f, looks, advance } = setup();
    f.list = { state: 'ok', scaleSets: [scaleSet('a', { 'aks-managed-poolName': 'user' })], remaining: {}, calls: 1 };
    await looks.look(ID, REF, ['user'], false);
    advance(30_000);
    expect(await looks.look(ID, REF, ['user'], false)).toEqual({ aksCalls: 0, computeCalls: 0, moved: false });
    expect(await looks.look(ID, REF, ['user'], true)).toMatchObject({ aksCalls: 1, computeCalls: 0 });
    // A new pool whose scale set the last list did not hold: listed again, once a minute has passed.
    expect(await looks.look(ID, REF, ['user', 'jobs'], false)).toMatchObject({ computeCalls: 0 });
    advance(30_000);
    f.list = {
      state: 'ok',
      scaleSets: [scaleSet('a', { 'aks-managed-poolName': 'user' }), scaleSet('b', { 'aks-managed-poolName': 'jobs' })],
      remaining: {},
      calls: 1,
    };
    expect(await looks.look(ID, REF, ['user', 'jobs'], false)).toEqual({ aksCalls: 0, computeCalls: 1, moved: true });
    expect(f).toMatchObject({ gets: 2, lists: [NODE_RG, NODE_RG] });
    // Settled: both looked at again only after a quarter of an hour.
    advance(14 * 60_000);
    expect(await looks.look(ID, REF, ['user', 'jobs'], false)).toEqual({ aksCalls: 0, computeCalls: 0, moved: false });
    advance(60_000);
    expect(await looks.look(ID, REF, ['user', 'jobs'], false)).toEqual({ aksCalls: 1, computeCalls: 1, moved: false });
  });

  it("keeps the last good answers when AKS throttles its GET, and waits out Compute's Retry-After", async () => {
    const { f, looks, advance, scheduler, now } = setup();
    f.list = { state: 'ok', scaleSets: [scaleSet('a', { 'aks-managed-poolName': 'user' })], remaining: {}, calls: 1 };
    await looks.look(ID, REF, ['user'], false);
    f.cluster = { state: 'throttled', error: 'TooManyRequests', retryAfterSeconds: 30, remaining: {}, calls: 1 };
    const r = await looks.look(ID, REF, ['user'], true);
    expect(r.throttled).toEqual({ retryAfterSeconds: 30, remaining: {} });
    expect(looks.managedClusterInput(ID).state).toBe('ok');
    // The node resource group's list throttled: nothing lost, and no list again until its Retry-After is over.
    f.list = { state: 'throttled', error: 'TooManyRequests', retryAfterSeconds: 120, remaining: {}, calls: 1 };
    advance(15 * 60_000);
    await looks.look(ID, REF, ['user', 'jobs'], false);
    expect(looks.scaleSetOf(ID, 'user')).toBe(key('a'));
    expect(scheduler.allows(SUB, 'westeurope', now())).toBe(false);
    advance(60_000);
    expect(await looks.look(ID, REF, ['user', 'jobs'], false)).toMatchObject({ computeCalls: 0 });
    advance(61_000);
    expect(await looks.look(ID, REF, ['user', 'jobs'], false)).toMatchObject({ computeCalls: 1 });
  });

  it('lists nothing before the cluster has named its node resource group, and forgets clusters gone', async () => {
    const { f, looks } = setup();
    f.cluster = { state: 'unreachable', error: 'ServiceUnavailable', calls: 1 };
    expect(await looks.look(ID, REF, ['user'], false)).toEqual({ aksCalls: 1, computeCalls: 0, moved: false });
    expect(looks.managedClusterInput(ID)).toEqual({ state: 'unreachable', error: 'ServiceUnavailable' });
    looks.keepOnly(new Set());
    expect(looks.managedClusterInput(ID)).toEqual({ state: 'unknown', reason: 'not read yet' });
  });
});
