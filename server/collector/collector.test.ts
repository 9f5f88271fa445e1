// The collector against the simulated fleet over HTTPS, with the real SDKs (no mocks): it records the seed
// freeze as transitions, survives cut watches and Azure outages, and continues after a restart.
// Long because its cases share simulated fleets started once each (seconds apiece).

import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_AZURE } from '@/lib/fixtures/objects';
import { instanceProviderId } from '@/lib/fixtures/pool';
import type { StoreHealth, TimelineEntry } from '@/lib/api-types';
import type { KubeObject } from '@/lib/unstructured';
import { startSimulation, type Simulation } from '@/sim/index';
import { findByPlural } from '@/sim/kube/resources';
import { readScenario } from '@/sim/world/scenario';
import type { Scheduler } from '../azure/scheduler';
import { parseEnv } from '../env';
import { useLogDestination } from '../log';
import { openStore } from '../store';
import type { SqlDb } from '../store/store';
import { harness as makeHarness, until, type Harness } from '../testing/sim-harness';
import { Collector, DEFAULT_CYCLE_MS, type CycleEvent } from './collector';
import { CycleLog, startRuntime } from '../runtime';

const SCENARIOS = path.resolve(import.meta.dirname, '..', '..', 'sim', 'scenarios');
const POOL = 'mgmt-weu/default/pool0';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const harness = (scenario: string, speed: number, dbFile?: string, existing?: Simulation): Promise<Harness> =>
  makeHarness(cleanups, scenario, speed, { dbFile, existing });

const field = (tl: TimelineEntry[], f: string) => tl.filter((e) => e.field === f);

/** A Warning Event `DiskFull` about the MachinePool `default/<pool>` of mgmt-weu. */
function diskFull(h: Harness, pool: string): void {
  const now = new Date().toISOString();
  h.sim.kube.cluster('mgmt-weu').store.create(findByPlural('', 'v1', 'events')!, 'default', {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${pool}.disk`, namespace: 'default' },
    involvedObject: { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachinePool', name: pool, namespace: 'default' },
    reason: 'DiskFull',
    message: 'the disk is full',
    type: 'Warning',
    count: 1,
    firstTimestamp: now,
    lastTimestamp: now,
  } as KubeObject);
}
const far = '2100-01-01T00:00:00.000Z';
const ago = '2000-01-01T00:00:00.000Z';

describe('collector cycles', () => {
  it('analyses at most maxPoolsPerCycle pools a cycle, oldest first, and reaches every pool', async () => {
    const h = await harness('demo.yaml', 1);
    const written: number[] = [];
    const c = await h.start({ maxPoolsPerCycle: 1 });
    c.bus.on('cycle', (e: { pools: number }) => written.push(e.pools));
    const pools = await until('every mgmt-weu pool stored', async () => {
      const all = (await h.store.currentPools()).filter((p) => p.summary.ref.context === 'mgmt-weu');
      return all.length >= 3 ? all : undefined;
    });
    expect(pools.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...written)).toBe(1);
    expect(written.filter((n) => n === 1).length).toBeGreaterThanOrEqual(3);

    // A change someone made to a pool (urgent) goes ahead of the pools already waiting: the next analysis
    // after both are queued is the urgent one (recorded through the source's poolInput, called per analysis).
    const inside = c as unknown as {
      onKubeChange(ctx: string, pools: string[], urgent?: boolean): void;
      sources: Map<string, { poolInput(k: string): unknown }>;
    };
    const src = inside.sources.get('mgmt-weu') as { poolInput(k: string): unknown };
    const keys = pools.map((p) => `${p.summary.ref.namespace}/${p.summary.ref.name}`);
    const target = keys.at(-1) as string;
    const asked: string[] = [];
    const original = src.poolInput.bind(src);
    src.poolInput = (k: string) => {
      asked.push(k);
      return original(k);
    };
    inside.onKubeChange('mgmt-weu', keys.slice(0, -1));
    inside.onKubeChange('mgmt-weu', [target], true);
    await until('an analysis', () => (asked.length > 0 ? true : undefined));
    expect(asked[0]).toBe(target);

    // The source bar lists subscriptions by ID, whichever was read first.
    const health = c.azure as unknown as { setHealth(sub: string, state: string): void };
    health.setHealth('ffffffff-0000-0000-0000-000000000000', 'live');
    health.setHealth('00000000-0000-0000-0000-000000000000', 'live');
    const subs = c.health().azure.map((s) => s.subscription);
    expect(subs.length).toBeGreaterThanOrEqual(2);
    expect(subs).toEqual([...subs].sort());
    // Each subscription it reads names the workload clusters whose scale sets (or AKS agent pools) it holds; one it
    // only heard of, none.
    const read = c.health().azure.filter((s) => s.usedBy?.length);
    expect(read.length).toBeGreaterThan(0);
    for (const s of read)
      expect(
        s.usedBy?.every((n) => /^(prod-(weu|neu)|aks-weu)$/.test(n)),
        s.subscription,
      ).toBe(true);
    expect(c.health().azure.find((s) => s.subscription.startsWith('ffffffff'))?.usedBy).toEqual([]);
  }, 60_000);
});

describe('collector backlog', () => {
  it("works through pools waiting beyond one cycle's share back to back, not a cadence apart", async () => {
    const h = await harness('demo.yaml', 1);
    // A cadence longer than the test: only the backlog (or someone acting on a pool) brings cycles about. No start-up
    // grace: a pool would wait for its first Azure read, which a cycle starts.
    const c = await h.start({ maxPoolsPerCycle: 1, cycleMs: 600_000, startGraceMs: 0 });
    const pools = await until('every mgmt-weu pool stored', async () => {
      const all = (await h.store.currentPools()).filter((p) => p.summary.ref.context === 'mgmt-weu');
      return all.length >= 3 ? all : undefined;
    });
    const inside = c as unknown as {
      onKubeChange(ctx: string, pools: string[], urgent?: boolean): void;
      sources: Map<string, { poolInput(k: string): unknown }>;
    };
    const src = inside.sources.get('mgmt-weu') as { poolInput(k: string): unknown };
    const keys = pools.map((p) => `${p.summary.ref.namespace}/${p.summary.ref.name}`);
    const asked = new Set<string>();
    const original = src.poolInput.bind(src);
    src.poolInput = (k: string) => {
      asked.add(k);
      return original(k);
    };
    const cycles: CycleEvent[] = [];
    c.bus.on('cycle', (e: CycleEvent) => cycles.push(e));
    // Instance churn on every pool but one (waiting for the cadence), then someone acts on that one.
    inside.onKubeChange('mgmt-weu', keys.slice(1));
    inside.onKubeChange('mgmt-weu', keys.slice(0, 1), true);
    await until(
      'every pool analysed again, one a cycle',
      () => (keys.every((k) => asked.has(k)) ? true : undefined),
      5000,
    );
    // Each cycle (one pool each) says how many pools it left waiting: at least those of these not analysed yet (the
    // simulator's changes and Azure reads may add others), down to none once they are all done.
    cycles
      .slice(0, keys.length)
      .forEach((e, i) => expect(e.waiting, `cycle ${i}`).toBeGreaterThanOrEqual(keys.length - 1 - i));
    await until(
      'a cycle that left no pool waiting',
      () => (cycles.some((e) => e.waiting === 0) ? true : undefined),
      5000,
    );
  }, 60_000);

  it("writes the other pools of a cycle when one pool's analysis throws, and says which", async () => {
    const h = await harness('demo.yaml', 1);
    // No start-up grace: with a cadence this long, a pool would wait for its first Azure read, which a cycle starts.
    const c = await h.start({ cycleMs: 600_000, startGraceMs: 0 });
    const pools = await until('every mgmt-weu pool stored', async () => {
      const all = (await h.store.currentPools()).filter((p) => p.summary.ref.context === 'mgmt-weu');
      return all.length >= 3 ? all : undefined;
    });
    const inside = c as unknown as {
      onKubeChange(ctx: string, pools: string[], urgent?: boolean): void;
      sources: Map<string, { poolInput(k: string): unknown }>;
    };
    const src = inside.sources.get('mgmt-weu') as { poolInput(k: string): unknown };
    const [bad, ...good] = pools.map((p) => `${p.summary.ref.namespace}/${p.summary.ref.name}`) as [
      string,
      ...string[],
    ];
    const original = src.poolInput.bind(src);
    const asked = new Set<string>();
    src.poolInput = (k: string) => {
      if (k === bad) throw new Error('a cache in a state nobody expected');
      asked.add(k);
      return original(k);
    };
    const cycles: CycleEvent[] = [];
    c.bus.on('cycle', (e: CycleEvent) => cycles.push(e));
    inside.onKubeChange('mgmt-weu', [bad, ...good], true);
    const done = await until('the cycle', () => cycles.find((e) => e.changeLags.length >= good.length + 1));
    expect(good.every((k) => asked.has(k))).toBe(true);
    expect(c.lastError).toBe(`analysing mgmt-weu/${bad}: a cache in a state nobody expected`);
    expect(done.changeLags.every((s) => s >= 0 && s < 5)).toBe(true);
  }, 60_000);
});

describe('collector and new pools', () => {
  it('reads the scale set of a pool that appears after it started (its Azure index follows the pools)', async () => {
    const h = await harness('seed-one-vm-failed.yaml', 1);
    await h.start();
    await until('the first Azure read', async () =>
      (await h.store.currentPool(POOL))?.sources.azure.state === 'ok' ? true : undefined,
    );
    // A new pool whose AzureMachinePool names a scale set nobody read yet (it does not exist in Azure).
    const store = h.sim.kube.cluster('mgmt-weu').store;
    const MP = findByPlural('cluster.x-k8s.io', 'v1beta2', 'machinepools')!;
    const AMP = findByPlural('infrastructure.cluster.x-k8s.io', 'v1beta1', 'azuremachinepools')!;
    const mp = store.get(MP, 'default', 'pool0', 'v1beta2');
    const amp = store.get(AMP, 'default', 'pool0');
    const vmss = String(amp.spec?.providerID).replace(/pool0$/, 'pool-late');
    store.create(AMP, 'default', {
      ...amp,
      metadata: { name: 'pool-late', namespace: 'default' },
      spec: { ...amp.spec, providerID: vmss, providerIDList: [] },
    });
    const template = mp.spec?.template as { spec: { infrastructureRef: object } };
    store.create(MP, 'default', {
      ...mp,
      metadata: { name: 'pool-late', namespace: 'default' },
      spec: {
        ...mp.spec,
        providerIDList: [],
        template: {
          ...template,
          spec: { ...template.spec, infrastructureRef: { ...template.spec.infrastructureRef, name: 'pool-late' } },
        },
      },
    });
    const late = await until(
      'the new pool read from Azure',
      async () => {
        const p = await h.store.currentPool('mgmt-weu/default/pool-late');
        return p && p.sources.azure.state !== 'unknown' ? p : undefined;
      },
      20_000,
    );
    expect(late.sources.azure.state).toBe('not-found');
  }, 40_000);
});

describe('collector on the seed scenario', () => {
  it('records the freeze from its start to its end, with the two instances the autoscaler cannot see', async () => {
    const h = await harness('seed-scale-up-frozen.yaml', 20);
    await h.start();
    const ended = await until(
      'the freeze to start and end',
      async () => {
        const tl = await h.store.timeline(POOL, ago, far);
        const f = field(tl, 'finding.readiness-gate-frozen');
        return f.length >= 2 && f.at(-1)?.to === null ? tl : undefined;
      },
      40_000,
    );
    const frozen = field(ended, 'finding.readiness-gate-frozen');
    const start = frozen.find((e) => e.from === null);
    const end = frozen.at(-1);
    // A scale-up freeze on CAPZ before v1.20 is routine until it lasts 10 min: this one is over in seconds.
    expect(start).toMatchObject({ from: null, to: 'warning' });
    expect(end).toMatchObject({ from: 'warning', to: null });
    // At 20× the freeze lasts about two simulated minutes: between 2 and 10 real seconds.
    const lasted = Date.parse(end!.at) - Date.parse(start!.at);
    expect(lasted).toBeGreaterThan(2000);
    expect(lasted).toBeLessThan(10_000);
    const missing = field(ended, 'drift')
      .filter((e) => e.to?.startsWith('missing-from-machinepool:'))
      .map((e) => e.to?.split('/').pop());
    expect(missing.sort()).toEqual(['3', '4']);
    // A past instant inside the freeze shows it, with the instances missing from the MachinePool list.
    const mid = new Date((Date.parse(start!.at) + Date.parse(end!.at)) / 2).toISOString();
    const then = await h.store.poolAt(POOL, mid);
    expect(then?.findings.map((f) => f.code)).toContain('readiness-gate-frozen');
    expect(then?.drift.filter((d) => d.kind === 'missing-from-machinepool').map((d) => d.providerID)).toEqual([
      instanceProviderId(DEFAULT_AZURE, 'pool0', '3'),
      instanceProviderId(DEFAULT_AZURE, 'pool0', '4'),
    ]);
    const now = await h.store.currentPool(POOL);
    expect(now?.summary.ampReady).toBe(true);
    expect(now?.drift).toEqual([]);
  }, 60_000);
});

describe('collector and Azure reads older than the Kubernetes objects', () => {
  it("records no drift on Azure's account for instances come or gone since its last read (a scale-up, then down)", async () => {
    const h = await harness('seed-scale-up-frozen.yaml', 20);
    // Each read reaches the collector 2.5 s after Azure listed the VMs (as a budget-limited or slow read would):
    // the new instances' AMPMs and Nodes come while the read in hand predates them.
    const slow = Object.create(h.azure) as typeof h.azure;
    slow.read = async (ref) => {
      const r = await h.azure.read(ref);
      await new Promise((res) => setTimeout(res, 2500));
      return r;
    };
    await h.start({ azure: slow });
    let awaited = 0;
    const tl = await until(
      'the scale-up to end with all five instances read from Azure',
      async () => {
        const cur = await h.store.currentPool(POOL);
        awaited = Math.max(awaited, cur?.instances.filter((r) => r.awaitingAzureRead).length ?? 0);
        const t = await h.store.timeline(POOL, ago, far);
        const ended = field(t, 'finding.readiness-gate-frozen').at(-1)?.to === null;
        return ended && cur?.summary.replicas.azureInstances === 5 && cur.drift.length === 0 ? t : undefined;
      },
      45_000,
    );
    // The lag was there to be tolerated: some state showed a new instance as not read yet.
    expect(awaited).toBeGreaterThan(0);
    const fresh = new Set(['3', '4']);
    const wrong = field(tl, 'drift').filter(
      (e) =>
        /^(ghost-in-machinepool|ghost-in-azuremachinepool|node-without-instance):/.test(e.to ?? '') &&
        fresh.has(e.to?.split('/').pop() ?? ''),
    );
    expect(wrong).toEqual([]);
    // What the freeze really did is still recorded: the two instances missing from the MachinePool list.
    expect(
      field(tl, 'drift')
        .filter((e) => e.to?.startsWith('missing-from-machinepool:'))
        .map((e) => e.to?.split('/').pop())
        .sort(),
    ).toEqual(['3', '4']);

    // Scaled down to 3: the read in hand still lists the two VMs CAPZ deletes after their AMPMs are gone. They are
    // not called missing from the lists or without a Node (only the next read may call them ghosts).
    const before = new Set((await h.store.currentPool(POOL))?.instances.map((r) => r.providerID));
    const t0 = new Date().toISOString();
    h.sim.runStep({ at: 0, line: 0, scale: { cluster: 'mgmt-weu', name: 'pool0', replicas: 3 } });
    let going = 0;
    const down = await until(
      'the scale-down to end, read from Azure',
      async () => {
        const cur = await h.store.currentPool(POOL);
        going = Math.max(going, cur?.instances.filter((r) => r.awaitingAzureRead && r.azure).length ?? 0);
        return cur?.summary.replicas.azureInstances === 3 && cur.summary.ampReady && cur.drift.length === 0
          ? h.store.timeline(POOL, t0, far)
          : undefined;
      },
      45_000,
    );
    const after = new Set((await h.store.currentPool(POOL))?.instances.map((r) => r.providerID));
    const removed = [...before].filter((id) => !after.has(id)).map((id) => id.split('/').pop() ?? '');
    expect(removed).toHaveLength(2);
    const stale = field(down, 'drift').filter(
      (e) =>
        /^(missing-from-machinepool|missing-from-azuremachinepool|instance-without-node):/.test(e.to ?? '') &&
        removed.includes(e.to?.split('/').pop() ?? ''),
    );
    expect(stale).toEqual([]);
    expect(going).toBeGreaterThan(0);
  }, 90_000);
});

describe('collector resilience', () => {
  it('loses no transition when the watches are cut and the history compacted (410) mid-scenario', async () => {
    const h = await harness('seed-one-vm-failed.yaml', 20);
    await h.start();
    await until('the first analysis', async () => (await h.store.currentPool(POOL)) ?? undefined);
    const server = h.sim.kube.cluster('mgmt-weu');
    // Cut the watches repeatedly while the scenario moves, compacting so that resumes get 410 Gone.
    const cutter = setInterval(() => {
      server.dropWatches();
      server.store.compact();
    }, 700);
    try {
      await until(
        'the failure to be recorded',
        async () => {
          const tl = await h.store.timeline(POOL, ago, far);
          return field(tl, 'finding.vmss-failed').length > 0 && field(tl, 'amp.ready').some((e) => e.to === 'false')
            ? true
            : undefined;
        },
        40_000,
      );
    } finally {
      clearInterval(cutter);
    }
    const cur = await h.store.currentPool(POOL);
    expect(cur?.summary.provisioningState).toBe('Failed');
    // CAPZ's Event about the failed VM is on the timeline too.
    const events = await until('the FailedVMState event', async () => {
      const e = field(await h.store.timeline(POOL, ago, far), 'event.FailedVMState');
      return e.length ? e : undefined;
    });
    expect(events.map((e) => e.to)).toEqual(['AzureMachinePoolMachine/pool0-3']);
    expect(cur?.drift.map((d) => `${d.kind}:${d.providerID?.split('/').pop()}`)).toContain(
      'missing-from-machinepool:3',
    );
  }, 60_000);

  it('keeps Kubernetes data fresh while Azure is down, honours 429 Retry-After without extra calls, and reports both', async () => {
    const h = await harness('s05-flexible.yaml', 1);
    await h.start();
    const scheduler = (h.collector as unknown as { opts: { scheduler: Scheduler } }).opts.scheduler;
    await until('the first full analysis', async () =>
      (await h.store.currentPool(POOL))?.sources.azure.state === 'ok' ? true : undefined,
    );
    // Azure down: every call fails; a Kubernetes change must still be recorded.
    h.sim.azure.addFault({ operation: '*', kind: 'error', status: 503 });
    await until('Azure to be reported unreachable', async () =>
      (await h.store.currentPool(POOL))?.sources.azure.state === 'unreachable' ? true : undefined,
    );
    h.sim.runStep({ at: 0, line: 0, scale: { cluster: 'mgmt-weu', name: 'pool0', replicas: 4 } });
    await until('the Kubernetes change to be recorded', async () =>
      (await h.store.currentPool(POOL))?.summary.replicas.desired === 4 ? true : undefined,
    );
    h.sim.azure.clearFaults();
    await until(
      'Azure to be read again',
      async () => ((await h.store.currentPool(POOL))?.sources.azure.state === 'ok' ? true : undefined),
      15_000,
    );
    // A 429 storm: one throttled answer blocks the subscription for Retry-After, with no further calls.
    h.sim.azure.throttler.throttleSubscription(DEFAULT_AZURE.subscriptionId, 6);
    await until('the throttling to be reported', async () =>
      (await h.store.currentPool(POOL))?.sources.azure.state === 'throttled' ? true : undefined,
    );
    const calls = h.sim.azure.requestCounts.get('vmss.get') ?? 0;
    const blocked = scheduler
      .budgetsView(Date.now())
      .map((b) => b.blockedUntil)
      .find((b) => b !== null);
    expect(blocked, 'the subscription+region is blocked until Retry-After').toBeTruthy();
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(blocked as string) - Date.now() - 150)));
    expect(h.sim.azure.requestCounts.get('vmss.get') ?? 0).toBe(calls);
    await until(
      'Azure to recover after Retry-After',
      async () => ((await h.store.currentPool(POOL))?.sources.azure.state === 'ok' ? true : undefined),
      15_000,
    );
    const tl = await h.store.timeline(POOL, ago, far);
    const states = field(tl, 'source.azure').map((e) => e.to);
    // The first analysis may come before the first Azure read answered (reads run beside the cycles).
    expect(states[0] === 'unknown' ? states.slice(1) : states).toEqual(['ok', 'unreachable', 'ok', 'throttled', 'ok']);
  }, 60_000);

  it("records when a pool's scale set was last read from Azure, once the read is analysed, and not while Azure fails", async () => {
    const h = await harness('s05-flexible.yaml', 1);
    await h.start();
    const first = await until('a read to be recorded', async () => (await h.store.azureReadAt(POOL)) ?? undefined);
    expect((await h.store.currentPool(POOL))?.sources.azure.state).toBe('ok');
    expect(Date.parse(first)).toBeLessThanOrEqual(Date.now());
    expect(Date.now() - Date.parse(first)).toBeLessThan(20_000);
    h.sim.azure.addFault({ operation: '*', kind: 'error', status: 503 });
    await until('Azure to be reported unreachable', async () =>
      (await h.store.currentPool(POOL))?.sources.azure.state === 'unreachable' ? true : undefined,
    );
    const last = await h.store.azureReadAt(POOL);
    const failing = h.sim.azure.requestCounts.get('vmss.get') ?? 0;
    await until(
      'another read to fail',
      async () => ((h.sim.azure.requestCounts.get('vmss.get') ?? 0) > failing ? true : undefined),
      20_000,
    );
    expect(await h.store.azureReadAt(POOL)).toBe(last);
    h.sim.azure.clearFaults();
    const again = await until(
      'a read after Azure is back',
      async () => {
        const r = await h.store.azureReadAt(POOL);
        return r && r > (last as string) ? r : undefined;
      },
      20_000,
    );
    expect((await h.store.currentPool(POOL))?.sources.azure.state).toBe('ok');
    expect(again > (last as string)).toBe(true);
  }, 60_000);

  it('records a Kubernetes change at once while Azure answers slowly (reads run beside the cycles)', async () => {
    const h = await harness('s05-flexible.yaml', 1);
    await h.start();
    await until('the first full analysis', async () =>
      (await h.store.currentPool(POOL))?.sources.azure.state === 'ok' ? true : undefined,
    );
    h.sim.azure.addFault({ operation: '*', kind: 'slow', delayMs: 8000 });
    // Let a read start and hang.
    await new Promise((r) => setTimeout(r, 1500));
    const t0 = Date.now();
    h.sim.runStep({ at: 0, line: 0, scale: { cluster: 'mgmt-weu', name: 'pool0', replicas: 4 } });
    await until('the Kubernetes change to be recorded', async () =>
      (await h.store.currentPool(POOL))?.summary.replicas.desired === 4 ? true : undefined,
    );
    expect(Date.now() - t0).toBeLessThan(3000);
    h.sim.azure.clearFaults();
  }, 40_000);

  it('starts a cycle at once when someone acts on a pool, without waiting for the cadence', async () => {
    const h = await harness('s05-flexible.yaml', 1);
    // A cadence longer than the test: only a change someone made can bring a cycle about. No start-up grace: the
    // pool would wait for its first Azure read, which a cycle starts.
    await h.start({ cycleMs: 600_000, startGraceMs: 0 });
    // The pool appearing is such a change.
    await until('the pool to be recorded', async () => (await h.store.currentPool(POOL)) ?? undefined, 20_000);
    h.sim.runStep({ at: 0, line: 0, scale: { cluster: 'mgmt-weu', name: 'pool0', replicas: 4 } });
    const d = await until(
      'the scale to be recorded',
      async () => ((await h.store.currentPool(POOL))?.summary.replicas.desired === 4 ? true : undefined),
      20_000,
    );
    expect(d).toBe(true);
  }, 40_000);

  it('keeps a cycle the store refused (its changes and Events) for a later one, backing off meanwhile', async () => {
    const h = await harness('s05-flexible.yaml', 1);
    const c = await h.start();
    await until('the first full analysis', async () =>
      (await h.store.currentPool(POOL))?.sources.azure.state === 'ok' ? true : undefined,
    );
    // The store refuses every write until it has refused two holding the Event below.
    const write = h.store.writeCycle.bind(h.store);
    const refusedAt: number[] = [];
    let refusedWithEvent = 0;
    const failingBefore: number[] = [];
    const healthBefore: StoreHealth[] = [];
    const failed: CycleEvent[] = [];
    c.bus.on('cycle', (e: CycleEvent) => {
      if (e.error !== undefined) failed.push(e);
    });
    h.store.writeCycle = async (cycle, pending) => {
      const writes = [...pending];
      if (refusedWithEvent < 2) {
        // The refusals so far, in a row (poolscope_collector_store_failing_writes).
        failingBefore.push(c.storeWritesFailing);
        healthBefore.push(c.storeHealth());
        refusedAt.push(performance.now());
        if (writes.some((w) => w.transitions.some((t) => t.field === 'event.DiskFull'))) refusedWithEvent++;
        throw new Error('database is locked');
      }
      return write(cycle, writes);
    };
    diskFull(h, 'pool0');
    h.sim.runStep({ at: 0, line: 0, scale: { cluster: 'mgmt-weu', name: 'pool0', replicas: 4 } });
    const tl = await until('the Event stored after the refusals', async () => {
      const t = await h.store.timeline(POOL, ago, far);
      return field(t, 'event.DiskFull').length ? t : undefined;
    });
    expect(refusedWithEvent).toBe(2);
    expect(c.lastError).toContain('database is locked');
    // Every refusal counted (poolscope_collector_store_write_failures_total); in a row until a write is stored.
    expect(c.storeWriteFailures).toBe(refusedAt.length);
    expect(failingBefore).toEqual(refusedAt.map((_, i) => i));
    // What the source bar shows: failing since the first refusal in a row, with the last one's reason.
    expect(healthBefore[0]).toEqual({ state: 'ok', since: null, failingWrites: 0 });
    const since = healthBefore[1]?.since;
    expect(since).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(healthBefore.slice(1)).toEqual(
      healthBefore
        .slice(1)
        .map((_, i) => ({ state: 'failing', since, failingWrites: i + 1, error: 'database is locked' })),
    );
    // Each failed cycle says why, and how many writes failed in a row; it is logged as an error.
    expect(failed.map((e) => [e.error, e.failingWrites])).toEqual(
      refusedAt.map((_, i) => ['database is locked', i + 1]),
    );
    const lines: Record<string, unknown>[] = [];
    useLogDestination(
      new Writable({
        write(chunk: Buffer, _enc, cb) {
          lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
          cb();
        },
      }),
    );
    try {
      // At once for a failure; a cycle that stored something only at debug, and in the minute's summary at info.
      const cycles = new CycleLog();
      cycles.record({ ...(failed[1] as CycleEvent), azureCalls: 5 });
      cycles.record({
        seconds: 0.01,
        pools: 2,
        cycle: 'c1',
        azureCalls: 10,
        changeLags: [0.2],
        analyseMs: 1,
        writeMs: 2,
        waiting: 0,
      });
      cycles.record({
        seconds: 0.03,
        pools: 3,
        cycle: 'c2',
        azureCalls: 14,
        changeLags: [0.1, 0.4],
        analyseMs: 3,
        writeMs: 4,
        waiting: 1,
      });
      cycles.record({
        seconds: 0.001,
        pools: 0,
        cycle: null,
        azureCalls: 15,
        changeLags: [],
        analyseMs: 0,
        writeMs: 0,
        waiting: 0,
      });
      expect(lines.map((l) => l.msg)).toEqual(['collector cycle failed']);
      cycles.flush();
      // Nothing since: no line.
      cycles.flush();
    } finally {
      useLogDestination(process.stdout);
    }
    expect(lines).toMatchObject([
      {
        level: 'error',
        msg: 'collector cycle failed',
        err: 'database is locked',
        failingWrites: 2,
        pools: 0,
        cycle: null,
      },
      {
        level: 'info',
        msg: 'collector cycles',
        cycles: 2,
        failedCycles: 1,
        poolStates: 5,
        slowestCycleMs: 30,
        analyseMs: 4,
        writeMs: 6,
        changeToStoredMaxMs: 400,
        azureCalls: 10,
        waiting: 0,
        firstCycle: 'c1',
        lastCycle: 'c2',
      },
    ]);
    expect(lines).toHaveLength(2);
    expect(field(tl, 'event.DiskFull').map((e) => e.to)).toEqual(['MachinePool/pool0']);
    await until('the scale stored', async () =>
      (await h.store.currentPool(POOL))?.summary.replicas.desired === 4 ? true : undefined,
    );
    expect(c.storeWritesFailing).toBe(0);
    expect(c.storeHealth()).toEqual({ state: 'ok', since: null, failingWrites: 0 });
    // Each try waited longer than the one before (the cadence, 150 ms, doubled each time).
    const gaps = refusedAt.slice(1).map((t, i) => t - (refusedAt[i] as number));
    expect(gaps.at(-1)).toBeGreaterThanOrEqual(150 * 2 ** (refusedAt.length - 1) - 5);
  }, 40_000);

  it('on a full database (SQLite): the stored state stays as it was, and the pool is stored as it then is once there is room', async () => {
    const h = await harness('s05-flexible.yaml', 1);
    const c = await h.start();
    await until('the first full analysis', async () =>
      (await h.store.currentPool(POOL))?.sources.azure.state === 'ok' ? true : undefined,
    );
    const sql = (h.store as unknown as { db: SqlDb }).db;
    const [{ page_count: pages } = { page_count: 0 }] = await sql.all<{ page_count: number }>('PRAGMA page_count');
    // The database may not grow, as on a full volume: the pool is scaled until a write needs a page more.
    await sql.all(`PRAGMA max_page_count = ${pages}`);
    let replicas = 3;
    await until('a write refused for want of room', async () => {
      if (c.storeWritesFailing > 0) return true;
      h.sim.runStep({ at: 0, line: 0, scale: { cluster: 'mgmt-weu', name: 'pool0', replicas: ++replicas } });
      await new Promise((r) => setTimeout(r, 300));
      return undefined;
    });
    expect(c.lastError).toMatch(/database or disk is full/);
    const stored = (await h.store.currentPool(POOL))?.summary.replicas.desired;
    expect(stored).toBeLessThan(replicas);
    // Room again: the next try stores the pool as it now is, and the refusals in a row end.
    await sql.all('PRAGMA max_page_count = 1000000');
    await until('the latest scale stored', async () =>
      (await h.store.currentPool(POOL))?.summary.replicas.desired === replicas ? true : undefined,
    );
    expect(c.storeWritesFailing).toBe(0);
    expect(
      (await h.store.timeline(POOL, ago, far))
        .filter((e) => e.field === 'replicas.desired')
        .map((e) => Number(e.to))
        .at(-1),
    ).toBe(replicas);
  }, 40_000);

  it("records a pool's Event once when its analysis failed in a cycle the store then refused", async () => {
    const h = await harness('demo.yaml', 1);
    // A cadence longer than the test: only a change someone made brings a cycle about. No start-up grace: the pools
    // would wait for their first Azure reads, which a cycle starts.
    const c = await h.start({ cycleMs: 600_000, startGraceMs: 0 });
    const key = (name: string) => `mgmt-weu/default/${name}`;
    await until(
      'the pools stored',
      async () =>
        (await h.store.currentPool(key('system'))) && (await h.store.currentPool(key('workers'))) ? true : undefined,
      20_000,
    );
    const inside = c as unknown as {
      analyse(k: string, at: string, events: readonly unknown[]): unknown;
      pendingEvents: Map<string, unknown[]>;
    };
    // `system`'s next analysis fails once; the cycle's write (of `workers` alone) is refused once.
    const analyse = inside.analyse.bind(c);
    let failed = 0;
    inside.analyse = (k, at, events) => {
      if (k === key('system') && failed++ === 0) throw new Error('analysis failed');
      return analyse(k, at, events);
    };
    const write = h.store.writeCycle.bind(h.store);
    let refused = 0;
    h.store.writeCycle = async (cycle, writes) => {
      if (refused++ > 0) return write(cycle, writes);
      // Refused after taking the cycle's writes, as a transaction failing at its end would.
      expect([...writes].length).toBe(1);
      throw new Error('database is locked');
    };
    diskFull(h, 'system');
    await until('the Event waiting', async () => (inside.pendingEvents.has(key('system')) ? true : undefined));
    // Someone scales `workers`: a cycle at once, taking both pools.
    h.sim.runStep({ at: 0, line: 0, scale: { cluster: 'mgmt-weu', name: 'workers', replicas: 6 } });
    const tl = await until(
      'the Event stored',
      async () => {
        const t = await h.store.timeline(key('system'), ago, far);
        return field(t, 'event.DiskFull').length ? t : undefined;
      },
      20_000,
    );
    expect(failed).toBeGreaterThan(1);
    expect(refused).toBeGreaterThan(1);
    await until('the scale stored', async () =>
      (await h.store.currentPool(key('workers')))?.summary.replicas.desired === 6 ? true : undefined,
    );
    expect(field(tl, 'event.DiskFull').map((e) => e.to)).toEqual(['MachinePool/system']);
  }, 40_000);

  it('keeps Azure data fresh while the management cluster is down, and reports it', async () => {
    const h = await harness('s05-flexible.yaml', 1);
    await h.start();
    await until('the first full analysis', async () =>
      (await h.store.currentPool(POOL))?.sources.azure.state === 'ok' ? true : undefined,
    );
    h.sim.kube.cluster('mgmt-weu').setAvailable(false);
    h.sim.runStep({ at: 0, line: 0, deleteVm: { cluster: 'mgmt-weu', name: 'pool0', member: 'pool0_5e6f7a8b' } });
    const d = await until(
      'the Azure change with Kubernetes down',
      async () => {
        const p = await h.store.currentPool(POOL);
        return p && p.sources.kube.state !== 'ok' && p.drift.some((x) => x.kind === 'ghost-in-machinepool')
          ? p
          : undefined;
      },
      20_000,
    );
    expect(d.sources.kube.state).toBe('unreachable');
    expect(d.sources.azure.state).toBe('ok');
    expect(d.drift.filter((x) => x.kind === 'ghost-in-machinepool').map((x) => x.providerID?.split('/').pop())).toEqual(
      ['pool0_5e6f7a8b'],
    );
    h.sim.kube.cluster('mgmt-weu').setAvailable(true);
  }, 40_000);

  it('continues after a restart with no duplicated and no missing transitions', async () => {
    const h = await harness('seed-one-vm-failed.yaml', 20);
    const first = await h.start();
    await until('the first analysis', async () => (await h.store.currentPool(POOL)) ?? undefined);
    // "Kill" it: stop without a goodbye; a new collector opens the same database.
    await first.stop();
    const before = await h.store.timeline(POOL, ago, far);
    const h2 = await harness('', 20, h.dbFile, h.sim);
    await h2.start();
    await until(
      'the failure after the restart',
      async () => {
        const tl = await h2.store.timeline(POOL, ago, far);
        return field(tl, 'amp.provisioningState').some((e) => e.to === 'Failed') ? tl : undefined;
      },
      40_000,
    );
    const after = await h2.store.timeline(POOL, ago, far);
    expect(after.slice(0, before.length)).toEqual(before);
    // No field reports the same value twice in a row: nothing duplicated across the restart.
    const last = new Map<string, string | null>();
    for (const e of after) {
      if (e.field === 'drift') continue;
      if (last.has(e.field)) expect(e.from, `${e.field} at ${e.at}`).toBe(last.get(e.field));
      last.set(e.field, e.to);
    }
  }, 60_000);
});

describe('deleted pools', () => {
  const mpDef = () => findByPlural('cluster.x-k8s.io', 'v1beta2', 'machinepools')!;
  /** Creates a MachinePool again from a copy of it taken before it was deleted (without what the server set). */
  const createMpAgain = (h: Harness, mp: KubeObject) => {
    const {
      resourceVersion: _rv,
      uid: _uid,
      creationTimestamp: _ct,
      deletionTimestamp: _dt,
      finalizers: _f,
      ...metadata
    } = mp.metadata ?? {};
    h.sim.runStep({ at: 0, line: 0, apply: { cluster: 'mgmt-weu', object: { ...mp, metadata } as KubeObject } });
  };
  const deleteMp = (h: Harness, name: string) =>
    h.sim.runStep({
      at: 0,
      line: 0,
      delete: {
        cluster: 'mgmt-weu',
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'MachinePool',
        namespace: 'default',
        name,
      },
    });
  const deletedState = (h: Harness, key: string) =>
    until(`${key} recorded deleted`, async () => {
      const p = await h.store.currentPool(key);
      return p?.summary.deletedAt ? p : undefined;
    });

  it('records a MachinePool deleted while it runs, or while it did not (at its first list), keeps its last state, and records its return', async () => {
    const h = await harness('demo.yaml', 1);
    const first = await h.start();
    const [system, spot] = ['mgmt-weu/default/system', 'mgmt-weu/default/spot'];
    await until('both pools stored', async () =>
      (await h.store.currentPool(system)) && (await h.store.currentPool(spot)) ? true : undefined,
    );

    // Deleted while the collector runs: its last state, marked deleted, with a transition on its timeline.
    const systemMp = h.sim.kube.cluster('mgmt-weu').store.get(mpDef(), 'default', 'system');
    deleteMp(h, 'system');
    const gone = await deletedState(h, system);
    const deletedAt = gone.summary.deletedAt as string;
    expect(field(await h.store.timeline(system, ago, far), 'pool')).toEqual([
      { at: deletedAt, poolKey: system, field: 'pool', from: 'present', to: 'deleted' },
    ]);
    const justBefore = await h.store.poolAt(system, new Date(Date.parse(deletedAt) - 1).toISOString());
    expect(justBefore?.summary.deletedAt).toBeUndefined();
    expect(gone.instances).toEqual(justBefore?.instances);
    expect(gone.instances.length).toBeGreaterThan(0);
    // Its objects' later changes (the AzureMachinePool, its machines) record nothing more.
    await new Promise((r) => setTimeout(r, 1000));
    expect(field(await h.store.timeline(system, ago, far), 'pool')).toHaveLength(1);

    // Stopped; meanwhile spot is deleted and system comes back under its name.
    await first.stop();
    const spotMp = h.sim.kube.cluster('mgmt-weu').store.get(mpDef(), 'default', 'spot');
    deleteMp(h, 'spot');
    createMpAgain(h, systemMp);
    const h2 = await harness('', 1, h.dbFile, h.sim);
    await h2.start();
    const spotGone = await deletedState(h2, spot);
    expect(field(await h2.store.timeline(spot, ago, far), 'pool')).toEqual([
      expect.objectContaining({ from: 'present', to: 'deleted', at: spotGone.summary.deletedAt }),
    ]);
    const back = await until('system back', async () => {
      const p = await h2.store.currentPool(system);
      return p && !p.summary.deletedAt ? p : undefined;
    });
    expect(field(await h2.store.timeline(system, ago, far), 'pool').map((e) => `${e.from}→${e.to}`)).toEqual([
      'present→deleted',
      'deleted→present',
    ]);
    expect(back.summary.ref.name).toBe('system');
    // The other pools were never taken for deleted.
    for (const p of await h2.store.currentPools())
      if (p.summary.key !== spot) expect(p.summary.deletedAt, p.summary.key).toBeUndefined();

    // Retention drops spot whole and the collector forgets it: a MachinePool of its name is then a new pool.
    const dropped: string[] = [];
    await h2.store.prune(new Date(Date.parse(spotGone.summary.deletedAt as string) + 1).toISOString(), {
      onDropped: (k) => {
        dropped.push(k);
        h2.collector.forget(k);
      },
    });
    expect(dropped).toEqual([spot]);
    expect(await h2.store.currentPool(spot)).toBeNull();
    createMpAgain(h2, spotMp);
    const anew = await until('spot stored anew', async () => (await h2.store.currentPool(spot)) ?? undefined);
    expect(anew.summary.deletedAt).toBeUndefined();
    expect(field(await h2.store.timeline(spot, ago, far), 'pool')).toEqual([]);
  }, 60_000);
});

describe('contexts no longer watched', () => {
  it('records the pools of a context left out of the configuration, keeps them, and follows them again when it is back', async () => {
    const h = await harness('demo.yaml', 1);
    const both = ['mgmt-weu', 'mgmt-neu'];
    const first = await h.start({ contexts: both });
    const [weu, neu] = ['mgmt-weu/default/system', 'mgmt-neu/default/general'];
    await until('pools of both contexts stored', async () =>
      (await h.store.currentPool(weu)) && (await h.store.currentPool(neu)) ? true : undefined,
    );
    await first.stop();

    // Restarted watching mgmt-weu only: mgmt-neu's pools are recorded as no longer watched, its last state kept.
    const h2 = await harness('', 1, h.dbFile, h.sim);
    await h2.start({ contexts: ['mgmt-weu'] });
    const away = await until('general recorded unwatched', async () => {
      const p = await h2.store.currentPool(neu);
      return p?.summary.unwatchedSince ? p : undefined;
    });
    expect(away.summary.deletedAt).toBeUndefined();
    expect(away.instances.length).toBeGreaterThan(0);
    expect(field(await h2.store.timeline(neu, ago, far), 'pool')).toEqual([
      { at: away.summary.unwatchedSince, poolKey: neu, field: 'pool', from: 'present', to: 'unwatched' },
    ]);
    for (const p of await h2.store.currentPools()) {
      expect(Boolean(p.summary.unwatchedSince), p.summary.key).toBe(p.summary.ref.context === 'mgmt-neu');
      expect(p.summary.deletedAt, p.summary.key).toBeUndefined();
    }
    await h2.collector.stop();

    // Watched again: followed again.
    const h3 = await harness('', 1, h.dbFile, h.sim);
    await h3.start({ contexts: both });
    await until('general watched again', async () => {
      const p = await h3.store.currentPool(neu);
      return p && !p.summary.unwatchedSince ? p : undefined;
    });
    expect(field(await h3.store.timeline(neu, ago, far), 'pool').map((e) => `${e.from}→${e.to}`)).toEqual([
      'present→unwatched',
      'unwatched→present',
    ]);
  }, 60_000);
});

describe('cadence', () => {
  it("waits its cadence between cycles (DEFAULT_CYCLE_MS unless set), a few ms after a change someone made, none while pools wait beyond a cycle's share, and longer after refused writes", () => {
    const bare = (cycleMs?: number) =>
      new Collector({
        kubeconfig: new KubeConfig(),
        contexts: [],
        store: {} as never,
        azure: {} as never,
        scheduler: {} as never,
        ...(cycleMs ? { cycleMs } : {}),
      });
    type Inside = {
      nextDelay(): number;
      urgent: Set<string>;
      dirty: Set<string>;
      backlog: boolean;
      failedWrites: number;
    };
    expect(bare().cadenceMs).toBe(DEFAULT_CYCLE_MS);
    const c = bare(1234) as unknown as Inside;
    expect(c.nextDelay()).toBe(1234);
    c.urgent.add('ctx/ns/p');
    expect(c.nextDelay()).toBe(10);
    c.urgent.clear();
    c.backlog = true;
    c.dirty.add('ctx/ns/q');
    expect(c.nextDelay()).toBe(0);
    // After writes the store refused: the cadence doubled each time, up to 10 s, whatever waits.
    c.failedWrites = 2;
    expect(c.nextDelay()).toBe(4936);
    c.failedWrites = 10;
    expect(c.nextDelay()).toBe(10_000);
  });
});

describe('Events around a restart', () => {
  it('checks only the Events from around the last stored cycle against the timeline, and remembers no later one', async () => {
    const store = await openStore({
      sqlitePath: path.join(mkdtempSync(path.join(os.tmpdir(), 'poolscope-events-')), 'db.sqlite'),
    });
    cleanups.push(() => store.close());
    const now = Date.parse('2026-12-02T10:00:00Z');
    const col = new Collector({
      kubeconfig: new KubeConfig(),
      contexts: [],
      store,
      azure: {} as never,
      scheduler: {} as never,
      now: () => now,
      cycleMs: 3_600_000,
    });
    await col.start();
    cleanups.push(() => col.stop());
    const c = col as unknown as {
      onPoolEvent(ctx: string, pools: string[], ev: object): Promise<void>;
      events: { recorded: Map<string, unknown> };
      pendingEvents: Map<string, object[]>;
    };
    const ev = (uid: string, time: number) => ({
      uid,
      reason: 'Scaled',
      message: `m-${uid}`,
      type: 'Normal',
      object: 'MachinePool/p',
      time: new Date(time).toISOString(),
      count: 1,
    });
    // From around the start (no cycle stored: the start is the last): checked against the pool's timeline once,
    // and a second delivery of the same entry is not queued again.
    await c.onPoolEvent('ctx', ['ns/p'], ev('a', now - 60_000));
    await c.onPoolEvent('ctx', ['ns/p'], ev('a', now - 60_000));
    expect(c.events.recorded.size).toBe(1);
    expect(c.pendingEvents.get('ctx/ns/p')).toHaveLength(1);
    // Hours later: new by then (the source tells replays apart); queued, no timeline read, nothing remembered.
    for (const p of ['ns/q', 'ns/p']) await c.onPoolEvent('ctx', [p], ev('b', now + 3 * 3_600_000));
    expect(c.events.recorded.size).toBe(1);
    expect(c.pendingEvents.get('ctx/ns/q')).toHaveLength(1);
    expect(c.pendingEvents.get('ctx/ns/p')).toHaveLength(2);
    // From long before the restart: not recorded at all.
    await c.onPoolEvent('ctx', ['ns/r'], ev('c', now - 3 * 3_600_000));
    expect(c.pendingEvents.has('ctx/ns/r')).toBe(false);
  });
});

describe('starting from the environment', () => {
  it('runs from exactly the settings in the simulator env file (KUBECONFIG, AZURE_*, ARM endpoint)', async () => {
    const sim = await startSimulation(readScenario(path.join(SCENARIOS, 's04-one-vm-failed-main.yaml')), {
      log: () => {},
    });
    cleanups.push(() => sim.stop());
    const saved = { ...process.env };
    const dbDir = mkdtempSync(path.join(os.tmpdir(), 'poolscope-env-'));
    Object.assign(process.env, sim.env, { POOLSCOPE_DB_PATH: path.join(dbDir, 'db.sqlite'), POOLSCOPE_CONTEXTS: '*' });
    try {
      const rt = await startRuntime(parseEnv(process.env));
      cleanups.push(() => rt.stop());
      const d = await until('the pool to be stored', async () => {
        const p = await rt.store.currentPool(POOL);
        return p?.sources.azure.state === 'ok' ? p : undefined;
      });
      expect(d.findings.map((f) => f.code)).toEqual(['readiness-gate-frozen', 'vmss-failed', 'instance-failed']);
      // The CAPZ version comes from the controller's image, and the diagnosis speaks of that version's rules.
      expect(d.summary.capzVersion).toBe('main');
      expect(d.findings[0]?.detail).toContain('CAPZ builds with #6488 (main)');
    } finally {
      process.env = saved;
    }
  }, 30_000);
});
