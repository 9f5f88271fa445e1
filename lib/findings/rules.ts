// Every finding's rule, in the order that breaks ties between findings of one severity (the most fundamental
// first). A rule returns its finding or null from a context computed once (./context); a rule that reads which
// findings the others found (afterOthers) runs after all those that do not, in this order. Adding a finding is a
// rule here and its code in lib/api-types' FindingCode.

import type { FindingCode } from '../api-types';
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

/** Tie-break order among findings of equal severity. */
export const FINDING_ORDER: readonly FindingCode[] = RULES.map((r) => r.code);
