// AKS pools in a management cluster, read by the real client against the simulated API server: the kinds are
// found by discovery, an AzureManagedMachinePool's and an AzureASOManagedMachinePool's pool get their infra object
// and ASO's agent pool object in their input, a Node of their agent pool joins them before any list names it,
// a change to ASO's object or to such a Node re-analyses its pool, and kinds served only later are watched then.

import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzePool } from '@/lib/analyze';
import { buildAksPool } from '@/lib/fixtures/aks-pool';
import { makeNode } from '@/lib/fixtures/objects';
import type { PoolInput } from '@/lib/pool-model';
import type { KubeObject } from '@/lib/unstructured';
import { findByKind, type ResourceDef } from '@/sim/kube/resources';
import { startKubeSimulator, type KubeSimulator } from '@/sim/kube/simulator';
import { seedObjects } from '@/sim/kube/testing';
import { until } from '../testing/sim-harness';
import { aksKindsOf } from './aks-kinds';
import { ContextSource } from './context-source';

/** The objects of an AKS pool's input: for the management cluster, and the Nodes for the workload cluster. */
function objectsOf(input: PoolInput): { management: KubeObject[]; nodes: KubeObject[] } {
  const aso = input.aks?.asoAgentPool;
  return {
    management: [input.machinePool, input.aks?.infra as KubeObject, ...(aso && 'kind' in aso ? [aso] : [])],
    nodes: input.workload?.state === 'ok' ? input.workload.nodes : [],
  };
}

describe('ContextSource with AKS pools', () => {
  let sim: KubeSimulator;
  let source: ContextSource;
  const changed: string[][] = [];
  const events: { pools: string[]; reason: string }[] = [];
  // Pool aks1 (AMMP) lists instances 0 and 1; its agent pool has a third Node the lists do not name yet.
  const ammp = objectsOf(
    buildAksPool({ flavour: 'aks-managed', name: 'aks1', clusterName: 'prod-weu', mpList: [0, 1], nodes: [0, 1, 2] }),
  );
  const asomp = objectsOf(
    buildAksPool({ flavour: 'aks-aso', name: 'aks2', agentPool: 'user2', clusterName: 'prod-weu', mpList: [0] }),
  );

  beforeAll(async () => {
    const seed = seedObjects();
    sim = await startKubeSimulator({
      clusters: [
        {
          name: 'mgmt-weu',
          role: 'management',
          objects: [...seed.management, ...ammp.management, ...asomp.management],
        },
        { name: 'prod-weu', role: 'workload', objects: [...seed.nodes, ...ammp.nodes, ...asomp.nodes] },
      ],
      log: () => {},
    });
    const kc = new KubeConfig();
    kc.loadFromFile(sim.kubeconfigPath);
    kc.setCurrentContext('mgmt-weu');
    source = new ContextSource(
      'mgmt-weu',
      kc,
      (pools) => changed.push(pools),
      (pools, e) => events.push({ pools, reason: e.reason }),
      100,
    );
    await source.start();
    await until('the workload cluster live', () =>
      source.health().find((h) => h.kind === 'workload')?.state === 'live' ? true : undefined,
    );
  });
  afterAll(async () => {
    source.stop();
    await sim.stop();
  });

  it('finds the AKS kinds the cluster serves', () => {
    expect(source.aksKinds).toEqual({ ammp: true, asomp: 'v1beta1', asoap: 'v1api20250801' });
  });

  it("gives an AzureManagedMachinePool's pool its infra object, ASO's agent pool and its agent pool's Nodes", () => {
    const input = source.poolInput('default/aks1') as PoolInput;
    expect(input.azureMachinePool).toBeNull();
    expect(input.aks?.infra?.kind).toBe('AzureManagedMachinePool');
    expect((input.aks?.asoAgentPool as KubeObject).metadata?.name).toBe('aks1');
    const d = analyzePool(input, { now: new Date().toISOString() });
    expect(d.summary.flavour).toBe('aks-managed');
    expect(d.notes.join(' ')).not.toMatch(/No Azure/);
    // The third Node joins by its label: live, in neither list.
    expect(d.drift.map((x) => x.kind).sort()).toEqual(['missing-from-azuremachinepool', 'missing-from-machinepool']);
  });

  it("gives an AzureASOManagedMachinePool's pool the agent pool object it embeds", () => {
    const input = source.poolInput('default/aks2') as PoolInput;
    expect(input.aks?.infra?.kind).toBe('AzureASOManagedMachinePool');
    expect((input.aks?.asoAgentPool as KubeObject).metadata?.name).toBe('prod-weu-user2');
    expect(analyzePool(input, { now: new Date().toISOString() }).summary.flavour).toBe('aks-aso');
  });

  it("re-analyses the pool when ASO's agent pool object or a Node of its agent pool changes", async () => {
    const server = sim.cluster('mgmt-weu');
    const AP = findByKind('containerservice.azure.com/v1api20250801', 'ManagedClustersAgentPool') as ResourceDef;
    changed.length = 0;
    const ap = server.store.get(AP, 'default', 'prod-weu-user2');
    server.store.update(AP, 'default', 'prod-weu-user2', { ...ap, metadata: { ...ap.metadata, labels: { x: '1' } } });
    await until('aks2 re-analysed', () => (changed.some((p) => p.includes('default/aks2')) ? true : undefined));

    changed.length = 0;
    const NODE = findByKind('v1', 'Node') as ResourceDef;
    const node = makeNode({
      name: 'aks-user2-vmss000009',
      providerID:
        'azure:///subscriptions/s/resourceGroups/mc_rg/providers/Microsoft.Compute/virtualMachineScaleSets/aks-user2-vmss/virtualMachines/9',
      clusterName: 'prod-weu',
      labels: { 'kubernetes.azure.com/agentpool': 'user2' },
    });
    sim.cluster('prod-weu').store.create(NODE, undefined, node);
    await until('aks2 re-analysed for its Node', () =>
      changed.some((p) => p.includes('default/aks2')) ? true : undefined,
    );
    expect(changed.flat()).not.toContain('default/aks1');
  });

  it("takes an Event about an AzureManagedMachinePool as its pool's", async () => {
    const EVENT = findByKind('v1', 'Event') as ResourceDef;
    const now = new Date().toISOString();
    sim.cluster('mgmt-weu').store.create(EVENT, 'default', {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'aks1.1', namespace: 'default' },
      involvedObject: {
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
        kind: 'AzureManagedMachinePool',
        name: 'aks1',
        namespace: 'default',
      },
      reason: 'ReconcileError',
      message: 'agentpools failed to create or update',
      type: 'Warning',
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
    });
    await until('the Event delivered', () => (events.some((e) => e.reason === 'ReconcileError') ? true : undefined));
    expect(events.find((e) => e.reason === 'ReconcileError')?.pools).toEqual(['default/aks1']);
  });
});

describe('ContextSource on a cluster that serves the AKS kinds only later', () => {
  it('watches them once they are served, and its AKS pools get their infra object then', async () => {
    const pool = objectsOf(
      buildAksPool({ flavour: 'aks-managed', name: 'aks1', clusterName: 'prod-weu', mpList: [0] }),
    );
    const seed = seedObjects();
    const sim = await startKubeSimulator({
      clusters: [{ name: 'mgmt-weu', role: 'management', objects: [...seed.management, ...pool.management] }],
      log: () => {},
    });
    // CAPZ's AKS CRDs and ASO not installed yet.
    const aksResources = [
      'infrastructure.cluster.x-k8s.io/azuremanagedmachinepools',
      'infrastructure.cluster.x-k8s.io/azureasomanagedmachinepools',
      'containerservice.azure.com/managedclustersagentpools',
    ];
    for (const r of aksResources) sim.cluster('mgmt-weu').hidden.add(r);
    const kc = new KubeConfig();
    kc.loadFromFile(sim.kubeconfigPath);
    kc.setCurrentContext('mgmt-weu');
    const changed: string[][] = [];
    // A refresh tick of 20 ms: the kinds are looked for again every 100 ms.
    const source = new ContextSource(
      'mgmt-weu',
      kc,
      (pools) => changed.push(pools),
      () => {},
      20,
    );
    try {
      await source.start();
      await until('the MachinePools listed', () => (source.poolInput('default/aks1') ? true : undefined));
      expect(source.aksKinds).toEqual({ ammp: false, asomp: null, asoap: null });
      expect(source.poolInput('default/aks1')?.aks?.infra ?? null).toBeNull();
      sim.cluster('mgmt-weu').hidden.clear();
      const input = await until('the AzureManagedMachinePool read', () => {
        const i = source.poolInput('default/aks1');
        return i?.aks?.infra && i.aks.asoAgentPool && 'kind' in i.aks.asoAgentPool ? i : undefined;
      });
      expect(input.aks?.infra?.kind).toBe('AzureManagedMachinePool');
      expect(source.aksKinds).toEqual({ ammp: true, asomp: 'v1beta1', asoap: 'v1api20250801' });
      expect(changed.some((pools) => pools.includes('default/aks1'))).toBe(true);
    } finally {
      source.stop();
      await sim.stop();
    }
  }, 30_000);
});

describe('aksKindsOf', () => {
  const groups = (names: Record<string, string[]>) =>
    Object.entries(names).map(([name, versions]) => ({
      name,
      versions: versions.map((version) => ({ version })),
      preferredVersion: { version: versions[versions.length - 1] as string },
    }));

  it('finds none on a cluster without CAPZ’s AKS kinds or ASO', () => {
    const k = aksKindsOf(
      groups({ 'infrastructure.cluster.x-k8s.io': ['v1beta1'] }),
      () => ['azuremachinepools', 'azuremachinepoolmachines'],
      () => null,
    );
    expect(k).toEqual({ ammp: false, asomp: null, asoap: null });
  });

  it('reads an ASO-MP at v1alpha1 where v1beta1 does not serve it (CAPZ before v1.20)', () => {
    const k = aksKindsOf(
      groups({
        'infrastructure.cluster.x-k8s.io': ['v1alpha1', 'v1beta1'],
        'containerservice.azure.com': ['v1api20231001'],
      }),
      (v) => (v === 'v1alpha1' ? ['azureasomanagedmachinepools'] : ['azuremanagedmachinepools']),
      () => ['managedclustersagentpools', 'managedclusters'],
    );
    expect(k).toEqual({ ammp: true, asomp: 'v1alpha1', asoap: 'v1api20231001' });
  });
});
