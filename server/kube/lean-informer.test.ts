// The informers' watches, against the simulated API server: asked with bookmarks and a server-side timeout as
// client-go asks, they take bookmarks in stride (no reconnect, no relist) and still see every change.

import { CustomObjectsApi, KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSeedSimulator } from '@/sim/kube/testing';
import type { KubeSimulator } from '@/sim/kube/simulator';
import { findByKind, type ResourceDef } from '@/sim/kube/resources';
import { until } from '../testing/sim-harness';
import { WATCH_INACTIVITY_MS, leanInformer, watchQuery } from './lean-informer';

describe('watchQuery', () => {
  it('asks for bookmarks and a server-side timeout of 5 to 10 minutes, keeping the resume point', () => {
    expect(watchQuery({ resourceVersion: '42' }, () => 0)).toEqual({ resourceVersion: '42', allowWatchBookmarks: true, timeoutSeconds: 300 });
    expect(watchQuery({ resourceVersion: '42', labelSelector: 'a' }, () => 0.999).timeoutSeconds).toBe(599);
    // The client waits out more than a bookmark interval (about a minute on real API servers) of silence.
    expect(WATCH_INACTIVITY_MS).toBeGreaterThan(120_000);
  });
});

describe('leanInformer against the simulator', () => {
  let sim: KubeSimulator;
  beforeAll(async () => {
    sim = await startSeedSimulator({ bookmarkIntervalMs: 100 });
  });
  afterAll(async () => {
    await sim.stop();
  });

  it('keeps one watch through bookmarks and sees a change made after them', async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(sim.kubeconfigPath);
    kc.setCurrentContext('mgmt-weu');
    const custom = kc.makeApiClient(CustomObjectsApi);
    const informer = leanInformer(kc, '/apis/cluster.x-k8s.io/v1beta2/machinepools', 'mp', () => custom.listClusterCustomObject({ group: 'cluster.x-k8s.io', version: 'v1beta2', plural: 'machinepools' }) as never);
    const seen: string[] = [];
    informer.on('update', (o: KubernetesObject) => seen.push(String(o.metadata?.annotations?.touched ?? '')));
    await informer.start();
    const server = sim.cluster('mgmt-weu');
    const watches = () => server.requestCounts.get('watch') ?? 0;
    await until('the watch to open', () => (watches() > 0 ? true : undefined));
    const lists = server.requestCounts.get('list') ?? 0;
    // Several bookmark intervals go by.
    await new Promise((r) => setTimeout(r, 600));
    const MP = findByKind('cluster.x-k8s.io/v1beta2', 'MachinePool') as ResourceDef;
    const mp = server.store.get(MP, 'default', 'pool0');
    server.store.update(MP, 'default', 'pool0', { ...mp, metadata: { ...mp.metadata, annotations: { ...mp.metadata?.annotations, touched: 'yes' } } });
    await until('the change', () => (seen.includes('yes') ? true : undefined));
    expect(watches()).toBe(1);
    const q = server.watchRequests.at(-1)?.query;
    expect(q).toMatchObject({ allowWatchBookmarks: 'true', watch: 'true' });
    expect(Number(q?.timeoutSeconds)).toBeGreaterThanOrEqual(300);
    expect(Number(q?.timeoutSeconds)).toBeLessThan(600);
    expect(server.requestCounts.get('list') ?? 0).toBe(lists);
    await informer.stop();
  });
});
