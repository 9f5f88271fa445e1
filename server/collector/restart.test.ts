// The collector's start against the simulated fleet over HTTPS (no mocks): a pool's state is stored once each of
// its sources has been read since start, so a restart on an unchanged fleet writes nothing to any pool's history,
// and a source that says nothing at start is recorded as it is once the start-up grace is over.

import { afterEach, describe, expect, it } from 'vitest';
import type { TimelineEntry } from '@/lib/api-types';
import { harness as makeHarness, until, type Harness } from '../testing/sim-harness';
import { findByKind, type ResourceDef } from '@/sim/kube/resources';
import type { Collector, CycleEvent } from './collector';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const harness = (scenario: string, speed: number, dbFile?: string, existing?: Harness['sim']): Promise<Harness> =>
  makeHarness(cleanups, scenario, speed, { dbFile, existing });
const BOTH = ['mgmt-weu', 'mgmt-neu'];
const MP = findByKind('cluster.x-k8s.io/v1beta2', 'MachinePool') as ResourceDef;
const far = '2100-01-01T00:00:00.000Z';
const ago = '2000-01-01T00:00:00.000Z';
const show = (e: TimelineEntry) => `${e.field}: ${e.from} → ${e.to}`;

/** Every timeline entry of every stored pool from `from` on, by pool. */
async function entriesSince(h: Harness, from: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const p of await h.store.currentPools()) {
    const tl = await h.store.timeline(p.summary.key, from, far);
    if (tl.length) out[p.summary.key] = tl.map(show);
  }
  return out;
}

/**
 * The demo's seven pools stored with every source read: Azure (an AKS pool's VMs from the scale set AKS tagged for
 * its agent pool), the workload clusters' Nodes, the management clusters.
 */
const settled = (h: Harness) =>
  until('every pool stored with all its sources', async () => {
    const all = await h.store.currentPools();
    const read = (p: (typeof all)[number]) => Object.values(p.sources).every((s) => s.state === 'ok');
    return all.length === 7 && all.every(read) ? all : undefined;
  });

/** Resolves after `n` more cycles of `c`. */
const cycles = (c: Collector, n: number) =>
  new Promise<void>((resolve) => {
    let left = n;
    const on = (_e: CycleEvent) => {
      if (--left > 0) return;
      c.bus.off('cycle', on);
      resolve();
    };
    c.bus.on('cycle', on);
  });

describe('a restart', () => {
  // The demo fleet at a quarter of its speed: its first step comes two real minutes in, after the test.
  it('writes nothing to the history of an unchanged pool, records what changed while it was down, and what changes after', async () => {
    const h = await harness('demo.yaml', 0.25);
    const first = await h.start({ contexts: BOTH });
    await settled(h);
    await first.stop();
    // Meanwhile a MachinePool is deleted: that is recorded (at the first list), nothing else is.
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
    // CAPI and CAPZ take the scale set, the AzureMachinePool and the rest first, the MachinePool last: restarting
    // before it is gone would rightly record the pool without its AzureMachinePool first.
    const mgmt = h.sim.kube.cluster('mgmt-weu').store;
    await until(
      'the MachinePool gone',
      () => (mgmt.list(MP).items.some((m) => m.metadata?.name === 'spot') ? undefined : true),
      60_000,
    );
    const restart = new Date().toISOString();
    const h2 = await harness('', 0.25, h.dbFile, h.sim);
    const c = await h2.start({ contexts: BOTH });
    // Every scale set read and every cluster listed since the restart, and the pools analysed with them.
    await until('every source read since the restart', () =>
      c.azure.calls.ok >= 4 && c.health().kube.every((s) => s.state === 'live') ? true : undefined,
    );
    await cycles(c, 3);
    expect(c.forBenchmarks.analyses.unchanged).toBeGreaterThanOrEqual(4);
    expect(await entriesSince(h2, restart)).toEqual({ 'mgmt-weu/default/spot': ['pool: present → deleted'] });

    // A change after the restart is recorded as ever.
    h.sim.runStep({ at: 0, line: 0, scale: { cluster: 'mgmt-weu', name: 'system', replicas: 4 } });
    const scaled = await until(
      'the scale recorded',
      async () => {
        const tl = await h2.store.timeline('mgmt-weu/default/system', restart, far);
        return tl.some((e) => e.field === 'replicas.desired') ? tl : undefined;
      },
      10_000,
    );
    expect(scaled.filter((e) => e.field === 'replicas.desired').map(show)).toEqual(['replicas.desired: 3 → 4']);
  }, 90_000);

  it('on a new store, stores each pool first as its sources all say, not with those not read yet', async () => {
    const h = await harness('demo.yaml', 0.25);
    // AKS answers the first agent pool reads late: the AKS pools wait for them.
    h.sim.azure.addFault({ operation: 'agentPools.list', kind: 'slow', delayMs: 2500, count: 2 });
    await h.start({ contexts: BOTH });
    const pools = await settled(h);
    for (const p of pools) {
      const sources = (await h.store.timeline(p.summary.key, ago, far)).filter((e) => e.field.startsWith('source.'));
      expect(sources.map(show), p.summary.key).toEqual([
        'source.kube: null → ok',
        'source.workload: null → ok',
        'source.azure: null → ok',
      ]);
    }
    // The ASO pool's first state already has AKS's count: its agent pool was read before it was stored.
    const jobs = await h.store.timeline('mgmt-weu/default/aks-jobs', ago, far);
    const first = jobs.find((e) => e.field === 'source.kube')?.at;
    expect(jobs.filter((e) => e.field === 'replicas.vmssCapacity').map((e) => [e.at, show(e)])).toEqual([
      [first, 'replicas.vmssCapacity: null → 5'],
    ]);
  }, 60_000);
});

describe('a source that says nothing at start', () => {
  const GRACE_MS = 2000;

  it('is recorded unknown, with the reason, once the start-up grace is over (Azure answering late), then as it answers', async () => {
    const h = await harness('s05-flexible.yaml', 1);
    const first = await h.start();
    const POOL = 'mgmt-weu/default/pool0';
    await until('the pool stored with Azure read', async () =>
      (await h.store.currentPool(POOL))?.sources.azure.state === 'ok' ? true : undefined,
    );
    await first.stop();
    h.sim.azure.addFault({ operation: '*', kind: 'slow', delayMs: 6000 });
    const restart = new Date().toISOString();
    const h2 = await harness('', 1, h.dbFile, h.sim);
    await h2.start({ startGraceMs: GRACE_MS });
    const started = Date.now();
    const unknown = await until(
      'Azure recorded unknown',
      async () => {
        const p = await h2.store.currentPool(POOL);
        return p?.sources.azure.state === 'unknown' ? p : undefined;
      },
      10_000,
    );
    expect(unknown.sources.azure).toEqual({ state: 'unknown', reason: 'not read yet' });
    const [went] = (await h2.store.timeline(POOL, restart, far)).filter((e) => e.field === 'source.azure');
    expect(went && show(went)).toBe('source.azure: ok → unknown');
    // Not before the grace ended.
    expect(Date.parse(went?.at ?? '')).toBeGreaterThanOrEqual(started + GRACE_MS - 50);
    h.sim.azure.clearFaults();
    await until(
      'Azure recorded again once it answers',
      async () => ((await h2.store.currentPool(POOL))?.sources.azure.state === 'ok' ? true : undefined),
      15_000,
    );
  }, 60_000);

  it('is recorded for the stored pools of a management cluster down at start, once the grace is over', async () => {
    const h = await harness('demo.yaml', 0.25);
    const first = await h.start({ contexts: BOTH });
    await settled(h);
    await first.stop();
    const weu = h.sim.kube.cluster('mgmt-weu');
    weu.setAvailable(false);
    cleanups.push(async () => weu.setAvailable(true));
    const restart = new Date().toISOString();
    const h2 = await harness('', 0.25, h.dbFile, h.sim);
    await h2.start({ contexts: BOTH, startGraceMs: GRACE_MS });
    const started = Date.now();
    const weuPools = [
      'mgmt-weu/default/aks-jobs',
      'mgmt-weu/default/aks-user',
      'mgmt-weu/default/spot',
      'mgmt-weu/default/system',
      'mgmt-weu/default/workers',
    ];
    await until(
      "mgmt-weu's pools recorded with it down",
      async () => {
        for (const k of weuPools)
          if ((await h2.store.currentPool(k))?.sources.kube.state !== 'unreachable') return undefined;
        return true;
      },
      15_000,
    );
    const written = await entriesSince(h2, restart);
    expect(written).toEqual(Object.fromEntries(weuPools.map((k) => [k, ['source.kube: ok → unreachable']])));
    for (const k of weuPools) {
      const [e] = await h2.store.timeline(k, restart, far);
      expect(Date.parse(e?.at ?? ''), k).toBeGreaterThanOrEqual(started + GRACE_MS - 50);
      // Its last state is kept otherwise: instances and figures as last read.
      const p = await h2.store.currentPool(k);
      expect(p?.instances.length, k).toBeGreaterThan(0);
      expect(p?.summary.replicas.azureInstances, k).not.toBeNull();
    }
  }, 60_000);
});
