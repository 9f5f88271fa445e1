// What the pool model reads of CAPI's objects and the workload cluster's Nodes: the MachinePool (v1beta1 or
// v1beta2), its Machines, the Cluster, the Nodes; their conditions and providerID lists checked once per list
// (docs/domain.md, "The v1beta1 and v1beta2 field map").

import { providerIdProblem } from './provider-id';
import { AKS_AGENT_POOL_LABEL, SlimMachine, SlimNode } from './slim';
import { arr, bool, get, machineDeletingStage, num, str, strings, toMs, type KubeObject } from './unstructured';

export const PAUSED_ANNOTATION = 'cluster.x-k8s.io/paused';
const REPLICAS_MANAGED_BY_ANNOTATION = 'cluster.x-k8s.io/replicas-managed-by';
const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
const AUTOSCALER_MIN_ANNOTATION = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size';
const AUTOSCALER_MAX_ANNOTATION = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size';
export const UNINITIALIZED_TAINT = 'node.cluster.x-k8s.io/uninitialized';

const MP_PHASES = [
  'Pending',
  'Provisioning',
  'Provisioned',
  'Running',
  'ScalingUp',
  'ScalingDown',
  'Scaling',
  'Deleting',
  'Failed',
  'Unknown',
] as const;

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string | null;
  message: string | null;
  severity: string | null;
  lastTransitionTime: string | null;
}

export interface MachinePoolModel {
  apiVersion: 'v1beta1' | 'v1beta2';
  name: string;
  namespace: string;
  uid: string | null;
  resourceVersion: string | null;
  clusterName: string | null;
  /** spec.replicas; null when unset (webhook bypassed). */
  replicas: number | null;
  providerIDList: string[];
  /** status.phase as written, and whether CAPI knows it. */
  phase: string | null;
  phaseKnown: boolean;
  infrastructureReady: boolean | null;
  bootstrapReady: boolean | null;
  /** status.replicas: the count CAPI copied from the infra object. */
  statusReplicas: number | null;
  /** Node-based counters (v1beta1 semantics; v1beta2 keeps them under status.deprecated.v1beta1). */
  nodeReadyReplicas: number | null;
  nodeAvailableReplicas: number | null;
  nodeUnavailableReplicas: number | null;
  /** Machine-condition counters (v1beta2 semantics; v1beta1 keeps them under status.v1beta2). */
  readyReplicas: number | null;
  availableReplicas: number | null;
  upToDateReplicas: number | null;
  /** CAPI v1beta1 conditions (Ready, BootstrapReady, InfrastructureReady, ReplicasReady). */
  conditions: Condition[];
  /** metav1 conditions of the v1beta2 API (Paused, …). */
  v1beta2Conditions: Condition[];
  failureReason: string | null;
  failureMessage: string | null;
  minReadySeconds: number | null;
  infrastructureRef: { apiGroup: string | null; kind: string | null; name: string | null };
  pausedAnnotation: boolean;
  replicasManagedBy: string | null;
  autoscalerAnnotations: boolean;
  deleting: boolean;
  generation: number | null;
  observedGeneration: number | null;
}

export interface MachineModel {
  name: string;
  providerID: string | null;
  nodeRef: string | null;
  phase: string | null;
  deleting: boolean;
  /** metadata.deletionTimestamp, milliseconds since the epoch. */
  deletingSince: number | null;
  /** Where its deletion stands (lib/unstructured's machineDeletingStage), e.g. DrainingNode. */
  deletingStage: string | null;
}

export interface NodeModel {
  name: string;
  providerID: string | null;
  ready: boolean | null;
  uninitializedTaint: boolean;
  /** An AKS Node's agent pool (label kubernetes.azure.com/agentpool); null on other Nodes. */
  agentPool: string | null;
  /** An AKS Node's kubelet version (status.nodeInfo.kubeletVersion), for an upgrade's progress; null on others. */
  kubeletVersion: string | null;
}

export interface ClusterModel {
  name: string;
  paused: boolean;
  deleting: boolean;
  /**
   * CAPI's own view of its connection to the workload cluster: the Cluster's RemoteConnectionProbe condition
   * (CAPI ≥ v1.9; status.conditions in v1beta2, status.v1beta2.conditions in v1beta1), null when absent.
   */
  remoteConnection: Condition | null;
}

/**
 * A providerID list as the model holds it: its strings, and what checking them found (duplicates, malformed
 * entries). Built once per list array an object holds — the collector's objects replace a list when it
 * changes, never edit it in place — so every analysis of an unchanged list (most of them: an instance's own
 * objects change far more often than the pool's lists) reuses it, and the same array lets `digest` reuse its hash.
 */
interface CheckedList {
  ids: string[];
  duplicates: boolean;
  malformed: [id: string, reason: string][];
}

const checkedLists = new WeakMap<object, CheckedList>();

function checkList(ids: string[]): CheckedList {
  const malformed: [string, string][] = [];
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) continue;
    seen.add(id);
    const problem = providerIdProblem(id);
    if (problem !== null) malformed.push([id, problem]);
  }
  return { ids, duplicates: seen.size !== ids.length, malformed };
}

export function providerIdList(obj: unknown, ...path: string[]): CheckedList {
  const raw = get(obj, path);
  if (!Array.isArray(raw)) return checkList([]);
  let c = checkedLists.get(raw);
  if (!c) {
    c = checkList(strings(obj, ...path));
    checkedLists.set(raw, c);
    checkedLists.set(c.ids, c);
  }
  return c;
}

/** What checking a model's list found (see {@link providerIdList}); lists built by hand are checked now. */
export function checkedList(ids: string[]): CheckedList {
  let c = checkedLists.get(ids);
  if (!c) {
    c = checkList(ids);
    checkedLists.set(ids, c);
  }
  return c;
}

export function conditionsAt(obj: unknown, path: string[]): Condition[] {
  return arr(obj, ...path).flatMap((c): Condition[] => {
    const type = str(c, 'type');
    if (!type) return [];
    const s = str(c, 'status');
    return [
      {
        type,
        status: s === 'True' || s === 'False' ? s : 'Unknown',
        reason: str(c, 'reason'),
        message: str(c, 'message'),
        severity: str(c, 'severity'),
        lastTransitionTime: str(c, 'lastTransitionTime'),
      },
    ];
  });
}

export function findCondition(conditions: readonly Condition[], type: string): Condition | null {
  return conditions.find((c) => c.type === type) ?? null;
}

export function annotation(obj: KubeObject, key: string): string | null {
  const v = obj.metadata?.annotations?.[key];
  return typeof v === 'string' ? v : null;
}

function apiVersionOf(obj: KubeObject, notes: string[]): 'v1beta1' | 'v1beta2' {
  const v = obj.apiVersion ?? '';
  if (v.endsWith('/v1beta2')) return 'v1beta2';
  if (v.endsWith('/v1beta1')) return 'v1beta1';
  notes.push(`MachinePool apiVersion "${v}" is not one poolscope knows; reading it as v1beta2.`);
  return 'v1beta2';
}

export function normaliseMachinePool(obj: KubeObject, notes: string[]): MachinePoolModel {
  const apiVersion = apiVersionOf(obj, notes);
  const b2 = apiVersion === 'v1beta2';
  // The same state lives at different paths in the two versions
  // (docs/domain.md, "The v1beta1 and v1beta2 field map").
  const deprecated = b2 ? ['status', 'deprecated', 'v1beta1'] : ['status'];
  const v1beta2Counters = b2 ? ['status'] : ['status', 'v1beta2'];
  const phase = str(obj, 'status', 'phase');
  const phaseKnown = phase === null || (MP_PHASES as readonly string[]).includes(phase);
  if (!phaseKnown) notes.push(`MachinePool phase "${phase}" is not a phase CAPI defines; shown as Unknown.`);
  const replicas = num(obj, 'spec', 'replicas');
  const ref = get(obj, ['spec', 'template', 'spec', 'infrastructureRef']);
  const refApiVersion = str(ref, 'apiVersion');
  const managedBy = annotation(obj, REPLICAS_MANAGED_BY_ANNOTATION);
  return {
    apiVersion,
    name: obj.metadata?.name ?? '',
    namespace: obj.metadata?.namespace ?? '',
    uid: obj.metadata?.uid ?? null,
    resourceVersion: obj.metadata?.resourceVersion ?? null,
    clusterName: str(obj, 'spec', 'clusterName') ?? obj.metadata?.labels?.[CLUSTER_NAME_LABEL] ?? null,
    replicas,
    providerIDList: providerIdList(obj, 'spec', 'providerIDList').ids,
    phase: phaseKnown ? phase : 'Unknown',
    phaseKnown,
    infrastructureReady: b2
      ? bool(obj, 'status', 'initialization', 'infrastructureProvisioned')
      : bool(obj, 'status', 'infrastructureReady'),
    bootstrapReady: b2
      ? bool(obj, 'status', 'initialization', 'bootstrapDataSecretCreated')
      : bool(obj, 'status', 'bootstrapReady'),
    statusReplicas: num(obj, 'status', 'replicas'),
    nodeReadyReplicas: num(obj, ...deprecated, 'readyReplicas'),
    nodeAvailableReplicas: num(obj, ...deprecated, 'availableReplicas'),
    nodeUnavailableReplicas: num(obj, ...deprecated, 'unavailableReplicas'),
    readyReplicas: num(obj, ...v1beta2Counters, 'readyReplicas'),
    availableReplicas: num(obj, ...v1beta2Counters, 'availableReplicas'),
    upToDateReplicas: num(obj, ...v1beta2Counters, 'upToDateReplicas'),
    conditions: conditionsAt(obj, [...deprecated, 'conditions']),
    v1beta2Conditions: conditionsAt(obj, [...v1beta2Counters, 'conditions']),
    failureReason: str(obj, ...deprecated, 'failureReason'),
    failureMessage: str(obj, ...deprecated, 'failureMessage'),
    minReadySeconds: b2 ? num(obj, 'spec', 'template', 'spec', 'minReadySeconds') : num(obj, 'spec', 'minReadySeconds'),
    infrastructureRef: {
      apiGroup: str(ref, 'apiGroup') ?? (refApiVersion ? (refApiVersion.split('/')[0] ?? null) : null),
      kind: str(ref, 'kind'),
      name: str(ref, 'name'),
    },
    pausedAnnotation: annotation(obj, PAUSED_ANNOTATION) !== null,
    replicasManagedBy: managedBy,
    autoscalerAnnotations:
      annotation(obj, AUTOSCALER_MIN_ANNOTATION) !== null || annotation(obj, AUTOSCALER_MAX_ANNOTATION) !== null,
    deleting: Boolean(obj.metadata?.deletionTimestamp),
    generation: obj.metadata?.generation ?? null,
    observedGeneration: num(obj, 'status', 'observedGeneration'),
  };
}

export function normaliseMachine(obj: KubeObject): MachineModel {
  if (obj instanceof SlimMachine)
    return {
      name: obj.name ?? '',
      providerID: obj.providerID ?? null,
      nodeRef: obj.nodeRef ?? null,
      phase: obj.phase ?? null,
      deleting: Boolean(obj.deleted),
      deletingSince: toMs(obj.deleted ?? null),
      deletingStage: obj.deletingStage ?? null,
    };
  const deleted = obj.metadata?.deletionTimestamp ?? null;
  return {
    name: obj.metadata?.name ?? '',
    providerID: str(obj, 'spec', 'providerID'),
    nodeRef: str(obj, 'status', 'nodeRef', 'name'),
    phase: str(obj, 'status', 'phase'),
    deleting: Boolean(deleted),
    deletingSince: toMs(deleted),
    deletingStage: deleted ? machineDeletingStage(obj) : null,
  };
}

export function normaliseNode(obj: KubeObject): NodeModel {
  if (obj instanceof SlimNode) {
    return {
      name: obj.name ?? '',
      providerID: obj.providerID ?? null,
      ready: obj.ready === undefined ? null : obj.ready === 'True',
      uninitializedTaint: obj.taints?.some((t) => t.key === UNINITIALIZED_TAINT) ?? false,
      agentPool: obj.agentPool ?? null,
      kubeletVersion: obj.kubeletVersion ?? null,
    };
  }
  const ready = arr(obj, 'status', 'conditions').find((c) => str(c, 'type') === 'Ready');
  const readyStatus = ready === undefined ? null : str(ready, 'status');
  return {
    name: obj.metadata?.name ?? '',
    providerID: str(obj, 'spec', 'providerID'),
    ready: readyStatus === null ? null : readyStatus === 'True',
    uninitializedTaint: arr(obj, 'spec', 'taints').some((t) => str(t, 'key') === UNINITIALIZED_TAINT),
    agentPool: obj.metadata?.labels?.[AKS_AGENT_POOL_LABEL] ?? null,
    kubeletVersion: obj.metadata?.labels?.[AKS_AGENT_POOL_LABEL]
      ? str(obj, 'status', 'nodeInfo', 'kubeletVersion')
      : null,
  };
}

export function normaliseCluster(obj: KubeObject): ClusterModel {
  const v1beta1 = (obj.apiVersion ?? '').endsWith('/v1beta1');
  const conditions = conditionsAt(obj, v1beta1 ? ['status', 'v1beta2', 'conditions'] : ['status', 'conditions']);
  return {
    name: obj.metadata?.name ?? '',
    paused: bool(obj, 'spec', 'paused') === true || annotation(obj, PAUSED_ANNOTATION) !== null,
    deleting: Boolean(obj.metadata?.deletionTimestamp),
    remoteConnection: findCondition(conditions, 'RemoteConnectionProbe'),
  };
}
