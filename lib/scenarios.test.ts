// The 18 operator scenarios of docs/domain.md, "Operator scenarios", each asserted whole: drift, findings, verdict
// and counts.
// Long because it is those scenarios, one case each.

import { describe, expect, it } from 'vitest';
import { analyzePool } from './analyze';
import { headline } from './diagnosis';
import type { DriftKind, FindingCode, PoolDetail, ReplicaCounts, ResyncMode, Severity } from './api-types';
import { SCENARIOS, buildScenario } from './fixtures/scenarios';

const member = (id: string | null) => (id === null ? null : (id.split('/').pop() as string));

interface Expected {
  drift: [DriftKind, string | null][];
  findings: [FindingCode, Severity][];
  recommended: ResyncMode | null;
  reconcile: [allowed: boolean, canHelp: boolean];
  sync: [allowed: boolean, canHelp: boolean, add: string[], remove: string[]];
  replicas: ReplicaCounts;
}

const counts = (c: Partial<ReplicaCounts>): ReplicaCounts => ({
  desired: 3,
  vmssCapacity: 3,
  azureInstances: 3,
  azureSucceeded: 3,
  azureFailed: 0,
  capz: 3,
  capi: 3,
  readyNodes: 3,
  ...c,
});

const EXPECTED: Record<string, Expected> = {
  's01-scale-up-pre-fix': {
    drift: [
      ['missing-from-machinepool', '3'],
      ['missing-from-machinepool', '4'],
    ],
    findings: [
      ['readiness-gate-frozen', 'critical'],
      ['scaling', 'info'],
    ],
    recommended: 'sync-provider-ids',
    reconcile: [true, false],
    sync: [true, true, ['3', '4'], []],
    replicas: counts({ desired: 5, vmssCapacity: 5, azureInstances: 5, azureSucceeded: 5 }),
  },
  's02-scale-up-post-fix': {
    drift: [],
    findings: [['scaling', 'info']],
    recommended: null,
    reconcile: [true, false],
    sync: [false, false, [], []],
    replicas: counts({ desired: 5, vmssCapacity: 5, azureInstances: 5, azureSucceeded: 5 }),
  },
  's03-scale-down-pre-fix': {
    drift: [
      ['ghost-in-machinepool', '3'],
      ['ghost-in-machinepool', '4'],
      ['node-without-instance', '3'],
      ['node-without-instance', '4'],
    ],
    // Routine on this CAPZ for a while (FROZEN_CRITICAL_AFTER_MS): a warning until it lasts.
    findings: [
      ['readiness-gate-frozen', 'warning'],
      ['scaling', 'info'],
    ],
    recommended: 'sync-provider-ids',
    reconcile: [true, false],
    sync: [true, true, [], ['3', '4']],
    replicas: counts({ capz: 5, capi: 5 }),
  },
  's04-one-vm-failed-main': {
    // The failed VM has no Node, and counts as failed (instance-failed), not as running without a Node.
    drift: [['missing-from-machinepool', '2']],
    findings: [
      ['readiness-gate-frozen', 'critical'],
      ['vmss-failed', 'critical'],
      ['instance-failed', 'warning'],
    ],
    recommended: 'sync-provider-ids',
    reconcile: [true, false],
    sync: [true, true, ['2'], []],
    replicas: counts({ azureSucceeded: 2, azureFailed: 1, capz: 2, capi: 2, readyNodes: 2 }),
  },
  's05-flexible': {
    drift: [],
    findings: [['healthy', 'info']],
    recommended: null,
    reconcile: [true, false],
    sync: [false, false, [], []],
    replicas: counts({}),
  },
  's06-case-mismatch': {
    drift: [
      ['case-mismatch', '0'],
      ['case-mismatch', '1'],
      ['case-mismatch', '2'],
    ],
    findings: [['case-mismatch', 'critical']],
    recommended: null,
    reconcile: [true, false],
    sync: [false, false, [], []],
    // The Nodes are Ready; only the AMPMs, matching exactly, do not find them.
    replicas: counts({ capz: 0, capi: 0 }),
  },
  's07-vm-deleted-out-of-band': {
    drift: [
      ['ghost-in-azuremachinepool', '2'],
      ['ghost-in-machinepool', '2'],
      ['node-without-instance', '2'],
    ],
    findings: [
      ['instances-gone-from-azure', 'warning'],
      ['scaling', 'info'],
    ],
    recommended: 'reconcile',
    reconcile: [true, true],
    sync: [false, false, [], []],
    replicas: counts({ vmssCapacity: 2, azureInstances: 2, azureSucceeded: 2, capz: 2, capi: 2, readyNodes: 2 }),
  },
  's08-node-never-joined': {
    drift: [['instance-without-node', '2']],
    findings: [['node-not-joined', 'warning']],
    recommended: null,
    reconcile: [true, false],
    sync: [false, false, [], []],
    replicas: counts({ capz: 2, capi: 2, readyNodes: 2 }),
  },
  's09-paused': {
    drift: [
      ['missing-from-azuremachinepool', '3'],
      ['missing-from-machinepool', '3'],
    ],
    findings: [
      ['paused', 'warning'],
      ['scaling', 'info'],
    ],
    recommended: null,
    reconcile: [false, false],
    sync: [false, false, [], []],
    replicas: counts({ vmssCapacity: 4, azureInstances: 4, azureSucceeded: 4, readyNodes: 4 }),
  },
  's10-externally-managed-replicas': {
    drift: [],
    findings: [['externally-managed-replicas', 'warning']],
    recommended: null,
    reconcile: [true, false],
    sync: [false, false, [], []],
    replicas: counts({}),
  },
  's10-nil-replicas': {
    drift: [],
    findings: [['replicas-unknown', 'warning']],
    recommended: null,
    reconcile: [true, false],
    sync: [false, false, [], []],
    replicas: counts({
      desired: null,
      vmssCapacity: 2,
      azureInstances: 2,
      azureSucceeded: 2,
      capz: 2,
      capi: 2,
      readyNodes: 2,
    }),
  },
  's11-v1beta1-scale-up-pre-fix': {
    drift: [
      ['missing-from-machinepool', '3'],
      ['missing-from-machinepool', '4'],
    ],
    findings: [
      ['readiness-gate-frozen', 'critical'],
      ['scaling', 'info'],
    ],
    recommended: 'sync-provider-ids',
    reconcile: [true, false],
    sync: [true, true, ['3', '4'], []],
    replicas: counts({ desired: 5, vmssCapacity: 5, azureInstances: 5, azureSucceeded: 5 }),
  },
  's12-order-churn': {
    drift: [['order-only', null]],
    findings: [['order-only', 'info']],
    recommended: null,
    reconcile: [true, false],
    sync: [false, false, [], []],
    replicas: counts({}),
  },
  's13-empty-infra-list': {
    drift: [
      ['missing-from-azuremachinepool', '0'],
      ['missing-from-azuremachinepool', '1'],
      ['missing-from-azuremachinepool', '2'],
    ],
    findings: [['empty-infra-list', 'warning']],
    recommended: 'reconcile',
    reconcile: [true, true],
    sync: [false, false, [], ['0', '1', '2']],
    replicas: counts({ capz: 0 }),
  },
  's14-rolling-model-update': {
    drift: [],
    findings: [['model-rollout', 'info']],
    recommended: null,
    reconcile: [true, false],
    sync: [false, false, [], []],
    replicas: counts({ vmssCapacity: 4, azureInstances: 4, azureSucceeded: 4, capz: 4, capi: 4, readyNodes: 4 }),
  },
  's15-capacity-failure': {
    drift: [],
    findings: [
      ['vmss-failed', 'warning'],
      ['instance-failed', 'warning'],
      ['scaling', 'info'],
    ],
    recommended: null,
    reconcile: [true, false],
    sync: [false, false, [], []],
    replicas: counts({ desired: 5, vmssCapacity: 5, azureInstances: 5, azureFailed: 2 }),
  },
  's16-workload-unreachable': {
    drift: [['missing-from-machinepool', '3']],
    findings: [['workload-cluster-unreachable', 'critical']],
    recommended: null,
    reconcile: [true, false],
    sync: [false, false, ['3'], []],
    replicas: counts({ desired: 4, vmssCapacity: 4, azureInstances: 4, azureSucceeded: 4, capz: 4, readyNodes: null }),
  },
  's17-vmss-deleted': {
    // In key order: by kind, then by ID.
    drift: (['ghost-in-azuremachinepool', 'ghost-in-machinepool', 'node-without-instance'] as const).flatMap((kind) =>
      ['0', '1', '2'].map((m): [DriftKind, string] => [kind, m]),
    ),
    // CAPZ re-creates the scale set itself: nothing to resync (docs/domain.md, "S17. Scale set deleted out of band").
    findings: [['vmss-not-found', 'critical']],
    recommended: null,
    reconcile: [true, false],
    sync: [false, false, [], []],
    replicas: counts({
      vmssCapacity: null,
      azureInstances: null,
      azureSucceeded: null,
      azureFailed: null,
      capz: 0,
      capi: 0,
      readyNodes: 0,
    }),
  },
  's18-arm-throttled': {
    drift: [],
    findings: [['azure-unread', 'warning']],
    recommended: null,
    reconcile: [true, false],
    sync: [false, false, [], []],
    replicas: counts({ vmssCapacity: null, azureInstances: null, azureSucceeded: null, azureFailed: null }),
  },
};

function project(d: PoolDetail): Expected {
  const v = d.verdict;
  return {
    drift: d.drift.map((x) => [x.kind, member(x.providerID)]),
    findings: d.findings.map((f) => [f.code, f.severity]),
    recommended: v.recommended,
    reconcile: [v.reconcile.allowed, v.reconcile.canHelp],
    sync: [
      v.syncProviderIds.allowed,
      v.syncProviderIds.canHelp,
      v.syncProviderIds.wouldAdd.map((x) => member(x) as string),
      v.syncProviderIds.wouldRemove.map((x) => member(x) as string),
    ],
    replicas: d.summary.replicas,
  };
}

describe('operator scenarios (docs/domain.md, "Operator scenarios")', () => {
  it('covers every scenario with an expectation', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual(SCENARIOS.map((s) => s.id).sort());
  });

  it.each(SCENARIOS.map((s) => [s.id, s.title]))('%s — %s', (id) => {
    const b = buildScenario(id);
    expect(project(analyzePool(b.input, { now: b.now }))).toEqual(EXPECTED[id]);
  });

  it.each(SCENARIOS.map((s) => [s.id]))('%s gives the same result from v1beta1 and v1beta2 MachinePools', (id) => {
    const b2 = buildScenario(id, { version: 'v1beta2' });
    const b1 = buildScenario(id, { version: 'v1beta1' });
    expect(b1.input.machinePool.apiVersion).toBe('cluster.x-k8s.io/v1beta1');
    expect(b2.input.machinePool.apiVersion).toBe('cluster.x-k8s.io/v1beta2');
    // UIDs and resourceVersions differ between builds; everything the analysis says must not.
    expect(analyzePool(b1.input, { now: b1.now })).toEqual(analyzePool(b2.input, { now: b2.now }));
  });
});

describe('plain-words findings', () => {
  it('S4 (seed, one VM failed) explains the freeze with the Azure error code and the invisible instance', () => {
    const b = buildScenario('s04-one-vm-failed-main');
    const [frozen, vmss, failed] = analyzePool(b.input, { now: b.now }).findings;
    expect(frozen).toEqual({
      code: 'readiness-gate-frozen',
      severity: 'critical',
      summary:
        'MachinePool providerIDList frozen: AzureMachinePool not ready (provisioningState Failed, 1 instance failed: OSProvisioningTimedOut, ScaleSetRunning=False/ScaleSetProvisionFailed, 2 AMPMs ready for 3 desired). The autoscaler cannot see 1 instance.',
      detail: expect.stringContaining('(1 to add)') as string,
      suggestedAction: expect.stringContaining('Replace the failed instances') as string,
      since: '2026-11-29T11:46:00Z',
      cause: 'vmss-failed',
    });
    expect(vmss?.cause).toBe('instance-failed');
    expect(failed?.cause).toBeUndefined();
    expect(frozen?.detail).toContain('#6488');
    expect(headline(frozen!, b.now)).toBe(
      'MachinePool providerIDList frozen for 14 min: AzureMachinePool not ready (provisioningState Failed, 1 instance failed: OSProvisioningTimedOut, ScaleSetRunning=False/ScaleSetProvisionFailed, 2 AMPMs ready for 3 desired). The autoscaler cannot see 1 instance.',
    );
    expect(vmss?.detail).toContain('not ready because of it');
    expect(failed?.detail).toBe(
      "Failed: pool0_2 (OSProvisioningTimedOut). Their AMPMs never become Ready, so the AzureMachinePool's status.replicas stays below spec.replicas.",
    );
  });

  it('S1 (scale-up pre-1.20): the freeze is a warning until it lasts FROZEN_CRITICAL_AFTER_MS, then critical', () => {
    const b = buildScenario('s01-scale-up-pre-fix');
    const frozenAfter = (ms?: number) =>
      analyzePool(b.input, { now: b.now, ...(ms !== undefined ? { frozenCriticalAfterMs: ms } : {}) }).findings.find(
        (f) => f.code === 'readiness-gate-frozen',
      );
    // Frozen for 14 min: past the default 10.
    const late = frozenAfter();
    expect(late).toMatchObject({ severity: 'critical' });
    expect(late).not.toHaveProperty('criticalFrom');
    const early = frozenAfter(20 * 60_000);
    expect(early).toMatchObject({ severity: 'warning' });
    expect(Date.parse(early?.criticalFrom ?? '')).toBe(Date.parse(early?.since ?? '') + 20 * 60_000);
    // A failed instance is no routine freeze: critical at once, whatever the setting.
    const failed = buildScenario('s04-one-vm-failed-main');
    expect(
      analyzePool(failed.input, { now: failed.now, frozenCriticalAfterMs: 60 * 60_000 }).findings[0],
    ).toMatchObject({ code: 'readiness-gate-frozen', severity: 'critical' });
  });

  it('S7: names each instance gone from Azure, and how its Machine stands, draining included', () => {
    const b = buildScenario('s07-vm-deleted-out-of-band');
    const gone = () =>
      analyzePool(b.input, { now: b.now }).findings.find((f) => f.code === 'instances-gone-from-azure');
    expect(gone()?.summary).toBe('1 instance gone from Azure but still in the AzureMachinePool list.');
    expect(gone()?.detail).toMatch(/^Azure's scale set no longer has pool0-2: Machine pool0-2 not deleted yet\./);
    const machine = b.input.machines?.find((m) => m.metadata?.name === 'pool0-2');
    if (!machine?.metadata) throw new Error('no Machine pool0-2');
    machine.metadata.deletionTimestamp = new Date(Date.parse(b.now) - 25 * 60_000).toISOString();
    // CAPI's v1beta2 conditions: `status.conditions` on a v1beta2 object, `status.v1beta2.conditions` on a v1beta1.
    const deleting = { conditions: [{ type: 'Deleting', status: 'True', reason: 'DrainingNode', message: 'x' }] };
    (machine as { status?: unknown }).status = machine.apiVersion?.endsWith('/v1beta2')
      ? deleting
      : { v1beta2: deleting };
    expect(gone()?.summary).toBe(
      '1 instance gone from Azure but still in the AzureMachinePool list; 1 of their Machines deleting.',
    );
    expect(gone()?.detail).toContain('pool0-2: Machine pool0-2 deleting for 25 min (DrainingNode).');
  });

  it('S1 (seed, scale-up pre-1.20) recommends upgrading CAPZ', () => {
    const b = buildScenario('s01-scale-up-pre-fix');
    const [frozen] = analyzePool(b.input, { now: b.now }).findings;
    expect(frozen?.suggestedAction).toMatch(/^Upgrade CAPZ to v1\.20 or later \(#5537\)/);
    expect(frozen?.detail).toContain('CAPZ before v1.20');
  });

  it('S2 calls the Ready-condition / status.ready divergence benign', () => {
    const b = buildScenario('s02-scale-up-post-fix');
    const [scaling] = analyzePool(b.input, { now: b.now }).findings;
    expect(scaling?.summary).toBe('Scaling from 3 to 5 replicas.');
    expect(scaling?.detail).toContain('harmless');
  });

  it('S6 names both spellings in the case-mismatch item', () => {
    const b = buildScenario('s06-case-mismatch');
    const [item] = analyzePool(b.input, { now: b.now }).drift;
    expect(item?.summary).toContain('resourceGroups/Prod-WEU/');
    expect(item?.summary).toContain('resourceGroups/prod-weu/');
    expect(item?.sources).toEqual({
      azure: expect.stringContaining('/prod-weu/') as string,
      amp: expect.stringContaining('/Prod-WEU/') as string,
      mp: expect.stringContaining('/Prod-WEU/') as string,
      ampm: expect.stringContaining('/Prod-WEU/') as string,
      machine: expect.stringContaining('/Prod-WEU/') as string,
      node: expect.stringContaining('/prod-weu/') as string,
    });
  });

  it('S5 shows the autoscaler keying Flexible members by VM name', () => {
    const b = buildScenario('s05-flexible');
    const rows = analyzePool(b.input, { now: b.now }).instances;
    expect(rows.map((r) => r.autoscaler)).toEqual([
      { key: 'pool0_1a2b3c4d', visible: true },
      { key: 'pool0_5e6f7a8b', visible: true },
      { key: 'pool0_9c0d1e2f', visible: true },
    ]);
  });
});
