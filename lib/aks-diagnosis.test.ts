// The AKS operator scenarios (docs/domain.md, "AKS operator scenarios", K1–K10, and "What a resync can and cannot
// do for AKS pools"): each state as the objects would stand, and what the diagnosis and the verdict say of it.
// K7 (a perpetual diff that makes the pool flap) is told from the drops each analysis takes over from the one before.

import { describe, expect, it } from 'vitest';
import { normaliseMachines } from './aks-model';
import { analyzePool } from './analyze';
import type { Finding, PoolDetail } from './api-types';
import { aksVmProviderId } from './fixtures/aks-objects';
import { buildAksPool, type AksPoolSpec } from './fixtures/aks-pool';
import { makeMachinePool, minutesBefore, NOW } from './fixtures/objects';

const AT = new Date(Date.parse(NOW) + 2 * 60_000).toISOString();

function analyse(spec: AksPoolSpec, now = AT): PoolDetail {
  return analyzePool(buildAksPool(spec), { now, previous: null });
}

function finding(d: PoolDetail, code: Finding['code']): Finding {
  const f = d.findings.find((x) => x.code === code);
  if (!f) throw new Error(`no ${code} among ${d.findings.map((x) => x.code).join(', ')}`);
  return f;
}

const codes = (d: PoolDetail) => d.findings.map((f) => f.code);
const kinds = (d: PoolDetail) => d.drift.map((x) => x.kind).sort();
const READY = { type: 'Ready', status: 'True' } as const;
const RECONCILING = { type: 'Ready', status: 'False', reason: 'Reconciling', severity: 'Info' } as const;

describe('an AKS pool', () => {
  it('is told by its infrastructureRef kind, and its summary says which', () => {
    expect(analyse({ flavour: 'aks-aso', mpList: [0] }).summary.flavour).toBe('aks-aso');
    expect(analyse({ flavour: 'aks-managed', mpList: [0] }).summary.flavour).toBe('aks-managed');
  });

  it('without its infra object found is not diagnosed as a self-managed pool missing its AzureMachinePool', () => {
    const input = buildAksPool({ flavour: 'aks-managed', mpList: [0, 1] });
    const d = analyzePool({ ...input, aks: {} }, { now: AT });
    expect(d.notes).toContain("No AzureManagedMachinePool was found for this MachinePool's infrastructureRef.");
    expect(d.notes.join(' ')).not.toMatch(/AzureMachinePool\b/);
    expect(codes(d)).not.toContain('readiness-gate-frozen');
    expect(d.verdict.reconcile).toMatchObject({
      allowed: false,
      reason: expect.stringMatching(/AzureManagedMachinePool/),
    });
  });

  it('whose every source agrees is healthy, and a list copy is never offered', () => {
    const d = analyse({
      flavour: 'aks-aso',
      mpList: [0, 1, 2],
      aso: { ready: READY, state: { count: 3 } },
      live: { count: 3 },
    });
    expect(codes(d)).toEqual(['healthy']);
    expect(d.drift).toEqual([]);
    expect(d.verdict.syncProviderIds.allowed).toBe(false);
    expect(d.verdict.syncProviderIds.reason).toMatch(/freezes with the MachinePool's/);
  });

  it('without an AKS read is healthy when the lists agree with the Nodes, saying AKS is known from ASO', () => {
    const d = analyse({ flavour: 'aks-aso', mpList: [0, 1], aso: { state: { count: 2 } } });
    expect(codes(d)).toEqual(['healthy']);
    expect(finding(d, 'healthy').detail).toMatch(/as far as ASO's copy of the agent pool says/);
  });

  it('without an AKS read still reports drift against the Nodes', () => {
    const d = analyse({ flavour: 'aks-aso', mpList: [0, 1], nodes: [0, 1, 2], aso: { state: { count: 3 } } });
    expect(codes(d)).toContain('sources-disagree');
  });

  it('with AKS throttling reports staleness, and no drift on AKS’s account', () => {
    const d = analyse({
      flavour: 'aks-managed',
      mpList: [0, 1],
      live: { state: 'throttled', error: 'Too many requests', retryAfterSeconds: 30 },
    });
    expect(finding(d, 'azure-unread')).toMatchObject({ severity: 'warning' });
    expect(finding(d, 'azure-unread').summary).toMatch(/AKS is throttling/);
    expect(d.drift).toEqual([]);
  });

  it('with ASO’s agent pool missing still compares the lists with the Nodes', () => {
    const d = analyse({ flavour: 'aks-aso', mpList: [0, 1], nodes: [0, 1, 2], aso: 'missing', live: { count: 3 } });
    expect(kinds(d)).toEqual(['missing-from-azuremachinepool', 'missing-from-machinepool']);
    expect(codes(d)).toContain('sources-disagree');
    expect(finding(d, 'sources-disagree').summary).toMatch(/not in the AzureASOManagedMachinePool list/);
  });
  it('with ASO’s agent pool missing and so AKS not asked, says nothing is known of AKS, and keeps the drift', () => {
    const d = analyse({ flavour: 'aks-aso', mpList: [0, 1], nodes: [0, 1, 2], aso: 'missing' });
    expect(finding(d, 'azure-unread').summary).toMatch(
      /ManagedClustersAgentPool .* is missing: nothing is known of AKS/,
    );
    expect(kinds(d)).toEqual(['missing-from-azuremachinepool', 'missing-from-machinepool']);
    // With ASO's object there, an unread AKS is only not read yet: nothing to say.
    expect(codes(analyse({ flavour: 'aks-aso', mpList: [0, 1], nodes: [0, 1] }))).not.toContain('azure-unread');
  });

  it('of type VirtualMachines, its machines not read, says how to list its VMs, and keeps the drift', () => {
    const live = { count: 3, type: 'virtualmachines' };
    const d = analyse({ flavour: 'aks-aso', mpList: [0, 1], nodes: [0, 1, 2], live });
    expect(finding(d, 'azure-unread')).toMatchObject({
      severity: 'info',
      summary:
        "Agent pool pool1 is of type VirtualMachines, with no scale set, and AKS's list of its machines is not read yet: its VMs are not known now.",
    });
    expect(finding(d, 'azure-unread').suggestedAction).toMatch(
      /`az aks machine list --subscription [0-9a-f-]{36} -g prod-weu --cluster-name aks-weu --nodepool-name pool1` lists them\.$/,
    );
    expect(finding(d, 'azure-unread').detail).not.toMatch(/outside CAPZ/);
    expect(kinds(d)).toEqual(['missing-from-azuremachinepool', 'missing-from-machinepool']);
    const input = buildAksPool({ flavour: 'aks-managed', mpList: [0, 1], live: { count: 2, type: 'AvailabilitySet' } });
    const down = analyzePool(
      { ...input, azure: { state: 'throttled', error: 'Too many requests', retryAfterSeconds: 9 } },
      { now: AT },
    );
    expect(finding(down, 'azure-unread')).toMatchObject({
      severity: 'warning',
      summary: expect.stringMatching(/of type AvailabilitySet, with no scale set, and AKS's list .* is throttled/),
      detail: expect.stringMatching(/AKS answered: Too many requests\. .*made or changed outside CAPZ/),
    });
    // A pool of scale sets, or of a type poolscope does not know, is only not read yet: nothing to say.
    for (const type of ['VirtualMachineScaleSets', 'SomethingNew'])
      expect(codes(analyse({ flavour: 'aks-aso', mpList: [0, 1], live: { count: 2, type } }))).not.toContain(
        'azure-unread',
      );
  });

  it("of type VirtualMachines, its machines read: each VM is Azure's, one without a Node and unlisted is drift", () => {
    const input = buildAksPool({ flavour: 'aks-aso', mpList: [0, 1], live: { count: 3, type: 'VirtualMachines' } });
    const vm = (n: number) =>
      aksVmProviderId({ clusterName: 'aks-weu', agentPool: 'pool1', instanceId: n }).slice('azure://'.length);
    const machines = [0, 1, 2].map((n) => ({ name: `vm${n}`, properties: { resourceId: vm(n) } }));
    const d = analyzePool({ ...input, azure: normaliseMachines([...machines, { name: 'x' }], AT) }, { now: AT });
    expect(d.sources.azure.state).toBe('ok');
    expect(codes(d)).not.toContain('azure-unread');
    expect(d.instances.filter((r) => r.sources.azure)).toHaveLength(3);
    // The list says nothing of a VM's state: no count of succeeded or failed VMs, rather than none.
    expect(d.summary.replicas).toMatchObject({ azureInstances: 3, azureSucceeded: null, azureFailed: null });
    expect(d.drift.map((x) => [x.kind, x.providerID?.split('/').pop()])).toEqual([['missing-from-machinepool', '2']]);
    expect(d.notes).toContain('AKS listed a machine without properties.resourceId; it was skipped.');
  });
});

describe('K1: a scale CAPZ asked for, through ASO', () => {
  const k1 = (flavour: AksPoolSpec['flavour']): AksPoolSpec => ({
    flavour,
    replicas: 5,
    mpList: [0, 1, 2],
    infraReady: false,
    nodes: [0, 1, 2, 3],
    aso: { ready: RECONCILING, state: { count: 3 }, generationBehind: true },
    live: { provisioningState: 'Scaling', count: 5 },
    ...(flavour === 'aks-managed'
      ? { agentPoolsReady: { type: 'AgentPoolsReady', status: 'False', reason: 'Creating', severity: 'Info' } }
      : {}),
  });

  for (const flavour of ['aks-aso', 'aks-managed'] as const) {
    it(`${flavour}: both lists frozen, the joined Node missing from both; the gate closed by design, a warning first`, () => {
      const d = analyse(k1(flavour));
      expect(kinds(d)).toEqual(['missing-from-azuremachinepool', 'missing-from-machinepool']);
      const frozen = finding(d, 'readiness-gate-frozen');
      expect(frozen).toMatchObject({ severity: 'warning', cause: 'aks-operation' });
      expect(frozen.criticalFrom).toBeDefined();
      expect(frozen.summary).toMatch(/its own list is frozen too/);
      expect(frozen.detail).toMatch(/only the Nodes or Azure show/);
      const op = finding(d, 'aks-operation');
      expect(op.summary).toMatch(/ASO is applying a change to agent pool pool1 \(AKS: Scaling\)/);
      expect(op.summary).toMatch(/closed by design/);
      expect(d.verdict).toMatchObject({ recommended: null, reconcile: { canHelp: false } });
      expect(d.verdict.syncProviderIds.allowed).toBe(false);
    });
  }

  it('turns critical once the freeze outlasts the grace', () => {
    const late = new Date(Date.parse(NOW) + 11 * 60_000).toISOString();
    expect(finding(analyse(k1('aks-aso'), late), 'readiness-gate-frozen').severity).toBe('critical');
  });
});

describe('K2 and K3: AKS’s autoscaler moves the pool; ASO’s count lags (#5985)', () => {
  it('ASO-MP: the list follows the Nodes, the replicas ASO’s cached count', () => {
    const d = analyse({
      flavour: 'aks-aso',
      replicas: 3,
      mpList: [0, 1, 2, 3, 4],
      infraReplicas: 3,
      mpAnnotations: { 'cluster.x-k8s.io/replicas-managed-by': 'aks' },
      aso: { ready: READY, state: { count: 3, enableAutoScaling: true } },
      live: { count: 5, enableAutoScaling: true },
    });
    const f = finding(d, 'aks-replicas-cached');
    expect(f.severity).toBe('warning');
    expect(f.summary).toBe(
      "MachinePool replicas lag AKS's autoscaler: they follow ASO's cached count (3), AKS counts 5.",
    );
    expect(f.detail).toMatch(/can go negative meanwhile: an artefact/);
    expect(codes(d)).not.toContain('externally-managed-replicas');
    expect(d.verdict.reconcile).toMatchObject({ canHelp: false, reason: expect.stringMatching(/ASO's own resync/) });
  });

  it('AMMP: spec.scaling; the MachinePool’s spec.replicas is ASO’s count while the list follows the VMs', () => {
    const d = analyse({
      flavour: 'aks-managed',
      replicas: 3,
      scaling: { minSize: 1, maxSize: 10 },
      mpList: [0, 1, 2, 3, 4],
      aso: { ready: READY, state: { count: 3, enableAutoScaling: true } },
      live: { count: 5, enableAutoScaling: true },
    });
    expect(finding(d, 'aks-replicas-cached').detail).toMatch(/follow the scale set's VMs/);
  });

  it('without an AKS read, counts the Nodes of the pool instead', () => {
    const d = analyse({
      flavour: 'aks-aso',
      replicas: 3,
      mpList: [0, 1, 2, 3],
      aso: { ready: READY, state: { count: 3, enableAutoScaling: true } },
    });
    expect(finding(d, 'aks-replicas-cached').summary).toMatch(/\(3\), the pool has 4 Nodes\.$/);
  });

  it('is only informative while ASO’s count is current', () => {
    const d = analyse({
      flavour: 'aks-aso',
      mpList: [0, 1, 2],
      aso: { ready: READY, state: { count: 3, enableAutoScaling: true } },
      live: { count: 3, enableAutoScaling: true },
    });
    expect(finding(d, 'aks-replicas-cached').severity).toBe('info');
  });
});

describe('K4: an upgrade waits for the control plane', () => {
  const blocked: AksPoolSpec = {
    flavour: 'aks-aso',
    mpList: [0, 1],
    infraReady: false,
    aso: {
      ready: {
        type: 'Ready',
        status: 'False',
        reason: 'ReconciliationBlocked',
        severity: 'Warning',
        message: 'Managed cluster "aks-weu" has not reached Kubernetes version "1.34.1"',
      },
      state: { count: 2 },
      generationBehind: true,
    },
    live: { count: 2 },
  };

  it('says what ASO waits for; no freeze while nothing moved', () => {
    const d = analyse(blocked);
    expect(finding(d, 'aks-operation').summary).toMatch(/waits for the control plane to reach Kubernetes 1\.34\.1/);
    expect(finding(d, 'aks-operation').detail).not.toContain('AKS says');
    expect(codes(d)).not.toContain('readiness-gate-frozen');
    expect(codes(d)).not.toContain('gate-closed');
  });

  it('adds what AKS says of the control plane, once the managed cluster is read; the summary unchanged', () => {
    const spec = blocked;
    const input = buildAksPool(spec);
    const managedCluster = (properties: Record<string, unknown>) => ({
      state: 'ok' as const,
      managedCluster: {
        id: '/subscriptions/x/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/aks-weu',
        name: 'aks-weu',
        properties,
      },
      readAt: Date.parse(AT),
    });
    const upgrading = analyzePool(
      {
        ...input,
        aks: {
          ...input.aks,
          managedCluster: managedCluster({
            provisioningState: 'Upgrading',
            kubernetesVersion: '1.34.1',
            currentKubernetesVersion: '1.33.2',
          }),
        },
      },
      { now: AT },
    );
    const f = finding(upgrading, 'aks-operation');
    expect(f.summary).toBe(finding(analyse(spec), 'aks-operation').summary);
    expect(f.detail).toMatch(
      /AKS says the control plane of aks-weu runs Kubernetes 1\.33\.2, on its way to 1\.34\.1 \(Upgrading\)\. /,
    );
    const unread = analyzePool(
      {
        ...input,
        aks: { ...input.aks, managedCluster: { state: 'throttled', error: 'TooManyRequests', retryAfterSeconds: 9 } },
      },
      { now: AT },
    );
    expect(finding(unread, 'aks-operation').detail).not.toContain('AKS says');
  });
});

describe('K4: AKS upgrades the pool', () => {
  it("says from which version to which, and how many of the pool's Nodes run each", () => {
    const input = buildAksPool({
      flavour: 'aks-managed',
      mpList: [0, 1, 2],
      nodes: [0, 1, 2, 3],
      infraReady: false,
      aso: { ready: RECONCILING, state: { count: 3 }, generationBehind: true },
      live: { count: 3, provisioningState: 'Upgrading' },
    });
    const live = input.aks?.agentPool as { agentPool: { properties: Record<string, unknown> } };
    live.agentPool.properties.orchestratorVersion = '1.34.1';
    const nodes = input.workload?.state === 'ok' ? input.workload.nodes : [];
    // The surge Node and one reimaged Node run the new version.
    for (const n of nodes.slice(2)) n.status = { ...n.status, nodeInfo: { kubeletVersion: 'v1.34.1' } };
    const d = analyzePool(input, { now: AT });
    const f = finding(d, 'aks-operation');
    expect(f.summary).toMatch(/upgrading agent pool \S+ from Kubernetes 1\.33\.2 to 1\.34\.1/);
    expect(f.detail).toContain('Its Nodes now: 2 at v1.34.1, 2 at v1.33.2.');
  });
});

describe('K7: a perpetual diff makes the pool flap', () => {
  const ready: AksPoolSpec = {
    flavour: 'aks-managed',
    mpList: [0, 1],
    aso: { ready: READY, state: { count: 2 } },
    live: { count: 2 },
  };
  const writing: AksPoolSpec = {
    ...ready,
    infraReady: false,
    aso: { ready: RECONCILING, state: { count: 2 }, generationBehind: true },
    live: { count: 2, provisioningState: 'Updating' },
  };

  /** The pool analysed once a minute through `specs`, each analysis taking over the one before. */
  function play(specs: AksPoolSpec[], from = Date.parse(AT)) {
    let prev: PoolDetail | null = null;
    const out: PoolDetail[] = [];
    specs.forEach((spec, i) => {
      prev = analyzePool(buildAksPool(spec), { now: new Date(from + i * 60_000).toISOString(), previous: prev });
      out.push(prev);
    });
    return out;
  }
  const flaps = (n: number) => Array.from({ length: n }, () => [ready, writing]).flat();

  it('is a loop from the sixth drop within the hour, and a resync is said to make it worse', () => {
    const run = play(flaps(6));
    const fifth = run[9] as PoolDetail;
    expect(fifth.summary.readyDrops).toHaveLength(5);
    expect(codes(fifth)).not.toContain('aks-update-loop');
    const sixth = run[11] as PoolDetail;
    const loop = finding(sixth, 'aks-update-loop');
    expect(loop.summary).toBe(
      'The AzureManagedMachinePool keeps going not ready and ready again: CAPZ rewrites agent pool pool1 at every reconcile, a perpetual update loop.',
    );
    expect(loop.detail).toMatch(/^It went not ready 6 times in the last hour/);
    expect(loop.since).toBe(run[1]?.at);
    expect(sixth.verdict.reconcile).toMatchObject({ canHelp: false, reason: expect.stringMatching(/one more write/) });
    expect(sixth.verdict.recommended).toBeNull();
  });

  it('ends when the drops leave the hour, and a steady pool records none', () => {
    const run = play([...flaps(6), ...Array.from({ length: 61 }, () => ready)]);
    expect(codes(run[12] as PoolDetail)).toContain('aks-update-loop');
    const last = run.at(-1) as PoolDetail;
    expect(codes(last)).not.toContain('aks-update-loop');
    expect(last.summary.readyDrops).toBeUndefined();
    expect(play([ready, ready, ready]).at(-1)?.summary.readyDrops).toBeUndefined();
  });
});

describe('K5: the operation fails', () => {
  it('says AKS’s error, chains the freeze to it, and a resync cannot help', () => {
    const d = analyse({
      flavour: 'aks-managed',
      replicas: 5,
      mpList: [0, 1, 2],
      infraReady: false,
      nodes: [0, 1, 2, 3],
      agentPoolsReady: { type: 'AgentPoolsReady', status: 'False', reason: 'Failed', severity: 'Error' },
      aso: {
        ready: { type: 'Ready', status: 'False', reason: 'QuotaExceeded', severity: 'Error', message: 'quota' },
        state: { count: 3 },
      },
      live: {
        provisioningState: 'Failed',
        count: 5,
        provisioningError: {
          code: 'QuotaExceeded',
          message:
            'Operation could not be completed as it results in exceeding approved standardDSv5Family Cores quota.',
        },
      },
    });
    const failed = finding(d, 'aks-pool-failed');
    expect(failed.severity).toBe('critical');
    expect(failed.summary).toMatch(/^AKS agent pool pool1 failed \(QuotaExceeded\): Operation could not be completed/);
    expect(finding(d, 'readiness-gate-frozen')).toMatchObject({ severity: 'critical', cause: 'aks-pool-failed' });
    expect(codes(d)).not.toContain('aks-operation');
    expect(d.verdict.reconcile).toMatchObject({ canHelp: false, reason: expect.stringMatching(/failed in AKS/) });
  });

  it('from ASO alone: an AMMP with an Error is terminal for CAPZ', () => {
    const d = analyse({
      flavour: 'aks-managed',
      mpList: [0],
      infraReady: false,
      aso: {
        ready: { type: 'Ready', status: 'False', reason: 'SubnetIsFull', severity: 'Error' },
        state: { count: 1 },
      },
    });
    expect(finding(d, 'aks-pool-failed').detail).toMatch(/terminal/);
  });

  it('cuts a long error message in the headline', () => {
    const d = analyse({
      flavour: 'aks-aso',
      mpList: [0],
      live: { provisioningState: 'Failed', count: 1, provisioningError: { code: 'X', message: 'a'.repeat(5000) } },
    });
    expect(finding(d, 'aks-pool-failed').summary.length).toBeLessThan(300);
  });
});

describe('K6: AKS runs an operation of its own', () => {
  it('blames neither CAPZ nor a failure', () => {
    const d = analyse({
      flavour: 'aks-managed',
      mpList: [0, 1],
      infraReady: false,
      agentPoolsReady: { type: 'AgentPoolsReady', status: 'False', reason: 'Failed', severity: 'Error' },
      aso: {
        ready: {
          type: 'Ready',
          status: 'False',
          reason: 'ReconciliationBlocked',
          severity: 'Warning',
          message: 'Managed cluster agent pool is in provisioning state "Upgrading"',
        },
        state: { count: 2 },
      },
      live: { provisioningState: 'Upgrading', count: 2 },
    });
    const op = finding(d, 'aks-operation');
    expect(op.summary).toMatch(/AKS runs an operation of its own on agent pool pool1 \(Upgrading\)/);
    expect(op.detail).toMatch(/not a real failure/);
    expect(codes(d)).not.toContain('aks-pool-failed');
  });

  it('seen by AKS before ASO: the pool stays ready, said as information', () => {
    const d = analyse({
      flavour: 'aks-aso',
      mpList: [0, 1],
      aso: { ready: READY, state: { count: 2 } },
      live: { provisioningState: 'Upgrading', count: 2 },
    });
    expect(finding(d, 'aks-operation')).toMatchObject({ severity: 'info' });
  });
});

describe('K8: the workload cluster is unreachable', () => {
  it('ASO-MP: CAPZ cannot list the Nodes either', () => {
    const d = analyse({
      flavour: 'aks-aso',
      mpList: [0],
      infraReady: false,
      workload: 'unreachable',
      live: { count: 1 },
    });
    const f = finding(d, 'workload-cluster-unreachable');
    expect(f.detail).toMatch(/builds an AzureASOManagedMachinePool's list from the workload cluster's Nodes/);
    expect(f.suggestedAction).toMatch(/Entra token/);
    expect(d.verdict.reconcile.canHelp).toBe(false);
  });

  it('AMMP: stays ready with a current list; the freeze is CAPI’s', () => {
    const d = analyse({ flavour: 'aks-managed', mpList: [0], workload: 'unreachable', live: { count: 1 } });
    expect(finding(d, 'workload-cluster-unreachable').detail).toMatch(/keeps it ready with a current list/);
  });
});

describe('K9: an ASO-MP cannot map its Nodes', () => {
  it('a Node without providerID keeps it not ready', () => {
    const d = analyse({ flavour: 'aks-aso', mpList: [0, 1], infraReady: false, nodesWithoutId: 1, live: { count: 3 } });
    const f = finding(d, 'aks-nodes-unmapped');
    expect(f.summary).toMatch(/^1 Node of agent pool pool1 has no providerID/);
    expect(d.findings.find((x) => x.code === 'gate-closed')).toBeUndefined();
  });

  it('Nodes without the pool’s label: CAPZ lists none, CAPI keeps the old list', () => {
    const d = analyse({
      flavour: 'aks-aso',
      mpList: [0, 1],
      infraList: [],
      nodeLabelPool: 'other',
      aso: { ready: READY, state: { count: 2 } },
      live: { count: 2 },
    });
    expect(finding(d, 'aks-nodes-unmapped').summary).toMatch(
      /No Node carries agent pool pool1's label while AKS counts 2/,
    );
  });

  it('a stopped pool explains Nodes gone', () => {
    const d = analyse({
      flavour: 'aks-aso',
      mpList: [],
      nodes: [],
      aso: { ready: READY, state: { count: 2, powerState: 'Stopped' } },
    });
    expect(finding(d, 'aks-nodes-unmapped').suggestedAction).toMatch(/Start the agent pool/);
  });

  it('a Node gone from an ASO-MP’s list is gone, without reading Azure', () => {
    const d = analyse({
      flavour: 'aks-aso',
      mpList: [0, 1, 2],
      nodes: [0, 1],
      infraReady: false,
      aso: { ready: RECONCILING, state: { count: 2 } },
    });
    const ghost = d.drift.find((x) => x.kind === 'ghost-in-machinepool');
    expect(ghost?.summary).toBe('In the MachinePool providerIDList, but no Node has it.');
  });
});

describe('K10: pause', () => {
  it('a paused ASO-MP closes the gate itself, and the resync is refused', () => {
    const d = analyse({
      flavour: 'aks-aso',
      mpList: [0],
      infraReady: false,
      infraAnnotations: { 'cluster.x-k8s.io/paused': '' },
      live: { count: 1 },
    });
    expect(finding(d, 'paused').detail).toMatch(/the pause itself closes CAPI's readiness gate/);
    expect(d.verdict.reconcile).toMatchObject({ allowed: false, reason: expect.stringMatching(/paused/) });
  });

  it('a paused Cluster: ASO still reads the agent pool', () => {
    const d = analyse({ flavour: 'aks-managed', mpList: [0], clusterPaused: true, live: { count: 1 } });
    expect(finding(d, 'paused').detail).toMatch(/ASO still reads/);
  });
});

describe('an AKS pool’s resync', () => {
  it('recommends a reconcile when the gate is open and the lists differ, and never a list copy', () => {
    const d = analyse({ flavour: 'aks-managed', mpList: [0], infraList: [0, 1], nodes: [0, 1], live: { count: 2 } });
    expect(d.verdict).toMatchObject({
      recommended: 'reconcile',
      reconcile: { allowed: true, canHelp: true },
      syncProviderIds: { allowed: false },
    });
    expect(d.verdict.reconcile.reason).toMatch(/The gate is open: CAPI copies the list on its next reconcile/);
  });

  it('says a reconcile helps when the infra list lags the Nodes while ready', () => {
    const d = analyse({
      flavour: 'aks-aso',
      mpList: [0],
      nodes: [0, 1],
      aso: { ready: READY, state: { count: 2 } },
      live: { count: 2 },
    });
    expect(d.verdict.reconcile.reason).toMatch(/CAPZ list the Nodes again/);
  });

  it('names the AMMP’s old lowercased providerIDs as case drift (CAPZ before v1.5)', () => {
    const input = buildAksPool({ flavour: 'aks-managed', mpList: [0], live: { count: 1 } });
    const mp = makeMachinePool({
      name: 'pool1',
      namespace: 'default',
      clusterName: 'aks-weu',
      replicas: 1,
      providerIDList: [String((input.machinePool.spec?.providerIDList as string[])[0]).toLowerCase()],
      infraKind: 'AzureManagedMachinePool',
    });
    const d = analyzePool({ ...input, machinePool: mp }, { now: AT });
    expect(finding(d, 'case-mismatch').summary).toMatch(/the AzureManagedMachinePool list/);
  });
});

describe('what the review found', () => {
  it('an infrastructureRef kind that is an object prototype key is read as an unknown kind, not thrown on', () => {
    for (const kind of ['toString', '__proto__', 'constructor']) {
      const input = buildAksPool({ flavour: 'aks-managed', mpList: [0] });
      const mp = structuredClone(input.machinePool) as {
        spec: { template: { spec: { infrastructureRef: { kind: string } } } };
      };
      mp.spec.template.spec.infrastructureRef.kind = kind;
      expect(analyzePool({ ...input, machinePool: mp as never }, { now: AT }).summary.flavour).toBe('self-managed');
    }
  });

  it('offers no reconcile while ASO is not done, even with the gate open: CAPZ would close it', () => {
    const d = analyse({
      flavour: 'aks-managed',
      mpList: [0],
      infraList: [0, 1],
      nodes: [0, 1],
      aso: { ready: RECONCILING, state: { count: 2 } },
    });
    expect(d.verdict.reconcile).toMatchObject({ canHelp: false, reason: expect.stringMatching(/ASO is not done/) });
  });

  it('offers no reconcile for an empty infra list while replicas are above 0: CAPI does not copy it', () => {
    const d = analyse({
      flavour: 'aks-aso',
      mpList: [0, 1],
      infraList: [],
      nodes: [],
      aso: { ready: READY, state: { count: 2 } },
    });
    expect(d.verdict.reconcile).toMatchObject({ canHelp: false, reason: expect.stringMatching(/empty list/) });
  });

  it('a Node relabelled away from an ASO-MP is neither gone nor one CAPZ will list', () => {
    const d = analyse({
      flavour: 'aks-aso',
      mpList: [0, 1],
      nodeLabelPool: 'other',
      aso: { ready: READY, state: { count: 2 } },
    });
    expect(d.drift).toEqual([]);
    expect(codes(d)).toContain('aks-nodes-unmapped');
  });

  it('a paused Cluster is the cause of an ASO-MP freeze; a newer ASO generation is an operation', () => {
    const paused = analyse({ flavour: 'aks-aso', mpList: [0], nodes: [0, 1], infraReady: false, clusterPaused: true });
    expect(finding(paused, 'readiness-gate-frozen').cause).toBe('paused');
    const behind = analyse({
      flavour: 'aks-aso',
      mpList: [0],
      nodes: [0, 1],
      infraReady: false,
      aso: { ready: READY, state: { count: 2 }, generationBehind: true },
    });
    expect(finding(behind, 'readiness-gate-frozen').cause).toBe('aks-operation');
    expect(finding(behind, 'aks-operation').summary).toMatch(/ASO is applying a change/);
  });
});

describe('the derived since', () => {
  it('of an AKS operation is when ASO’s Ready went False', () => {
    const since = minutesBefore(NOW, 5);
    const d = analyzePool(
      buildAksPool({
        flavour: 'aks-aso',
        mpList: [0],
        infraReady: false,
        aso: { ready: { ...RECONCILING, lastTransitionTime: since }, state: { count: 1 } },
      }),
      { now: AT, previous: { drift: [], findings: [] } },
    );
    expect(finding(d, 'aks-operation').since).toBe(since);
  });
});
