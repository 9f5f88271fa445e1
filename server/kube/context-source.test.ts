// A management cluster source against the simulator: workload clusters' kubeconfig Secrets are re-read rarely
// while their Node informer is live (each read is a TLS connection), at once when it is not, and a rotated
// Secret restarts the informer with the new kubeconfig.

import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { AMPM_POOL_LABEL } from '@/lib/slim';
import { startSeedSimulator } from '@/sim/kube/testing';
import type { KubeSimulator } from '@/sim/kube/simulator';
import { findByKind, type ResourceDef } from '@/sim/kube/resources';
import { until } from '../testing/sim-harness';
import { ContextSource, REFRESH_EVERY_TICKS } from './context-source';

const TICK_MS = 100;

describe('ContextSource workload clusters', () => {
  let sim: KubeSimulator;
  let source: ContextSource | null = null;
  beforeAll(async () => {
    sim = await startSeedSimulator();
  });
  afterAll(async () => {
    source?.stop();
    await sim.stop();
  });

  /** A fresh source on the management cluster (the one before stopped), calling `onChange` with the pools changed. */
  const restart = async (
    onChange: ConstructorParameters<typeof ContextSource>[2],
    onEvent: ConstructorParameters<typeof ContextSource>[3] = () => {},
  ): Promise<ContextSource> => {
    source?.stop();
    const kc = new KubeConfig();
    kc.loadFromFile(sim.kubeconfigPath);
    kc.setCurrentContext('mgmt-weu');
    source = new ContextSource('mgmt-weu', kc, onChange, onEvent, TICK_MS);
    await source.start();
    // start() returns at once: every kind listed (the management cluster live) before the test acts.
    const started = source;
    await until('every kind listed', () => (started.health()[0]?.state === 'live' ? true : undefined));
    return source;
  };

  it("re-reads a live cluster's Secret only every few ticks, a failing one every tick, and follows a rotation", async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(sim.kubeconfigPath);
    kc.setCurrentContext('mgmt-weu');
    source = new ContextSource(
      'mgmt-weu',
      kc,
      () => {},
      () => {},
      TICK_MS,
    );
    await source.start();
    const workload = () => source?.health().find((h) => h.kind === 'workload');
    await until('the workload cluster live', () => (workload()?.state === 'live' ? true : undefined));

    const server = sim.cluster('mgmt-weu');
    const SECRET = findByKind('v1', 'Secret') as ResourceDef;
    const gets = () => server.requestCounts.get('get') ?? 0;
    // Live: over 4 rounds of REFRESH_EVERY_TICKS ticks, one Secret and one Deployment get per round (and the
    // Deployment's fallback list, which is not a get), not one per tick.
    const g0 = gets();
    await new Promise((r) => setTimeout(r, TICK_MS * REFRESH_EVERY_TICKS * 4));
    const perRound = (gets() - g0) / 4;
    expect(perRound).toBeGreaterThan(0);
    expect(perRound).toBeLessThanOrEqual(2.5);

    // Rotation to a kubeconfig whose token the workload cluster rejects: the informer restarts with it and fails.
    const secret = server.store.get(SECRET, 'default', 'prod-weu-kubeconfig');
    const good = Buffer.from(String((secret.data as { value?: string } | undefined)?.value), 'base64').toString('utf8');
    const doc = parse(good) as { users: { user: { token: string } }[] };
    (doc.users[0] as { user: { token: string } }).user.token = 'rotated-and-wrong';
    const write = (yaml: string) => {
      const cur = server.store.get(SECRET, 'default', 'prod-weu-kubeconfig');
      server.store.update(SECRET, 'default', 'prod-weu-kubeconfig', {
        ...cur,
        data: { value: Buffer.from(yaml).toString('base64') },
      });
    };
    write(stringify(doc));
    await until(
      'the rotated kubeconfig in use',
      () => (workload()?.state === 'stale' ? true : undefined),
      TICK_MS * REFRESH_EVERY_TICKS * 20,
    );
    expect(workload()?.error).toMatch(/401|Unauthorized/i);

    // Not live: its Secret is read on every tick, so the fix is picked up within a tick or two.
    const g1 = gets();
    await new Promise((r) => setTimeout(r, TICK_MS * 3.5));
    expect(gets() - g1).toBeGreaterThanOrEqual(2);
    write(good);
    await until('live again', () => (workload()?.state === 'live' ? true : undefined), TICK_MS * 30);
  }, 20_000);

  it('gives a pool its own Nodes and tells it only of their changes', async () => {
    const changed: string[][] = [];
    const src = await restart((pools) => changed.push(pools));
    const input = () => src.poolInput('default/pool0');
    const nodeNames = () => {
      const w = input()?.workload;
      return w?.state === 'ok' ? w.nodes.map((n) => String(n.metadata?.name)).sort() : undefined;
    };
    const own = await until("the pool's Nodes", () => nodeNames());
    expect(own.length).toBeGreaterThan(0);

    const server = sim.cluster('mgmt-weu');
    const workload = sim.cluster('prod-weu').store;
    const NODE = findByKind('v1', 'Node') as ResourceDef;
    const MP = findByKind('cluster.x-k8s.io/v1beta2', 'MachinePool') as ResourceDef;
    const mp = server.store.get(MP, 'default', 'pool0');
    const ownId = String((mp.spec?.providerIDList as string[])[0]);
    // A Node of another scale set in the same cluster: not this pool's, and its arrival does not concern it.
    const foreignId = ownId.replace(/virtualMachineScaleSets\/[^/]+/, 'virtualMachineScaleSets/other-pool');
    expect(foreignId).not.toBe(ownId);
    changed.length = 0;
    workload.create(NODE, undefined, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'foreign-0' },
      spec: { providerID: foreignId },
    });
    await until('the foreign Node seen', () => (changed.length > 0 ? true : undefined));
    await new Promise((r) => setTimeout(r, 200));
    expect(changed.flat()).not.toContain('default/pool0');
    expect(nodeNames()).toEqual(own);
    // Once the MachinePool's list names it (case aside), it is the pool's business.
    server.store.update(MP, 'default', 'pool0', {
      ...mp,
      spec: { ...mp.spec, providerIDList: [...(mp.spec?.providerIDList as string[]), foreignId.toUpperCase()] },
    });
    await until("the foreign Node in the pool's input", () => (nodeNames()?.includes('foreign-0') ? true : undefined));
    changed.length = 0;
    const n = workload.get(NODE, undefined, 'foreign-0');
    workload.update(NODE, undefined, 'foreign-0', {
      ...n,
      spec: { ...n.spec, taints: [{ key: 'k', effect: 'NoSchedule' }] },
    });
    await until('the pool told of its change', () => (changed.flat().includes('default/pool0') ? true : undefined));
  });

  it('tells a pool which pool has the other scale set its list names', async () => {
    const src = await restart(() => {});
    await until('the pool listed', () => src.poolInput('default/pool0') ?? undefined);
    // An earlier test left an ID of a scale set no pool has in pool0's list: named by no pool.
    expect(src.poolInput('default/pool0')?.otherScaleSetPools ?? {}).toEqual({});
    const server = sim.cluster('mgmt-weu');
    const MP = findByKind('cluster.x-k8s.io/v1beta2', 'MachinePool') as ResourceDef;
    const AMP = findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureMachinePool') as ResourceDef;
    // pool1: a second pool of the same cluster with a scale set of its own.
    const amp = server.store.get(AMP, 'default', 'pool0');
    const otherScaleSet = String(amp.spec?.providerID).replace(
      /virtualMachineScaleSets\/[^/]+$/,
      'virtualMachineScaleSets/pool1',
    );
    server.store.create(AMP, 'default', {
      ...amp,
      metadata: { name: 'pool1', namespace: 'default' },
      spec: { ...amp.spec, providerID: otherScaleSet, providerIDList: [] },
    });
    const mp = server.store.get(MP, 'default', 'pool0');
    const template = mp.spec?.template as { spec: { infrastructureRef: Record<string, unknown> } };
    server.store.create(MP, 'default', {
      ...mp,
      metadata: { name: 'pool1', namespace: 'default' },
      spec: {
        ...mp.spec,
        providerIDList: [],
        template: {
          ...template,
          spec: { ...template.spec, infrastructureRef: { ...template.spec.infrastructureRef, name: 'pool1' } },
        },
      },
    });
    await until('pool1 listed', () => src.poolInput('default/pool1') ?? undefined);
    // pool0's list now also names pool1's instance 3.
    const cur = server.store.get(MP, 'default', 'pool0');
    server.store.update(MP, 'default', 'pool0', {
      ...cur,
      spec: {
        ...cur.spec,
        providerIDList: [...(cur.spec?.providerIDList as string[]), `${otherScaleSet}/virtualMachines/3`],
      },
    });
    const [, sub, rg] = /subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\//i.exec(otherScaleSet) ?? [];
    const key = `${sub}/${rg}/pool1`.toLowerCase();
    expect(await until('the other pool named', () => src.poolInput('default/pool0')?.otherScaleSetPools?.[key])).toBe(
      'default/pool1',
    );
    expect(src.poolInput('default/pool1')?.otherScaleSetPools).toBeUndefined();
  }, 20_000);

  it("keeps a pool's AMPMs in their place when one is updated in the pool, and moves one relabelled to another pool", async () => {
    const src = await restart(() => {});
    const ampms = () => src.poolInput('default/pool0')?.azureMachinePoolMachines ?? [];
    const names = () => ampms().map((o) => String(o.metadata?.name));
    const before = await until("the pool's AMPMs", () => (names().length > 1 ? names() : undefined));
    const server = sim.cluster('mgmt-weu');
    const AMPM = findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureMachinePoolMachine') as ResourceDef;
    const first = before[0] as string;
    const cur = server.store.get(AMPM, 'default', first);
    server.store.update(
      AMPM,
      'default',
      first,
      { ...cur, status: { ...cur.status, provisioningState: 'Failed' } },
      { subresource: 'status' },
    );
    await until('the update seen', () =>
      ampms().find((o) => o.metadata?.name === first)?.status?.provisioningState === 'Failed' ? true : undefined,
    );
    // The index was left as it was (it holds the key string the cache holds): same members, same order.
    expect(names()).toEqual(before);
    const moved = server.store.get(AMPM, 'default', first);
    server.store.update(AMPM, 'default', first, {
      ...moved,
      metadata: { ...moved.metadata, labels: { ...moved.metadata?.labels, [AMPM_POOL_LABEL]: 'another-pool' } },
    });
    await until('the relabelled AMPM gone from the pool', () => (names().includes(first) ? undefined : true));
    expect(names()).toEqual(before.slice(1));
  });

  it("remembers the providerID of a pool's AMPM deleted, and when, for the pool's input", async () => {
    const src = await restart(() => {});
    const input = () => src.poolInput('default/pool0');
    const ampms = await until("the pool's AMPMs", () =>
      (input()?.azureMachinePoolMachines?.length ?? 0) > 1 ? input()?.azureMachinePoolMachines : undefined,
    );
    expect(input()?.departedAmpms).toBeUndefined();
    const gone = ampms[0]!;
    const AMPM = findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureMachinePoolMachine') as ResourceDef;
    const t0 = Date.now();
    const server = sim.cluster('mgmt-weu');
    const cur = server.store.get(AMPM, 'default', String(gone.metadata?.name));
    server.store.update(AMPM, 'default', String(gone.metadata?.name), {
      ...cur,
      metadata: { ...cur.metadata, finalizers: [] },
    });
    server.store.delete(AMPM, 'default', String(gone.metadata?.name));
    const departed = await until('the deletion seen', () => input()?.departedAmpms);
    expect(departed.map((d) => d.providerID)).toEqual([
      gone.spec?.providerID ?? (gone as unknown as { providerID: string }).providerID,
    ]);
    expect(departed[0]!.at).toBeGreaterThanOrEqual(t0);
    expect(departed[0]!.at).toBeLessThanOrEqual(Date.now());
  });

  it('holds an Event about an object not seen yet until the object arrives (the two informers race)', async () => {
    const events: { pools: string[]; reason: string; object: string }[] = [];
    const src = await restart(
      () => {},
      (pools, ev) => events.push({ pools, reason: ev.reason, object: ev.object }),
    );
    await until('listed', () => src.poolInput('default/pool0') ?? undefined);
    const server = sim.cluster('mgmt-weu');
    const AMPM = findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureMachinePoolMachine') as ResourceDef;
    const EVENT = findByKind('v1', 'Event') as ResourceDef;
    const now = new Date().toISOString();
    server.store.create(EVENT, 'default', {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'pool0-late.1', namespace: 'default' },
      involvedObject: {
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
        kind: 'AzureMachinePoolMachine',
        name: 'pool0-late',
        namespace: 'default',
      },
      reason: 'FailedVMState',
      message: 'the VM failed',
      type: 'Warning',
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(events).toEqual([]);
    const model = server.store
      .list(AMPM, { namespace: 'default' })
      .items.find((a) => a.metadata?.labels?.[AMPM_POOL_LABEL] === 'pool0');
    expect(model).toBeDefined();
    const { uid: _uid, resourceVersion: _rv, creationTimestamp: _ct, ...meta } = model?.metadata ?? {};
    server.store.create(AMPM, 'default', { ...model, metadata: { ...meta, name: 'pool0-late' } });
    const got = await until('the Event delivered with its object', () => (events.length ? events : undefined));
    expect(got).toEqual([
      { pools: ['default/pool0'], reason: 'FailedVMState', object: 'AzureMachinePoolMachine/pool0-late' },
    ]);
  });

  it("calls a change to a pool's spec or annotations urgent, a controller's status or providerIDList write not", async () => {
    const calls: { pools: string[]; urgent: boolean }[] = [];
    const src = await restart((pools, urgent) => calls.push({ pools, urgent: urgent ?? false }));
    await until('listed', () => src.poolInput('default/pool0') ?? undefined);
    const server = sim.cluster('mgmt-weu');
    const MP = findByKind('cluster.x-k8s.io/v1beta2', 'MachinePool') as ResourceDef;
    const forPool = () => calls.filter((c) => c.pools.includes('default/pool0'));
    calls.length = 0;
    const mp = server.store.get(MP, 'default', 'pool0');
    server.store.update(
      MP,
      'default',
      'pool0',
      { ...mp, status: { ...mp.status, observedGeneration: 99 } },
      { subresource: 'status' },
    );
    await until('the status write', () => (forPool().length > 0 ? true : undefined));
    expect(forPool().every((c) => !c.urgent)).toBe(true);
    // CAPI copying the list (a new generation): the pool's business, not someone's act.
    calls.length = 0;
    const listed = server.store.get(MP, 'default', 'pool0');
    const ids = listed.spec?.providerIDList as string[];
    server.store.update(MP, 'default', 'pool0', {
      ...listed,
      spec: { ...listed.spec, providerIDList: ids.slice(0, -1) },
    });
    await until('the list write', () => (forPool().length > 0 ? true : undefined));
    expect(server.store.get(MP, 'default', 'pool0').metadata?.generation).not.toBe(listed.metadata?.generation);
    expect(forPool().every((c) => !c.urgent)).toBe(true);
    // Someone scaling it (a new generation too): urgent.
    calls.length = 0;
    const scaled = server.store.get(MP, 'default', 'pool0');
    server.store.update(MP, 'default', 'pool0', {
      ...scaled,
      spec: { ...scaled.spec, replicas: Number(scaled.spec?.replicas ?? 0) + 1 },
    });
    await until('the scale', () => (forPool().some((c) => c.urgent) ? true : undefined));
    calls.length = 0;
    const cur = server.store.get(MP, 'default', 'pool0');
    server.store.update(MP, 'default', 'pool0', {
      ...cur,
      metadata: { ...cur.metadata, annotations: { ...cur.metadata?.annotations, 'cluster.x-k8s.io/paused': 'true' } },
    });
    await until('the annotation', () => (forPool().some((c) => c.urgent) ? true : undefined));
  });

  it("tells a pool of its cluster's and its AzureMachinePool's changes, following the MachinePool when it names another, and not once it is gone", async () => {
    const changed: string[][] = [];
    const src = await restart((pools) => changed.push(pools));
    await until('listed', () => src.poolInput('default/pool0') ?? undefined);
    const server = sim.cluster('mgmt-weu');
    const MP = findByKind('cluster.x-k8s.io/v1beta2', 'MachinePool') as ResourceDef;
    const AMP = findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureMachinePool') as ResourceDef;
    const CLUSTER = findByKind('cluster.x-k8s.io/v1beta2', 'Cluster') as ResourceDef;
    const mp = server.store.get(MP, 'default', 'pool0');
    const ampName = String(
      (mp.spec?.template as { spec: { infrastructureRef: { name: string } } }).spec.infrastructureRef.name,
    );
    const clusterName = String(mp.spec?.clusterName);
    const touch = (def: ResourceDef, name: string, note: string) => {
      const cur = server.store.get(def, 'default', name);
      server.store.update(def, 'default', name, {
        ...cur,
        metadata: { ...cur.metadata, annotations: { ...cur.metadata?.annotations, note } },
      });
    };
    const told = async (def: ResourceDef, name: string, note: string) => {
      changed.length = 0;
      touch(def, name, note);
      // Some call follows every change of these kinds (a pool, or none): wait for it, then a little more.
      await new Promise((r) => setTimeout(r, 300));
      return changed.flat().includes('default/pool0');
    };
    expect(await told(AMP, ampName, 'a'), 'the AzureMachinePool').toBe(true);
    expect(await told(CLUSTER, clusterName, 'a'), 'the Cluster').toBe(true);
    // The MachinePool now names another AzureMachinePool (not there yet): changes to the old one are no longer
    // its business, and the new one's arrival is.
    const amp = server.store.get(AMP, 'default', ampName);
    const template = mp.spec?.template as { spec: { infrastructureRef: Record<string, unknown> } };
    const cur = server.store.get(MP, 'default', 'pool0');
    server.store.update(MP, 'default', 'pool0', {
      ...cur,
      spec: {
        ...cur.spec,
        template: {
          ...template,
          spec: { ...template.spec, infrastructureRef: { ...template.spec.infrastructureRef, name: 'pool0-moved' } },
        },
      },
    });
    await until('the move seen', () => (src.scaleSetOf('default/pool0') === null ? true : undefined));
    expect(await told(AMP, ampName, 'b'), 'the old AzureMachinePool').toBe(false);
    changed.length = 0;
    server.store.create(AMP, 'default', { ...amp, metadata: { name: 'pool0-moved', namespace: 'default' } });
    await until("the new AzureMachinePool's arrival told", () =>
      changed.flat().includes('default/pool0') && src.scaleSetOf('default/pool0') !== null ? true : undefined,
    );
    expect(await told(AMP, 'pool0-moved', 'b'), 'the new AzureMachinePool').toBe(true);
    // Gone: its cluster's changes no longer name it.
    const last = server.store.get(MP, 'default', 'pool0');
    server.store.update(MP, 'default', 'pool0', { ...last, metadata: { ...last.metadata, finalizers: [] } });
    server.store.delete(MP, 'default', 'pool0');
    await until('the MachinePool gone', () => (src.poolInput('default/pool0') ? undefined : true));
    expect(await told(CLUSTER, clusterName, 'b'), 'the Cluster').toBe(false);
  });
});
