// Looking at AKS managed clusters: when the cluster is GET again, the node resource group it names (the id its list
// is scheduled by), each agent pool's scale set found there by AKS's pool tag, and when the group is listed again.

import { describe, expect, it } from 'vitest';
import type { ManagedClusterRead, ManagedClusterRef } from '../azure/aks-reader';
import type { AzureReader, ListedScaleSet, ScaleSetsRead } from '../azure/reader';
import { AksLooks, nodeGroupRefOf } from './aks-looks';

const SUB = '6f0a3c1e-2b4d-4e8f-9a1b-7c5d3e2f1a0b';
const REF: ManagedClusterRef = { subscriptionId: SUB, resourceGroup: 'prod-weu', cluster: 'aks-weu' };
const ID = `/subscriptions/${SUB}/resourcegroups/prod-weu/providers/microsoft.containerservice/managedclusters/aks-weu`;
const NODE_RG = 'MC_prod-weu_aks-weu_westeurope';
const GROUP = `/subscriptions/${SUB}/resourcegroups/${NODE_RG}`.toLowerCase();

const scaleSet = (name: string, tags: Record<string, unknown>): ListedScaleSet => ({
  id: `/subscriptions/${SUB}/resourceGroups/${NODE_RG}/providers/Microsoft.Compute/virtualMachineScaleSets/${name}`,
  location: 'westeurope',
  tags,
});
const key = (name: string) =>
  `azure:///subscriptions/${SUB}/resourcegroups/${NODE_RG}/providers/microsoft.compute/virtualmachinescalesets/${name}`.toLowerCase();
const listed = (...scaleSets: ListedScaleSet[]): ScaleSetsRead => ({ state: 'ok', scaleSets, remaining: {}, calls: 1 });

/** An AzureReader that answers from what the test sets, counting the calls. */
function setup() {
  let t = 1_000_000;
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
    list: listed(),
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
  const looks = new AksLooks(reader, () => t, 15);
  return { f, looks, advance: (ms: number) => (t += ms) };
}

describe('AksLooks', () => {
  it('names the node resource group the cluster names, by an id only that group parses as', async () => {
    const { looks } = setup();
    expect(await looks.look(ID, REF, false)).toEqual({ aksCalls: 1, moved: true });
    expect(looks.nodeGroupOf(ID)).toBe(GROUP);
    expect(looks.clusterOf(GROUP)).toBe(ID);
    expect(nodeGroupRefOf(GROUP)).toEqual({ subscriptionId: SUB, resourceGroup: NODE_RG.toLowerCase() });
    expect(nodeGroupRefOf(ID)).toBeNull();
    expect(nodeGroupRefOf(`${GROUP}/../x`)).toBeNull();
    expect(looks.regionOf(ID)).toBe('westeurope');
    expect(looks.managedClusterInput(ID)).toMatchObject({ state: 'ok', readAt: Date.parse('2026-12-07T00:00:00Z') });
  });

  it("finds each agent pool's scale set by AKS's tag, and says when to list again", async () => {
    const { f, looks } = setup();
    await looks.look(ID, REF, false);
    f.list = listed(
      scaleSet('aks-user-1-vmss', { 'aks-managed-poolName': 'user' }),
      scaleSet('aks-jobs-2-vmss', { poolName: 'Jobs' }),
      scaleSet('other', { team: 'x' }),
      // Outside the group listed: not taken, whatever it says.
      {
        ...scaleSet('elsewhere', { 'aks-managed-poolName': 'spot' }),
        id: scaleSet('x', {}).id.replace(NODE_RG, 'prod-weu'),
      },
    );
    expect(await looks.list(GROUP, ['user', 'jobs'])).toMatchObject({ state: 'ok', moved: true, afterSeconds: 900 });
    expect(f.lists).toEqual([NODE_RG.toLowerCase()]);
    expect(looks.scaleSetOf(ID, 'user')).toBe(key('aks-user-1-vmss'));
    expect(looks.scaleSetOf(ID, 'JOBS')).toBe(key('aks-jobs-2-vmss'));
    expect(looks.scaleSetOf(ID, 'spot')).toBeNull();
    // A pool whose scale set is not there yet: listed again in a minute; the same answer has nothing new.
    expect(await looks.list(GROUP, ['user', 'jobs', 'spot'])).toMatchObject({ moved: false, afterSeconds: 60 });
    // The node resource group gone: no scale set is known any more.
    f.list = { state: 'not-found', error: 'ResourceGroupNotFound', calls: 1 };
    expect(await looks.list(GROUP, ['user'])).toMatchObject({ state: 'not-found', moved: true, afterSeconds: 60 });
    expect(looks.scaleSetOf(ID, 'user')).toBeNull();
  });

  it('keeps what it found when the list fails or is throttled, with its Retry-After', async () => {
    const { f, looks } = setup();
    await looks.look(ID, REF, false);
    f.list = listed(scaleSet('a', { 'aks-managed-poolName': 'user' }));
    await looks.list(GROUP, ['user']);
    f.list = { state: 'unreachable', error: 'ServiceUnavailable', calls: 1 };
    expect(await looks.list(GROUP, ['user'])).toMatchObject({ state: 'unreachable', moved: false, afterSeconds: 60 });
    f.list = { state: 'throttled', error: 'TooManyRequests', retryAfterSeconds: 120, remaining: {}, calls: 1 };
    expect(await looks.list(GROUP, ['user'])).toMatchObject({ state: 'throttled', retryAfterSeconds: 120 });
    expect(looks.scaleSetOf(ID, 'user')).toBe(key('a'));
  });

  it('GETs the cluster every 2 minutes while an AKS operation runs, else every 15, keeping a good answer on a 429', async () => {
    const { f, looks, advance } = setup();
    await looks.look(ID, REF, false);
    advance(60_000);
    expect(await looks.look(ID, REF, false)).toEqual({ aksCalls: 0, moved: false });
    expect(await looks.look(ID, REF, true)).toEqual({ aksCalls: 0, moved: false });
    advance(60_000);
    expect(await looks.look(ID, REF, true)).toEqual({ aksCalls: 1, moved: false });
    f.cluster = { state: 'throttled', error: 'TooManyRequests', retryAfterSeconds: 30, remaining: {}, calls: 1 };
    advance(120_000);
    expect((await looks.look(ID, REF, true)).throttled).toEqual({ retryAfterSeconds: 30, remaining: {} });
    expect(looks.managedClusterInput(ID).state).toBe('ok');
    advance(14 * 60_000);
    expect((await looks.look(ID, REF, false)).aksCalls).toBe(0);
    advance(60_000);
    expect((await looks.look(ID, REF, false)).aksCalls).toBe(1);
    expect(f.gets).toBe(4);
  });

  it('says a scale set may still be found until the node resource group has answered a list (not a 429)', async () => {
    const { f, looks } = setup();
    expect(looks.pending(ID)).toBe(true);
    await looks.look(ID, REF, false);
    expect(looks.pending(ID)).toBe(true);
    f.list = { state: 'throttled', error: 'TooManyRequests', retryAfterSeconds: 5, remaining: {}, calls: 1 };
    await looks.list(GROUP, ['user']);
    expect(looks.pending(ID)).toBe(true);
    f.list = { state: 'unreachable', error: 'ServiceUnavailable', calls: 1 };
    await looks.list(GROUP, ['user']);
    expect(looks.pending(ID)).toBe(false);
    // A cluster that does not answer names no group: nothing is pending on it.
    const other = setup();
    other.f.cluster = { state: 'not-found', error: 'ResourceNotFound', calls: 1 };
    await other.looks.look(ID, REF, false);
    expect(other.looks.pending(ID)).toBe(false);
  });

  it('names no node resource group before the cluster answers, and forgets clusters gone', async () => {
    const { f, looks } = setup();
    f.cluster = { state: 'unreachable', error: 'ServiceUnavailable', calls: 1 };
    expect(await looks.look(ID, REF, false)).toEqual({ aksCalls: 1, moved: false });
    expect(looks.managedClusterInput(ID)).toEqual({ state: 'unreachable', error: 'ServiceUnavailable' });
    expect(looks.nodeGroupOf(ID)).toBeNull();
    looks.keepOnly(new Set());
    expect(looks.managedClusterInput(ID)).toEqual({ state: 'unknown', reason: 'not read yet' });
  });
});
