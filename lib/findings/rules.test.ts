// The rules table is the diagnosis' one list of findings: each code once, in the tie-break order, the rules that
// read the others' findings marked so.

import { describe, expect, it } from 'vitest';
import type { FindingCode } from '../api-types';
import { FINDING_ORDER, RULES } from './rules';

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
  healthy: true,
};

describe('the rules', () => {
  it('are exactly these, in this order', () => {
    expect(FINDING_ORDER).toEqual([
      'vmss-not-found',
      'management-cluster-unreachable',
      'workload-cluster-unreachable',
      'readiness-gate-frozen',
      'case-mismatch',
      'other-scale-set-ids',
      'paused',
      'vmss-failed',
      'instance-failed',
      'node-not-joined',
      'instances-gone-from-azure',
      'azure-unread',
      'empty-infra-list',
      'replicas-unknown',
      'sources-disagree',
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
    expect(RULES.filter((r) => r.afterOthers).map((r) => r.code)).toEqual([
      'sources-disagree',
      'gate-closed',
      'healthy',
    ]);
  });
});
