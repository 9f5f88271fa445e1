// What the pool model reads of CAPZ's self-managed pool objects: the AzureMachinePool and its
// AzureMachinePoolMachines (docs/domain.md, "CAPZ's AzureMachinePool").

import { orchestration, PROVISIONING_STATES } from './azure-model';
import { annotation, conditionsAt, PAUSED_ANNOTATION, providerIdList, type Condition } from './capi-model';
import { SlimAmpm, compactTimeMs } from './slim';
import { bool, num, str, toMs, type KubeObject } from './unstructured';

const AMP_CONDITION_TYPES = [
  'Ready',
  'ScaleSetRunning',
  'ScaleSetDesiredReplicas',
  'ScaleSetModelUpdated',
  'BootstrapSucceeded',
  'RoleAssignmentReady',
] as const;

export interface AzureMachinePoolModel {
  name: string;
  resourceVersion: string | null;
  ready: boolean | null;
  /**
   * v1beta2-contract `status.initialization.provisioned`; CAPZ does not set it yet
   * (docs/domain.md, "The readiness gate").
   */
  initializationProvisioned: boolean | null;
  replicas: number | null;
  providerIDList: string[];
  /** spec.providerID: the VMSS. */
  providerID: string | null;
  provisioningState: string | null;
  orchestrationMode: 'Uniform' | 'Flexible' | null;
  conditions: Condition[];
  failureReason: string | null;
  failureMessage: string | null;
  pausedAnnotation: boolean;
  deleting: boolean;
  lastReconciledReplicas: number | null;
}

/** What the analysis reads of an AzureMachinePoolMachine (the collector keeps no more of it: lib/slim.ts). */
export interface AmpmModel {
  name: string;
  providerID: string | null;
  ready: boolean | null;
  provisioningState: string | null;
  latestModelApplied: boolean | null;
  nodeRef: string | null;
  /** metadata.creationTimestamp, milliseconds since the epoch. */
  createdAt: number | null;
}

export function normaliseAzureMachinePool(obj: KubeObject, notes: string[]): AzureMachinePoolModel {
  const conditions = conditionsAt(obj, ['status', 'conditions']);
  for (const c of conditions) {
    if (!(AMP_CONDITION_TYPES as readonly string[]).includes(c.type)) {
      notes.push(`AzureMachinePool has a condition type poolscope does not interpret: ${c.type}.`);
    }
  }
  const state = str(obj, 'status', 'provisioningState');
  if (state !== null && !(PROVISIONING_STATES as readonly string[]).includes(state)) {
    notes.push(`AzureMachinePool provisioningState "${state}" is not one CAPZ defines.`);
  }
  return {
    name: obj.metadata?.name ?? '',
    resourceVersion: obj.metadata?.resourceVersion ?? null,
    ready: bool(obj, 'status', 'ready'),
    initializationProvisioned: bool(obj, 'status', 'initialization', 'provisioned'),
    replicas: num(obj, 'status', 'replicas'),
    providerIDList: providerIdList(obj, 'spec', 'providerIDList').ids,
    providerID: str(obj, 'spec', 'providerID'),
    provisioningState: state,
    orchestrationMode: orchestration(str(obj, 'spec', 'orchestrationMode')),
    conditions,
    failureReason: str(obj, 'status', 'failureReason'),
    failureMessage: str(obj, 'status', 'failureMessage'),
    pausedAnnotation: annotation(obj, PAUSED_ANNOTATION) !== null,
    deleting: Boolean(obj.metadata?.deletionTimestamp),
    lastReconciledReplicas: num(obj, 'status', 'lastReconciledReplicas'),
  };
}

export function normaliseAmpm(obj: KubeObject): AmpmModel {
  // A collector's slimmed AMPM: its fields directly (its API-shaped getters build objects on every read).
  if (obj instanceof SlimAmpm) {
    return {
      name: obj.name ?? '',
      providerID: obj.providerID ?? null,
      ready: obj.ready ?? null,
      provisioningState: obj.provisioningState ?? null,
      latestModelApplied: obj.latestModelApplied ?? null,
      nodeRef: obj.nodeRef ?? null,
      createdAt: compactTimeMs(obj.created),
    };
  }
  return {
    name: obj.metadata?.name ?? '',
    providerID: str(obj, 'spec', 'providerID'),
    ready: bool(obj, 'status', 'ready'),
    provisioningState: str(obj, 'status', 'provisioningState'),
    latestModelApplied: bool(obj, 'status', 'latestModelApplied'),
    nodeRef: str(obj, 'status', 'nodeRef', 'name'),
    createdAt: toMs(obj.metadata?.creationTimestamp),
  };
}
