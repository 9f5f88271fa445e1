import { describe, expect, it } from 'vitest';
import { analyzePool } from './analyze';
import { DEFAULT_AZURE, NOW } from './fixtures/objects';
import { buildPool, healthyInstances, instanceProviderId, type PoolSpec } from './fixtures/pool';

const id = (m: string) => instanceProviderId(DEFAULT_AZURE, 'pool0', m);
const verdict = (spec: PoolSpec) => analyzePool(buildPool(spec).input, { now: NOW }).verdict;

/** A pool whose list is frozen and which a list repair can fix. */
const frozen: PoolSpec = {
  replicas: 3,
  instances: healthyInstances(3),
  amp: { ready: false },
  mp: { providerIDList: [id('0'), id('9')] },
};

describe('resync verdict', () => {
  it('recommends repairing the list when the gate is closed and the AMP list is sound', () => {
    expect(verdict(frozen)).toEqual({
      recommended: 'sync-provider-ids',
      reconcile: {
        allowed: true,
        canHelp: false,
        reason:
          "The AzureMachinePool is not ready: a reconcile re-runs the controllers but cannot get past CAPI's readiness gate.",
      },
      syncProviderIds: {
        allowed: true,
        canHelp: true,
        reason:
          'CAPI will not copy the list while the AzureMachinePool is not ready; this writes exactly what it would copy (2 to add, 1 to remove).',
        wouldAdd: [id('1'), id('2')],
        wouldRemove: [id('9')],
        wouldAddWithoutNode: [],
      },
    });
  });

  it('says when the copy would add a failed instance or one without a Node, and what the autoscaler does then', () => {
    const v = verdict({
      ...frozen,
      instances: [{ member: '0' }, { member: '1', state: 'Failed' }, { member: '2', node: 'none' }],
    });
    expect(v.syncProviderIds.wouldAddWithoutNode).toEqual([id('1'), id('2')]);
    expect(v.syncProviderIds.reason).toContain(
      'It adds 2 instances without a Node (failed or not joined yet): cluster-autoscaler counts them as nodes still registering and removes them after its max-node-provision-time (15 min by default), through Machine deletion.',
    );
  });

  it('recommends no resync when the scale set is gone: CAPZ re-creates it', () => {
    const v = verdict({ ...frozen, azure: 'not-found' });
    expect(v.recommended).toBeNull();
    expect(v.reconcile).toMatchObject({ allowed: true, canHelp: false });
    expect(v.reconcile.reason).toMatch(/^The scale set does not exist in Azure\. CAPZ re-creates it/);
    expect(v.syncProviderIds).toMatchObject({ allowed: false, canHelp: false });
  });

  it('recommends a reconcile when the gate is open and CAPI just has not copied yet', () => {
    const v = verdict({ ...frozen, amp: { ready: true } });
    expect(v.recommended).toBe('reconcile');
    expect(v.reconcile).toMatchObject({ allowed: true, canHelp: true });
    expect(v.syncProviderIds).toMatchObject({ allowed: true, canHelp: true });
  });

  it.each<[string, PoolSpec, RegExp]>([
    ['paused (Cluster)', { ...frozen, clusterPaused: true }, /^The pool is paused/],
    [
      'paused (MachinePool annotation)',
      { ...frozen, mp: { ...frozen.mp, annotations: { 'cluster.x-k8s.io/paused': '' } } },
      /^The pool is paused/,
    ],
    [
      'paused (AzureMachinePool annotation)',
      { ...frozen, amp: { ready: false, annotations: { 'cluster.x-k8s.io/paused': '' } } },
      /^The pool is paused/,
    ],
    [
      'MachinePool being deleted',
      { ...frozen, mp: { ...frozen.mp, deleting: true } },
      /^The MachinePool is being deleted/,
    ],
  ])('refuses both modes when %s', (_name, spec, reason) => {
    const v = verdict(spec);
    expect(v.recommended).toBeNull();
    expect(v.reconcile).toMatchObject({ allowed: false, canHelp: false });
    expect(v.reconcile.reason).toMatch(reason);
    expect(v.syncProviderIds).toMatchObject({ allowed: false, canHelp: false });
    expect(v.syncProviderIds.reason).toMatch(reason);
  });

  it('refuses both modes when the Cluster is being deleted', () => {
    const b = buildPool(frozen);
    b.input.cluster!.metadata!.deletionTimestamp = NOW;
    const v = analyzePool(b.input, { now: NOW }).verdict;
    expect(v.syncProviderIds).toMatchObject({ allowed: false, reason: 'The Cluster is being deleted.' });
    expect(v.reconcile).toMatchObject({ allowed: false, reason: 'The Cluster is being deleted.' });
  });

  it.each<[string, PoolSpec, string]>([
    [
      'the AMP list is empty while replicas > 0',
      {
        replicas: 2,
        instances: healthyInstances(2).map((i) => ({ ...i, ampm: false })),
        amp: { ready: false, providerIDList: [] },
        mp: { providerIDList: [id('0'), id('1')] },
      },
      'The AzureMachinePool list is empty while replicas > 0; copying it would drop every instance.',
    ],
    [
      'the AMP list holds IDs absent from Azure',
      {
        replicas: 2,
        instances: [{ member: '0' }, { member: '1', inAzure: false }],
        amp: { ready: false },
        mp: { providerIDList: [id('0')] },
      },
      'The AzureMachinePool list holds 1 ID absent from Azure; copying it would add ghosts.',
    ],
    [
      'case-mismatch drift exists',
      {
        ...frozen,
        instances: [...healthyInstances(2), { member: '2', nodeProviderID: id('2').replace('prod-weu', 'Prod-WEU') }],
      },
      'Sources disagree on the case of some providerIDs; rewriting the list could make CAPI delete Nodes it believes retired.',
    ],
    [
      'Azure could not be read',
      { ...frozen, azure: { unknown: 'timeout' } },
      'Azure could not be read, so poolscope cannot check that every ID in the AzureMachinePool list still exists.',
    ],
    [
      'the workload cluster is unreachable',
      { ...frozen, workload: { unreachable: 'no route' } },
      "poolscope cannot read the workload cluster's Nodes, so it cannot check the list against them (and if CAPI cannot reach it either, it cannot maintain nodeRefs for a rewritten list); restore connectivity first.",
    ],
    [
      'there is nothing to change',
      { replicas: 2, instances: healthyInstances(2), amp: { ready: false } },
      'The MachinePool list already holds the same IDs as the AzureMachinePool list.',
    ],
  ])('refuses sync-provider-ids when %s', (_name, spec, reason) => {
    expect(verdict(spec).syncProviderIds).toMatchObject({ allowed: false, canHelp: false, reason });
  });

  it('still previews what a refused sync would change', () => {
    const v = verdict({ ...frozen, workload: { unreachable: 'no route' } });
    expect(v.syncProviderIds.wouldAdd).toEqual([id('1'), id('2')]);
    expect(v.syncProviderIds.wouldRemove).toEqual([id('9')]);
  });

  it('says a reconcile cannot help while the workload cluster is unreachable', () => {
    expect(verdict({ ...frozen, amp: { ready: true }, workload: { unreachable: 'x' } }).reconcile).toMatchObject({
      allowed: true,
      canHelp: false,
    });
  });

  it('refuses both modes when there is no AzureMachinePool', () => {
    const b = buildPool(frozen);
    b.input.azureMachinePool = null;
    const v = analyzePool(b.input, { now: NOW }).verdict;
    expect(v.reconcile).toMatchObject({
      allowed: false,
      reason: 'No AzureMachinePool was found for this MachinePool.',
    });
    expect(v.syncProviderIds).toMatchObject({
      allowed: false,
      reason: 'No AzureMachinePool was found for this MachinePool.',
    });
  });
});
