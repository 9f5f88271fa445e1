// Every finding's rule, in the order that breaks ties between findings of one severity (the most fundamental
// first). A rule returns its finding or null from a context computed once (./context); a rule that reads which
// findings the others found (afterOthers) runs after all those that do not, in this order. Adding a finding is a
// rule here (in RULES, AKS_RULES or both) and its code in lib/api-types' FindingCode.

import type { FindingCode, PoolFlavour } from '../api-types';
import {
  aksGateClosed,
  aksHealthy,
  aksListFrozen,
  aksNodesUnmapped,
  aksOperation,
  aksPoolFailed,
  aksReplicasCached,
  aksUnread,
  aksUpdateLoop,
} from './aks';
import {
  azureUnread,
  goneFromAzureFinding,
  instanceFailed,
  nodeNotJoined,
  vmssFailedFinding,
  vmssNotFound,
} from './azure';
import type { Rule } from './context';
import {
  emptyInfraList,
  externallyManaged,
  managementUnreachable,
  otherScaleSetFinding,
  paused,
  replicasUnknown,
  workloadUnreachable,
} from './kube';
import { caseMismatch, gateClosedFinding, healthy, orderOnly, readinessGateFrozen, sourcesDisagree } from './lists';
import { modelRollout, scalingFinding } from './motion';

/** The rules of a self-managed pool (AzureMachinePool). */
export const RULES: readonly Rule[] = [
  { code: 'vmss-not-found', find: vmssNotFound },
  { code: 'management-cluster-unreachable', find: managementUnreachable },
  { code: 'workload-cluster-unreachable', find: workloadUnreachable },
  { code: 'readiness-gate-frozen', find: readinessGateFrozen },
  { code: 'case-mismatch', find: caseMismatch },
  { code: 'other-scale-set-ids', find: (c) => otherScaleSetFinding(c.model, c.drift) },
  { code: 'paused', find: paused },
  { code: 'vmss-failed', find: vmssFailedFinding },
  { code: 'instance-failed', find: instanceFailed },
  { code: 'node-not-joined', find: nodeNotJoined },
  { code: 'instances-gone-from-azure', find: (c) => goneFromAzureFinding(c.model, c.joined, c.drift, c.nowMs) },
  { code: 'azure-unread', find: azureUnread },
  { code: 'empty-infra-list', find: emptyInfraList },
  { code: 'replicas-unknown', find: replicasUnknown },
  { code: 'sources-disagree', afterOthers: true, find: sourcesDisagree },
  { code: 'externally-managed-replicas', find: externallyManaged },
  { code: 'scaling', find: scalingFinding },
  { code: 'model-rollout', find: modelRollout },
  { code: 'order-only', find: orderOnly },
  { code: 'gate-closed', afterOthers: true, find: gateClosedFinding },
  { code: 'healthy', afterOthers: true, find: healthy },
];

/**
 * The rules of an AKS pool (AzureManagedMachinePool, AzureASOManagedMachinePool): the shared ones that mean the same,
 * and their own (./aks). No scale set, AMPM or Machine rule: an AKS pool has none of those objects of its own.
 */
export const AKS_RULES: readonly Rule[] = [
  { code: 'management-cluster-unreachable', find: managementUnreachable },
  { code: 'workload-cluster-unreachable', find: workloadUnreachable },
  { code: 'readiness-gate-frozen', find: aksListFrozen },
  { code: 'aks-pool-failed', find: aksPoolFailed },
  { code: 'case-mismatch', find: caseMismatch },
  { code: 'paused', find: paused },
  // The loop first: each of its writes is an operation, and the loop is what to fix.
  { code: 'aks-update-loop', find: aksUpdateLoop },
  { code: 'aks-operation', find: aksOperation },
  { code: 'aks-nodes-unmapped', find: aksNodesUnmapped },
  { code: 'azure-unread', find: aksUnread },
  { code: 'replicas-unknown', find: replicasUnknown },
  { code: 'sources-disagree', afterOthers: true, find: sourcesDisagree },
  { code: 'aks-replicas-cached', find: aksReplicasCached },
  { code: 'order-only', find: orderOnly },
  { code: 'gate-closed', afterOthers: true, find: aksGateClosed },
  { code: 'healthy', afterOthers: true, find: aksHealthy },
];

/** The rules that apply to a pool of this flavour. */
export function rulesFor(flavour: PoolFlavour): readonly Rule[] {
  return flavour === 'self-managed' ? RULES : AKS_RULES;
}

/**
 * Tie-break order among findings of equal severity: the self-managed rules' order, each AKS-only code placed after
 * the code its rule follows in AKS_RULES.
 */
export const FINDING_ORDER: readonly FindingCode[] = AKS_RULES.reduce<FindingCode[]>(
  (order, rule, i) => {
    if (order.includes(rule.code)) return order;
    const after = order.indexOf((AKS_RULES[i - 1] as Rule).code);
    return [...order.slice(0, after + 1), rule.code, ...order.slice(after + 1)];
  },
  RULES.map((r) => r.code),
);
