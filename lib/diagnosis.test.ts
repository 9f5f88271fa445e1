// The diagnosis over real-shaped pools: every finding, its severity and its steps, version-aware.
// Long because it is a table: each finding's cases (when it fires, when it must not) side by side.

import { describe, expect, it } from 'vitest';
import { analyzePool } from './analyze';
import { headline, worstHeadline } from './diagnosis';
import { idDiff, listDiff } from './pool-lists';
import { buildPoolModel } from './pool-model';
import type { FindingCode } from './api-types';
import { DEFAULT_AZURE, NOW, minutesBefore } from './fixtures/objects';
import { buildPool, healthyInstances, instanceProviderId, type PoolSpec } from './fixtures/pool';

const id = (m: string) => instanceProviderId(DEFAULT_AZURE, 'pool0', m);

function analyse(spec: PoolSpec, now = NOW, previous?: Parameters<typeof analyzePool>[1]['previous']) {
  return analyzePool(buildPool(spec).input, { now, previous });
}
const codes = (spec: PoolSpec) => analyse(spec).findings.map((f) => f.code);

describe('finding codes', () => {
  it.each<[FindingCode, PoolSpec]>([
    ['healthy', { replicas: 2, instances: healthyInstances(2) }],
    [
      'readiness-gate-frozen',
      { replicas: 2, instances: healthyInstances(2), amp: { ready: false }, mp: { providerIDList: [id('0')] } },
    ],
    [
      'workload-cluster-unreachable',
      { replicas: 1, instances: healthyInstances(1), workload: { unreachable: 'connection refused' } },
    ],
    [
      'paused',
      { replicas: 1, instances: healthyInstances(1), mp: { annotations: { 'cluster.x-k8s.io/paused': 'true' } } },
    ],
    [
      'paused',
      { replicas: 1, instances: healthyInstances(1), amp: { annotations: { 'cluster.x-k8s.io/paused': '' } } },
    ],
    ['vmss-failed', { replicas: 1, instances: healthyInstances(1), vmssState: 'Failed' }],
    ['instance-failed', { replicas: 1, instances: [{ member: '0', state: 'Failed', powerState: null, node: 'none' }] }],
    ['node-not-joined', { replicas: 1, instances: [{ member: '0', node: 'none', createdMinutesAgo: 11 }] }],
    ['scaling', { replicas: 3, instances: healthyInstances(2), capacity: 3 }],
    ['model-rollout', { replicas: 2, instances: [{ member: '0', latestModelApplied: false }, { member: '1' }] }],
    [
      'empty-infra-list',
      {
        replicas: 1,
        instances: [{ member: '0', ampm: false }],
        amp: { providerIDList: [] },
        mp: { providerIDList: [id('0')] },
      },
    ],
    [
      'externally-managed-replicas',
      {
        replicas: 1,
        instances: healthyInstances(1),
        mp: { annotations: { 'cluster.x-k8s.io/replicas-managed-by': 'karpenter' } },
      },
    ],
    ['vmss-not-found', { replicas: 1, instances: healthyInstances(1), azure: 'not-found' }],
    ['replicas-unknown', { replicas: null, instances: healthyInstances(1) }],
    [
      'case-mismatch',
      {
        replicas: 1,
        instances: [
          { member: '0', nodeProviderID: id('0').replace('resourceGroups/prod-weu', 'resourceGroups/Prod-WEU') },
        ],
      },
    ],
    [
      'azure-unread',
      {
        replicas: 1,
        instances: healthyInstances(1),
        azure: { throttled: 'Too many requests (429)', retryAfterSeconds: 20 },
      },
    ],
    [
      'order-only',
      {
        replicas: 2,
        instances: healthyInstances(2),
        amp: { providerIDList: [id('1'), id('0')] },
        mp: { providerIDList: [id('0'), id('1')] },
      },
    ],
    [
      'sources-disagree',
      { replicas: 2, instances: healthyInstances(2), mp: { providerIDList: [id('0'), id('1'), id('7')] } },
    ],
    [
      'gate-closed',
      { replicas: 2, instances: healthyInstances(2), amp: { ready: false, provisioningState: 'Creating' } },
    ],
  ])('%s', (code, spec) => {
    expect(codes(spec)).toContain(code);
  });

  it('reads "frozen" only when the lists differ as sets, not when they differ in order', () => {
    expect(
      codes({
        replicas: 2,
        instances: healthyInstances(2),
        amp: { ready: false, providerIDList: [id('1'), id('0')] },
        mp: { providerIDList: [id('0'), id('1')] },
      }),
    ).not.toContain('readiness-gate-frozen');
  });

  it('treats an unset status.ready as a closed gate, as CAPI does', () => {
    const b = buildPool({ replicas: 2, instances: healthyInstances(2), mp: { providerIDList: [id('0')] } });
    delete (b.input.azureMachinePool?.status as Record<string, unknown>).ready;
    expect(analyzePool(b.input, { now: NOW }).findings.map((f) => f.code)).toContain('readiness-gate-frozen');
  });

  it('does not call a pre-v1.20 scale-up a model rollout: CAPZ marks the model out of date whenever the scale set is Updating', () => {
    const found = codes({
      replicas: 3,
      capacity: 3,
      instances: [...healthyInstances(2), { member: '2', node: 'none', createdMinutesAgo: 1 }],
      amp: {
        ready: false,
        provisioningState: 'Updating',
        conditions: [
          { type: 'ScaleSetModelUpdated', status: 'False', reason: 'ScaleSetModelOutOfDate' },
          { type: 'ScaleSetDesiredReplicas', status: 'False', reason: 'ScaleSetScaleUp' },
        ],
      },
    });
    expect(found).toContain('scaling');
    expect(found).not.toContain('model-rollout');
  });

  it('says in the scaling headline what still differs, never counts that are equal', () => {
    const headline = (spec: PoolSpec) => analyse(spec).findings.find((f) => f.code === 'scaling')?.summary;
    expect(headline({ replicas: 3, instances: healthyInstances(2), capacity: 3 })).toBe(
      'Scaling from 2 to 3 replicas.',
    );
    expect(headline({ replicas: 3, instances: healthyInstances(3), capacity: 4 })).toBe(
      'Scaling to 3 replicas: scale set capacity 4, 3 instances in Azure.',
    );
    // CAPZ before v1.20 keeps ScaleSetDesiredReplicas False until its next reconcile after the last instance is
    // ready: every count is 3 (the demo's scale-up showed "capacity 5 and 5 instances differ from the 5 desired").
    expect(
      headline({
        replicas: 3,
        capacity: 3,
        instances: healthyInstances(3),
        amp: {
          ready: false,
          provisioningState: 'Updating',
          conditions: [{ type: 'ScaleSetDesiredReplicas', status: 'False', reason: 'ScaleSetScalingUp' }],
        },
      }),
    ).toBe(
      "Finishing a scale to 3 replicas: the scale set has all 3, but the AzureMachinePool's ScaleSetDesiredReplicas is False (ScaleSetScalingUp).",
    );
    expect(
      headline({
        replicas: 3,
        instances: healthyInstances(3),
        azure: { unknown: 'connection refused' },
        amp: { conditions: [{ type: 'ScaleSetDesiredReplicas', status: 'False', reason: 'ScaleSetScalingUp' }] },
      }),
    ).toBe("Scaling to 3 replicas: the AzureMachinePool's ScaleSetDesiredReplicas is False (ScaleSetScalingUp).");
  });

  it('waits 10 minutes before calling a Node not joined', () => {
    expect(codes({ replicas: 1, instances: [{ member: '0', node: 'none', createdMinutesAgo: 9 }] })).not.toContain(
      'node-not-joined',
    );
  });

  it('does not call a Node gone from a leaving or once-joined instance "not joined"', () => {
    // A scale-down from 4 to 2: CAPZ deleted the two Machines, whose drain removed their Nodes before the VMs go.
    const b = buildPool({
      replicas: 2,
      instances: [...healthyInstances(2), { member: '2', node: 'none' }, { member: '3', node: 'none' }],
    });
    for (const m of b.input.machines ?? []) {
      if (/-[23]$/.test(m.metadata?.name ?? ''))
        (m.metadata as Record<string, unknown>).deletionTimestamp = minutesBefore(NOW, 1);
    }
    const leaving = analyzePool(b.input, { now: NOW }).findings.map((f) => f.code);
    expect(leaving).toContain('scaling');
    expect(leaving).not.toContain('node-not-joined');
    // The Node of a joined instance deleted out of band (its AMPM keeps the nodeRef): a disagreement, not a join failure.
    const c = buildPool({ replicas: 1, instances: [{ member: '0', node: 'none' }] });
    ((c.input.azureMachinePoolMachines ?? [])[0]?.status as Record<string, unknown>).nodeRef = {
      kind: 'Node',
      name: 'pool0-0',
    };
    const gone = analyzePool(c.input, { now: NOW }).findings;
    expect(gone.map((f) => f.code)).toEqual(['sources-disagree']);
    expect(gone[0]?.summary).toBe('Sources disagree on 1 instance: 1 instance running without a Node.');
    // A VM CAPZ has let go (no AMPM, no Machine, out of the lists) that Azure's last read still lists: its Node went
    // with it. The demo's scale-down and spot eviction showed this for the seconds until the next read.
    const released = analyse({
      replicas: 2,
      capacity: 2,
      instances: [...healthyInstances(2), { member: '2', ampm: false, node: 'none' }],
    }).findings.map((f) => f.code);
    expect(released).not.toContain('node-not-joined');
    expect(released).toContain('scaling');
  });

  it('is not healthy while the AzureMachinePool is not ready, though the lists agree: says why and that nothing waits', () => {
    const f = analyse({
      replicas: 2,
      instances: healthyInstances(2),
      capzVersion: 'v1.26.0',
      amp: {
        ready: false,
        provisioningState: 'Creating',
        conditions: [{ type: 'ScaleSetRunning', status: 'False', reason: 'Creating' }],
      },
    }).findings;
    expect(f.map((x) => [x.code, x.severity])).toEqual([['gate-closed', 'info']]);
    expect(f[0]?.summary).toBe(
      'AzureMachinePool not ready (provisioningState Creating, ScaleSetRunning=False/Creating): CAPI copies no list until it is; the lists agree, so nothing waits yet.',
    );
    // Once the lists differ, the freeze says it instead.
    expect(
      codes({ replicas: 2, instances: healthyInstances(2), amp: { ready: false }, mp: { providerIDList: [id('0')] } }),
    ).not.toContain('gate-closed');
  });

  it('ignores replicas-managed-by "false"', () => {
    expect(
      codes({
        replicas: 1,
        instances: healthyInstances(1),
        mp: { annotations: { 'cluster.x-k8s.io/replicas-managed-by': 'false' } },
      }),
    ).toEqual(['healthy']);
  });

  it('is not healthy when a source could not be read', () => {
    expect(codes({ replicas: 1, instances: healthyInstances(1), azure: { unknown: 'not read yet' } })).toEqual([]);
  });

  it('is not healthy when the lists differ in order only, and says what the reorders cost', () => {
    const f = analyse({
      replicas: 2,
      instances: healthyInstances(2),
      amp: { providerIDList: [id('1'), id('0')] },
      mp: { providerIDList: [id('0'), id('1')] },
      capzVersion: 'v1.22.3',
    }).findings;
    expect(f.map((x) => x.code)).toEqual(['order-only']);
    expect(f[0]?.suggestedAction).toBe('Upgrade CAPZ to v1.23 or later. No resync is needed.');
    // CAPZ v1.23 and later sort the list: then something else reorders it.
    const sorted = analyse({
      replicas: 2,
      instances: healthyInstances(2),
      amp: { providerIDList: [id('1'), id('0')] },
      mp: { providerIDList: [id('0'), id('1')] },
      capzVersion: 'v1.25.0',
    }).findings[0];
    expect(sorted?.detail).toContain("This pool's CAPZ (v1.25.0) sorts it already");
  });

  it('always says something when sources disagree: drift no other finding explains, counted by kind, as severe as its worst item', () => {
    // The AzureMachinePool is ready and every count agrees, yet the MachinePool list holds a gone instance and a Node
    // points at another: no cause poolscope knows of.
    const b = buildPool({
      replicas: 2,
      instances: healthyInstances(2),
      mp: { providerIDList: [id('0'), id('1'), id('7')] },
    });
    const ghostNode = structuredClone((b.input.workload as { nodes: unknown[] }).nodes[0]) as {
      metadata: { name: string; uid: string };
      spec: { providerID: string };
    };
    ghostNode.metadata.name = 'pool0-8';
    ghostNode.metadata.uid = 'uid-ghost-node';
    ghostNode.spec.providerID = id('8');
    (b.input.workload as { nodes: unknown[] }).nodes.push(ghostNode);
    const d = analyzePool(b.input, { now: NOW });
    expect(d.findings.map((f) => [f.code, f.severity])).toEqual([['sources-disagree', 'warning']]);
    expect(d.findings[0]?.summary).toBe(
      'Sources disagree on 2 instances: 1 ID in the MachinePool list of instances gone from Azure; 1 Node without an instance in Azure.',
    );
    // Explained drift gets no second sentence.
    expect(
      codes({ replicas: 2, instances: healthyInstances(2), amp: { ready: false }, mp: { providerIDList: [id('0')] } }),
    ).not.toContain('sources-disagree');
  });

  it('names the spellings of case drift and what each disagreement breaks', () => {
    const upper = (s: string) => s.replace('resourceGroups/prod-weu', 'resourceGroups/Prod-WEU');
    // The Nodes spell it otherwise than CAPZ: AMPMs never Ready, no nodeRefs.
    const nodes = analyse({
      replicas: 2,
      instances: healthyInstances(2).map((i) => ({ ...i, nodeProviderID: upper(id(i.member)) })),
      capzVersion: 'v1.19.1',
    }).findings[0];
    expect(nodes?.code).toBe('case-mismatch');
    expect(nodes?.summary).toBe(
      'providerIDs of 2 instances differ only in case between sources: resourceGroups/prod-weu in Azure, the AzureMachinePool list, the MachinePool list, the AMPMs and the Machines; resourceGroups/Prod-WEU in the Nodes.',
    );
    expect(nodes?.detail).toContain('the AMPM never becomes Ready');
    expect(nodes?.detail).toContain('which keeps the AzureMachinePool not ready on this CAPZ');
    expect(nodes?.detail).toContain('CAPI sets no nodeRef');
    expect(nodes?.detail).not.toContain('deleteRetiredNodes deletes');
    // The two lists spell it differently: CAPI's deleteRetiredNodes may delete Nodes.
    const lists = analyse({
      replicas: 1,
      instances: healthyInstances(1),
      mp: { providerIDList: [upper(id('0'))] },
    }).findings;
    expect(lists.map((f) => f.code)).toEqual(['case-mismatch']);
    expect(lists[0]?.detail).toContain('deleteRetiredNodes deletes Nodes');
    expect(lists[0]?.detail).not.toContain('the AMPM never becomes Ready');
  });

  it('says why Azure is not known when it throttles or cannot be reached, but not before its first read', () => {
    const throttled = analyse({
      replicas: 1,
      instances: healthyInstances(1),
      azure: { throttled: 'Too many requests (429).', retryAfterSeconds: 20 },
    }).findings;
    expect(throttled.map((f) => f.code)).toEqual(['azure-unread']);
    expect(throttled[0]?.summary).toBe(
      'Azure is throttling reads of scale set pool0 (it asked to wait 20 s): its instances and capacity are not known now.',
    );
    expect(throttled[0]?.detail).toMatch(/^Azure answered: Too many requests \(429\)\. Without/);
    const b = buildPool({ replicas: 1, instances: healthyInstances(1) });
    b.input.azure = { state: 'unreachable', error: 'connect ECONNREFUSED 10.0.0.1:443' };
    const unreachable = analyzePool(b.input, { now: NOW }).findings;
    expect(unreachable.map((f) => f.summary)).toEqual([
      'Scale set pool0 could not be read from Azure: its instances and capacity are not known now.',
    ]);
    expect(unreachable[0]?.detail).toMatch(/^Azure answered: connect ECONNREFUSED 10\.0\.0\.1:443\. Without/);
  });

  it('calls new instances on their way into the lists scaling, though every count and condition already agrees (CAPZ before v1.20)', () => {
    // The demo's scale-up from 3 to 5, a moment after the scale set's update: capacity and Azure already at 5,
    // ScaleSetDesiredReplicas still True, the MachinePool phase Provisioned; CAPZ has no AMPMs for the two yet.
    const spec: PoolSpec = {
      replicas: 5,
      instances: [
        ...healthyInstances(3),
        { member: '3', ampm: false, node: 'none', createdMinutesAgo: 1 },
        { member: '4', ampm: false, node: 'none', createdMinutesAgo: 1 },
      ],
      amp: {
        ready: false,
        provisioningState: 'Updating',
        conditions: [
          { type: 'ScaleSetDesiredReplicas', status: 'True' },
          { type: 'ScaleSetModelUpdated', status: 'False', reason: 'ScaleSetModelOutOfDate' },
        ],
      },
      mp: { phase: 'Provisioned' },
    };
    const f = analyse(spec).findings;
    expect(f.map((x) => x.code)).toEqual(['scaling']);
    expect(f[0]?.summary).toBe('Scaling from 3 to 5 replicas.');
    expect(f[0]?.detail).toContain('2 new instances not yet a ready AMPM in the AzureMachinePool list');
    // Past the Node's grace they are not on their way any more. Without AMPMs they wait for CAPZ, not for a Node:
    // no cause poolscope knows of.
    const stale = analyse({
      ...spec,
      instances: spec.instances.map((i) => (i.ampm === false ? { ...i, createdMinutesAgo: 30 } : i)),
    }).findings;
    expect(stale.map((x) => x.code)).toEqual(['sources-disagree']);
    expect(stale[0]?.summary).toBe(
      'Sources disagree on 2 instances: 2 instances not in the MachinePool list (the autoscaler cannot see them); 2 instances in Azure not in the AzureMachinePool list; 2 instances running without a Node.',
    );
  });

  it("takes an instance newer than Azure's last read for one on its way in, not for a ghost", () => {
    // Azure listed the scale set a minute ago; CAPZ has since listed a new VM (its AMPM 30 s old, not ready yet).
    const d = analyse({
      replicas: 4,
      capacity: 4,
      azureReadMinutesAgo: 1,
      instances: [...healthyInstances(3), { member: '3', inAzure: false, node: 'none', createdMinutesAgo: 0.5 }],
      amp: { ready: true },
      mp: { phase: 'ScalingUp' },
    });
    expect(d.drift).toEqual([]);
    expect(d.findings.map((f) => f.code)).toEqual(['scaling']);
    expect(d.findings[0]?.detail).toContain('1 new instance not yet a ready AMPM in the AzureMachinePool list');
    expect(d.instances.map((r) => [r.providerID.split('/').pop(), r.awaitingAzureRead])).toEqual([
      ['0', undefined],
      ['1', undefined],
      ['2', undefined],
      ['3', true],
    ]);
    // Once its AMPM is ready and listed, it is no longer counted as joining (nor drift) until Azure is read again.
    const joined = analyse({
      replicas: 4,
      capacity: 4,
      azureReadMinutesAgo: 1,
      instances: [...healthyInstances(3), { member: '3', inAzure: false, createdMinutesAgo: 0.5 }],
    });
    expect(joined.drift).toEqual([]);
    expect(joined.findings.find((f) => f.code === 'scaling')?.detail ?? '').not.toContain('new instance');
    // A spot eviction, replaced: Azure's read lists 0–2 and 4 (4 for 4 replicas); since then, 4's AMPM went and 3
    // (its replacement) joined and is ready. Healthy, saying what the next read has to confirm.
    const settled = analyse({
      replicas: 4,
      capacity: 4,
      azureReadMinutesAgo: 1,
      departedAmpms: [{ member: '4', minutesAgo: 0.5 }],
      instances: [
        ...healthyInstances(3),
        { member: '3', inAzure: false, createdMinutesAgo: 0.5 },
        { member: '4', ampm: false, node: 'none' },
      ],
    });
    expect(settled.drift).toEqual([]);
    expect(settled.findings.map((f) => [f.code, f.summary])).toEqual([
      ['healthy', 'Healthy: every source agrees, Azure up to its last read; 2 instances came or went since.'],
    ]);
    expect(settled.findings[0]?.detail).toContain(
      "Azure's last read predates the AMPMs of 2 instances, made or deleted since; its next read confirms them.",
    );
  });

  it("does not report a failed instance whose AMPM went after Azure's last read (CAPZ is deleting it)", () => {
    // Azure's read, a minute old, lists 3 as Failed. The operator deleted its Machine since: its AMPM is gone.
    const spec = (departed: boolean): PoolSpec => ({
      replicas: 3,
      capacity: 3,
      azureReadMinutesAgo: 1,
      vmssState: 'Failed',
      amp: { ready: true },
      ...(departed ? { departedAmpms: [{ member: '3', minutesAgo: 0.5 }] } : {}),
      instances: [
        ...healthyInstances(3),
        { member: '3', state: 'Failed', errorCode: 'AllocationFailed', ampm: !departed, node: 'none' },
      ],
    });
    const before = analyse(spec(false)).findings;
    expect(before.map((f) => f.code)).toContain('instance-failed');
    expect(before.find((f) => f.code === 'vmss-failed')?.summary).toContain('(1 instance failed: AllocationFailed)');
    const after = analyse(spec(true)).findings;
    expect(after.map((f) => f.code)).not.toContain('instance-failed');
    // The scale set's own state is as read: still Failed until the next read, with no failed instance to name.
    expect(after.find((f) => f.code === 'vmss-failed')?.summary).toMatch(/provisioningState Failed\.$/);
  });

  it('rates vmss-failed critical when it closes the gate and warning when the pool stays ready', () => {
    const sev = (ready: boolean) =>
      analyse({ replicas: 1, instances: healthyInstances(1), vmssState: 'Failed', amp: { ready } }).findings.find(
        (f) => f.code === 'vmss-failed',
      )?.severity;
    expect(sev(false)).toBe('critical');
    expect(sev(true)).toBe('warning');
  });

  it('falls back to the AMPMs for failed instances when Azure is not read', () => {
    const f = analyse({
      replicas: 1,
      instances: [{ member: '0', state: 'Failed', node: 'none' }],
      azure: { unknown: 'x' },
    }).findings;
    expect(f.map((x) => x.code)).toEqual(['instance-failed']);
    expect(f[0]?.summary).toBe('1 instance failed.');
  });

  it('orders findings by severity, then by importance', () => {
    const f = analyse({
      replicas: null,
      instances: [{ member: '0', state: 'Failed', powerState: null, node: 'none' }],
      vmssState: 'Failed',
      clusterPaused: true,
    }).findings;
    expect(f.map((x) => `${x.severity}:${x.code}`)).toEqual([
      'warning:paused',
      'warning:vmss-failed',
      'warning:instance-failed',
      'warning:replicas-unknown',
    ]);
  });
});

describe('since and duration', () => {
  const frozen: PoolSpec = {
    replicas: 2,
    instances: healthyInstances(2),
    mp: { providerIDList: [id('0')] },
    amp: {
      ready: false,
      conditions: [
        { type: 'Ready', status: 'False', reason: 'ScaleSetScalingUp', lastTransitionTime: minutesBefore(NOW, 75) },
      ],
    },
  };

  it('derives the freeze start from the AzureMachinePool Ready condition', () => {
    const [f] = analyse(frozen).findings;
    expect(f?.since).toBe(minutesBefore(NOW, 75));
    expect(f?.summary).toMatch(/^MachinePool providerIDList frozen: /);
    expect(headline(f!, NOW)).toMatch(/^MachinePool providerIDList frozen for 1 h 15 min: /);
  });

  it("says how long on the fleet too, from the summary's worst and active findings", () => {
    const { summary } = analyse(frozen);
    const worst = summary.worstFinding as NonNullable<typeof summary.worstFinding>;
    expect(worst.summary).toMatch(/^MachinePool providerIDList frozen: /);
    expect(worstHeadline(worst, summary.activeFindings, NOW)).toMatch(
      /^MachinePool providerIDList frozen for 1 h 15 min: /,
    );
    expect(worstHeadline(worst, [], NOW)).toBe(worst.summary);
  });

  it('keeps the first-seen time across analyses', () => {
    const first = analyse(frozen);
    const older = minutesBefore(NOW, 200);
    const later = minutesBefore(NOW, -10);
    const again = analyse(frozen, later, {
      drift: first.drift,
      findings: first.findings.map((f) => ({ ...f, since: older })),
    });
    expect(again.findings[0]?.since).toBe(older);
    expect(headline(again.findings[0]!, later)).toMatch(/^MachinePool providerIDList frozen for 3 h 30 min: /);
    // The stored summary does not change as time passes, so nothing is rewritten every cycle.
    expect(again.findings[0]?.summary).toBe(first.findings[0]?.summary);
  });

  it('stamps a finding that appears after the first analysis with now, when nothing better is known', () => {
    const first = analyse({ replicas: 1, instances: healthyInstances(1) });
    const later = minutesBefore(NOW, -1);
    const again = analyse({ replicas: null, instances: healthyInstances(1) }, later, first);
    expect(again.findings[0]).toMatchObject({ code: 'replicas-unknown', since: later });
  });

  it("dates a freeze whose condition time is ahead of poolscope's clock (an API server's clock ahead) to when it was seen", () => {
    const ahead: PoolSpec = {
      ...frozen,
      amp: {
        ready: false,
        conditions: [
          { type: 'Ready', status: 'False', reason: 'ScaleSetScalingUp', lastTransitionTime: minutesBefore(NOW, -2) },
        ],
      },
    };
    const first = analyse(ahead);
    expect(first.findings[0]).toMatchObject({ code: 'readiness-gate-frozen', since: NOW });
    // Carried forward from there: it counts up from when it was seen.
    const later = minutesBefore(NOW, -5);
    const again = analyse(ahead, later, first);
    expect(again.findings[0]?.since).toBe(NOW);
    expect(headline(again.findings[0]!, later)).toMatch(/^MachinePool providerIDList frozen for 5 min: /);
  });

  it('says nothing about duration when the start is unknown', () => {
    const [f] = analyse({ ...frozen, amp: { ready: false, conditions: [] } }).findings;
    expect(f?.since).toBeUndefined();
    expect(f?.summary).toMatch(/^MachinePool providerIDList frozen: /);
    expect(headline(f!, NOW)).toBe(f?.summary);
  });
});

describe('idDiff', () => {
  it('lists what a list gains and loses, each ID once, repeats and order aside', () => {
    expect(idDiff(['a', 'b'], ['b', 'c', 'c'])).toEqual({ add: ['c'], remove: ['a'] });
    expect(idDiff(['b', 'a'], ['a', 'b'])).toEqual({ add: [], remove: [] });
    // Same length, one side repeating an ID: still a difference.
    expect(idDiff(['x', 'y'], ['x', 'x'])).toEqual({ add: [], remove: ['y'] });
  });
});

describe('listDiff', () => {
  it('diffs one MachinePool list against each AzureMachinePool list it meets, the same again as often as asked', () => {
    const b = buildPool({ replicas: 2, instances: healthyInstances(2) });
    const mp = buildPoolModel(b.input);
    const withAmp = (ids: string[]) => ({ ...mp, amp: mp.amp && { ...mp.amp, providerIDList: ids } });
    const [a, c] = mp.mp.providerIDList as [string, string];
    expect(listDiff(withAmp([a]))).toEqual({ add: [], remove: [c] });
    expect(listDiff(withAmp([a, c, 'azure:///x']))).toEqual({ add: ['azure:///x'], remove: [] });
    const same = withAmp([c]);
    expect(listDiff(same)).toEqual({ add: [], remove: [a] });
    expect(listDiff(same)).toEqual({ add: [], remove: [a] });
    expect(listDiff({ ...mp, amp: null })).toEqual({ add: [], remove: [a, c] });
  });
});

describe('who cannot reach what', () => {
  const frozen = { replicas: 2, instances: healthyInstances(2), mp: { providerIDList: [id('0')] } } satisfies PoolSpec;
  const down = {
    state: 'unreachable',
    error: 'list /apis/cluster.x-k8s.io/v1beta2/machinepools: connection refused',
  } as const;

  it("blames poolscope's own link, not CAPI, when the management cluster is out of reach too", () => {
    const d = analyzePool(
      buildPool({ ...frozen, workload: { unreachable: 'list /api/v1/nodes: connection refused' } }).input,
      { now: NOW, kube: down },
    );
    expect(d.findings.map((f) => [f.code, f.severity])).toEqual([['management-cluster-unreachable', 'warning']]);
    const [f] = d.findings;
    expect(f?.summary).toBe('poolscope cannot reach management cluster mgmt-weu: this pool is shown as last seen.');
    expect(f?.detail).toMatch(
      /^Reading mgmt-weu failed: list \/apis\/cluster\.x-k8s\.io\/v1beta2\/machinepools: connection refused\. This is poolscope's own connection/,
    );
    expect(f?.detail).toContain("cannot read the workload cluster's Nodes either");
    expect(d.findings.some((x) => /CAPI cannot/.test(x.summary))).toBe(false);
    expect(d.verdict.reconcile).toMatchObject({
      allowed: false,
      reason: expect.stringMatching(/^poolscope cannot reach management cluster mgmt-weu/),
    });
    expect(d.verdict.syncProviderIds.allowed).toBe(false);
  });

  it("says CAPI still reaches the workload cluster when its Cluster's RemoteConnectionProbe is True", () => {
    const d = analyse({
      ...frozen,
      amp: { ready: true },
      workload: { unreachable: 'list /api/v1/nodes: HTTP 401 Unauthorized', capiProbe: 'True' },
    });
    const f = d.findings.find((x) => x.code === 'workload-cluster-unreachable');
    expect(f).toMatchObject({
      severity: 'warning',
      summary: "poolscope cannot read workload cluster prod-weu's Nodes; CAPI still reaches it.",
    });
    expect(f?.suggestedAction).toMatch(/poolscope's path to the workload API server/);
  });

  it('says CAPI cannot reach it either when the probe is False, since the probe failed', () => {
    const d = analyse({
      ...frozen,
      workload: { unreachable: 'list /api/v1/nodes: connection refused', capiProbe: 'False' },
    });
    const f = d.findings.find((x) => x.code === 'workload-cluster-unreachable');
    expect(f).toMatchObject({
      severity: 'critical',
      summary: 'Workload cluster prod-weu is unreachable, for CAPI too: CAPI cannot update this pool.',
      since: minutesBefore(NOW, 7),
    });
    expect(f?.detail).toContain(
      'RemoteConnectionProbe condition is False (ProbeFailed: Remote connection probe failed): CAPI cannot reach it either.',
    );
  });

  it('does not claim what CAPI sees when the Cluster does not say', () => {
    const f = analyse({ ...frozen, workload: { unreachable: 'list /api/v1/nodes: connection refused' } }).findings.find(
      (x) => x.code === 'workload-cluster-unreachable',
    );
    expect(f).toMatchObject({
      severity: 'critical',
      summary: "poolscope cannot read workload cluster prod-weu's Nodes; CAPI may not reach it either.",
    });
    expect(f?.detail).toContain('Whether CAPI reaches it is not known');
  });
});

describe("an ID of another pool's scale set in this pool's list", () => {
  // Two pools of one workload cluster: pool-a's MachinePool list holds pool-b's instance 0 (hand-edited or stale).
  const a = buildPool({ name: 'pool-a', replicas: 2, instances: healthyInstances(2) });
  const b = buildPool({ name: 'pool-b', replicas: 2, instances: healthyInstances(2) });
  const bId = b.ids[0] as string;
  const nodes = (p: typeof a) => (p.input.workload?.state === 'ok' ? p.input.workload.nodes : []);
  const cluster = { state: 'ok' as const, nodes: [...nodes(a), ...nodes(b)] };
  const bKey = `${DEFAULT_AZURE.subscriptionId}/${DEFAULT_AZURE.resourceGroup}/pool-b`.toLowerCase();
  const aInput = {
    ...a.input,
    machinePool: { ...a.input.machinePool, spec: { ...a.input.machinePool.spec, providerIDList: [...a.ids, bId] } },
    workload: cluster,
    otherScaleSetPools: { [bKey]: 'default/pool-b' },
  };

  it("says so on pool-a's page, naming pool-b, instead of a ghost or an orphan Node", () => {
    const d = analyzePool(aInput, { now: NOW });
    expect(d.drift.map((x) => [x.kind, x.providerID])).toEqual([['other-scale-set', bId]]);
    expect(d.drift[0]?.summary).toBe(
      "Names scale set pool-b (pool default/pool-b's), not this pool's, yet the MachinePool list holds it: CAPI takes it as this pool's.",
    );
    expect(d.findings.map((f) => [f.code, f.severity])).toEqual([['other-scale-set-ids', 'warning']]);
    const f = d.findings[0];
    expect(f?.summary).toBe(
      "The MachinePool list holds 1 ID of another scale set (scale set pool-b (pool default/pool-b's)): CAPI treats it as this pool's.",
    );
    expect(f?.detail).toContain('deleteRetiredNodes');
    // Copying the AzureMachinePool list removes it; the verdict says what that does to pool-b's Node.
    expect(d.verdict.syncProviderIds.wouldRemove).toEqual([bId]);
    expect(d.verdict.syncProviderIds.reason).toMatch(
      /1 of them of another scale set, whose Node CAPI may then delete once as retired/,
    );
  });

  it('leaves pool-b healthy', () => {
    const d = analyzePool({ ...b.input, workload: cluster }, { now: NOW });
    expect(d.findings.map((f) => f.code)).toEqual(['healthy']);
    expect(d.drift).toEqual([]);
  });

  it('names the scale set alone when no pool of the management cluster has it, and refuses to copy such an ID from the AzureMachinePool list', () => {
    const ampList = [...a.ids, bId];
    const d = analyzePool(
      {
        ...aInput,
        otherScaleSetPools: {},
        azureMachinePool: {
          ...a.input.azureMachinePool!,
          spec: { ...a.input.azureMachinePool!.spec, providerIDList: ampList },
        },
      },
      { now: NOW },
    );
    expect(d.drift.map((x) => x.kind)).toEqual(['other-scale-set']);
    expect(d.findings[0]?.summary).toBe(
      "The MachinePool and AzureMachinePool lists hold 1 ID of another scale set (scale set pool-b, which no pool of mgmt-weu uses): CAPI treats it as this pool's.",
    );
    expect(d.verdict.syncProviderIds).toMatchObject({
      allowed: false,
      reason:
        "The AzureMachinePool list holds 1 ID of another scale set; copying it would make CAPI take that instance as this pool's.",
    });
  });
});

describe('a Failed instance without a Node', () => {
  it('is counted as failed, not as a running instance without a Node, even when its VM runs', () => {
    const d = analyse({
      replicas: 2,
      instances: [
        { member: '0' },
        {
          member: '1',
          state: 'Failed',
          powerState: 'running',
          errorCode: 'VMExtensionProvisioningError',
          node: 'none',
        },
      ],
    });
    expect(d.drift.map((x) => x.kind)).not.toContain('instance-without-node');
    expect(d.findings.map((f) => f.code)).toContain('instance-failed');
    expect(d.summary.driftCounts['instance-without-node'] ?? 0).toBe(0);
  });
});
