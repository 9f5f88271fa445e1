// @kubernetes/client-node against the simulator, as the product's collector will use it: a kubeconfig,
// TLS from the simulator's CA, bearer tokens, list + watch informers.

import {
  CustomObjectsApi,
  KubeConfig,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findByPlural, type ResourceDef } from './resources';
import type { KubeSimulator } from './simulator';
import { seedObjects, startSeedSimulator } from './testing';

let sim: KubeSimulator;
let kc: KubeConfig;
let seenLog: string[] = [];

beforeAll(async () => {
  sim = await startSeedSimulator({ historyWindow: 50 });
  kc = new KubeConfig();
  kc.loadFromFile(sim.kubeconfigPath);
  kc.setCurrentContext('mgmt-weu');
});
afterAll(async () => {
  await sim?.stop();
});

const GROUP = { group: 'cluster.x-k8s.io', version: 'v1beta2', plural: 'machinepools' };

async function until(pred: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; saw: ${JSON.stringify(seenLog)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('client-node against the simulated API server', () => {
  it('reads objects through CustomObjectsApi', async () => {
    const api = kc.makeApiClient(CustomObjectsApi);
    const list = (await api.listClusterCustomObject(GROUP)) as { items: KubernetesObject[] };
    expect(list.items.map((i) => i.metadata?.name)).toEqual(['pool0']);
    const one = (await api.getNamespacedCustomObject({
      ...GROUP,
      version: 'v1beta1',
      namespace: 'default',
      name: 'pool0',
    })) as KubernetesObject & { status: Record<string, unknown> };
    expect(one.apiVersion).toBe('cluster.x-k8s.io/v1beta1');
    expect(one.status.infrastructureReady).toBe(false);
  });

  it('reports a 404 as an ApiException with the Status body', async () => {
    const api = kc.makeApiClient(CustomObjectsApi);
    await expect(api.getNamespacedCustomObject({ ...GROUP, namespace: 'default', name: 'nope' })).rejects.toMatchObject(
      { code: 404 },
    );
  });

  it(
    'runs an informer that sees add, update and delete, and recovers from 410 Gone without losing an update',
    { timeout: 30_000 },
    async () => {
      const api = kc.makeApiClient(CustomObjectsApi);
      const listFn = () =>
        api.listClusterCustomObject(GROUP) as Promise<{
          items: KubernetesObject[];
          metadata: { resourceVersion: string };
        }>;
      const informer = makeInformer(kc, '/apis/cluster.x-k8s.io/v1beta2/machinepools', listFn as never);
      const seen: string[] = [];
      seenLog = seen;
      informer.on('add', (o) => seen.push(`add:${o.metadata?.name}`));
      informer.on('update', (o) =>
        seen.push(`update:${o.metadata?.name}:${(o as { spec?: { replicas?: number } }).spec?.replicas}`),
      );
      informer.on('delete', (o) => seen.push(`delete:${o.metadata?.name}`));
      const errors: unknown[] = [];
      informer.on('error', (e) => errors.push(e));
      await informer.start();
      await until(() => seen.includes('add:pool0'), 'initial list');

      const [mp] = seedObjects().management.filter((o) => o.kind === 'MachinePool');
      const fresh = { ...structuredClone(mp), metadata: { name: 'pool1', namespace: 'default' } };
      delete (fresh as { status?: unknown }).status;
      await api.createNamespacedCustomObject({ ...GROUP, namespace: 'default', body: fresh });
      await until(() => seen.includes('add:pool1'), 'add of pool1');

      await api.patchNamespacedCustomObject(
        { ...GROUP, namespace: 'default', name: 'pool1', body: { spec: { replicas: 7 } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await until(() => seen.includes('update:pool1:7'), 'update of pool1');

      // Force 410: cut the watch, change the object while nobody watches, and compact the history.
      const store = sim.cluster('mgmt-weu').store;
      const server = sim.cluster('mgmt-weu');
      server.dropWatches();
      const r = findByPlural('cluster.x-k8s.io', 'v1beta2', 'machinepools') as ResourceDef;
      const cur = store.get(r, 'default', 'pool1');
      store.update(r, 'default', 'pool1', { ...cur, spec: { ...cur.spec, replicas: 8 } });
      store.compact();
      await until(() => seen.includes('update:pool1:8'), 'the update made during the outage, after relisting');

      await api.deleteNamespacedCustomObject({ ...GROUP, namespace: 'default', name: 'pool1' });
      await until(() => seen.includes('delete:pool1'), 'delete of pool1');
      await informer.stop();
      expect(errors).toEqual([]);
      expect(informer.list().map((o) => o.metadata?.name)).toEqual(['pool0']);
    },
  );
});
