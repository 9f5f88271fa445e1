// A MachinePool being deleted, as poolscope records it: the simulated CAPI shows phase Deleting while the
// pool's parts go, and the collector stores that phase and its transition before the pool is gone.

import { afterEach, describe, expect, it } from 'vitest';
import { findByPlural } from '@/sim/kube/resources';
import { harness, until } from '../testing/sim-harness';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const far = '2100-01-01T00:00:00.000Z';
const ago = '2000-01-01T00:00:00.000Z';

describe('a MachinePool being deleted', () => {
  it('is stored with phase Deleting, Running → Deleting on its timeline, then recorded deleted', async () => {
    const h = await harness(cleanups, 'demo.yaml', 1);
    await h.start();
    const key = 'mgmt-weu/default/spot';
    await until('spot stored Running', async () => (await h.store.currentPool(key))?.summary.phase === 'Running');
    const world = h.sim.world;
    if (!world) throw new Error('the demo runs with controllers');
    // The world held still, so the state between CAPI's first deletion pass and the next stays to be read.
    world.stop();
    h.sim.runStep({
      at: 0,
      line: 0,
      delete: {
        cluster: 'mgmt-weu',
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'MachinePool',
        namespace: 'default',
        name: 'spot',
      },
    });
    const mgmt = h.sim.kube.cluster('mgmt-weu').store;
    const amp = findByPlural('infrastructure.cluster.x-k8s.io', 'v1beta1', 'azuremachinepools')!;
    const mp = findByPlural('cluster.x-k8s.io', 'v1beta2', 'machinepools')!;
    const steps = world.pass();
    while (mgmt.has(amp, 'default', 'spot') && !steps.next().done);
    expect(mgmt.get(mp, 'default', 'spot').status?.phase).toBe('Deleting');

    const stored = await until('Deleting stored', async () => {
      const p = await h.store.currentPool(key);
      return p?.summary.phase === 'Deleting' ? p : undefined;
    });
    expect(stored.summary.deletedAt).toBeUndefined();
    const phases = (await h.store.timeline(key, ago, far))
      .filter((e) => e.field === 'mp.phase')
      .map((e) => `${e.from} → ${e.to}`);
    expect(phases).toContain('Running → Deleting');

    world.start();
    await until('spot recorded deleted', async () => (await h.store.currentPool(key))?.summary.deletedAt);
  }, 60_000);
});
