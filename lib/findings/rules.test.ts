// The rules table is the diagnosis' one list of findings: each code once, in the tie-break order, the rules that
// read the others' findings marked so.

import { describe, expect, it } from 'vitest';
import type { FindingCode } from '../api-types';
import { AKS_RULES, FINDING_ORDER, RULES, rulesFor } from './rules';

/** Every FindingCode: a code missing here fails to compile (the Record needs every key). */
const ALL: Record<FindingCode, true> = {
  'readiness-gate-frozen': true,
  'case-mismatch': true,
  'management-cluster-unreachable': true,
  'workload-cluster-unreachable': true,
  'other-scale-set-ids': true,
  paused: true,
  'vmss-failed': true,
  'instance-failed': true,
  'node-not-joined': true,
  'instances-gone-from-azure': true,
  'azure-unread': true,
  scaling: true,
  'model-rollout': true,
  'order-only': true,
  'empty-infra-list': true,
  'externally-managed-replicas': true,
  'vmss-not-found': true,
  'replicas-unknown': true,
  'sources-disagree': true,
  'gate-closed': true,
  'aks-pool-failed': true,
  'aks-operation': true,
  'aks-replicas-cached': true,
  'aks-nodes-unmapped': true,
  'aks-update-loop': true,
  healthy: true,
};

describe('the rules', () => {
  it('are exactly these, in this order', () => {
    expect(FINDING_ORDER).toEqual([
      'vmss-not-found',
      'management-cluster-unreachable',
      'workload-cluster-unreachable',
      'readiness-gate-frozen',
      'aks-pool-failed',
      'case-mismatch',
      'other-scale-set-ids',
      'paused',
      'aks-update-loop',
      'aks-operation',
      'aks-nodes-unmapped',
      'vmss-failed',
      'instance-failed',
      'node-not-joined',
      'instances-gone-from-azure',
      'azure-unread',
      'empty-infra-list',
      'replicas-unknown',
      'sources-disagree',
      'aks-replicas-cached',
      'externally-managed-replicas',
      'scaling',
      'model-rollout',
      'order-only',
      'gate-closed',
      'healthy',
    ]);
  });
  it('cover every finding code, each once', () => {
    expect([...FINDING_ORDER].sort()).toEqual(Object.keys(ALL).sort());
  });
  it('run those that read the other findings last: sources-disagree, gate-closed, healthy', () => {
    for (const rules of [RULES, AKS_RULES])
      expect(rules.filter((r) => r.afterOthers).map((r) => r.code)).toEqual([
        'sources-disagree',
        'gate-closed',
        'healthy',
      ]);
  });
  it('for an AKS pool are exactly these: no scale set, AMPM or Machine rule', () => {
    expect(AKS_RULES.map((r) => r.code)).toEqual([
      'management-cluster-unreachable',
      'workload-cluster-unreachable',
      'readiness-gate-frozen',
      'aks-pool-failed',
      'case-mismatch',
      'paused',
      'aks-update-loop',
      'aks-operation',
      'aks-nodes-unmapped',
      'azure-unread',
      'replicas-unknown',
      'sources-disagree',
      'aks-replicas-cached',
      'order-only',
      'gate-closed',
      'healthy',
    ]);
    expect(rulesFor('aks-aso')).toBe(AKS_RULES);
    expect(rulesFor('aks-managed')).toBe(AKS_RULES);
    expect(rulesFor('self-managed')).toBe(RULES);
  });
  it('give the AKS-only codes a place in the tie-break order, each once', () => {
    expect(new Set(FINDING_ORDER).size).toBe(FINDING_ORDER.length);
    for (const r of AKS_RULES) expect(FINDING_ORDER).toContain(r.code);
  });
});
