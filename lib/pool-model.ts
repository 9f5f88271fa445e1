// One normalised model of a MachinePool and everything behind it, whatever API version or source shape
// it was read in (docs/domain.md, "The v1beta1 and v1beta2 field map", "CAPZ's AzureMachinePool" and
// "Azure REST shapes").

import type { PoolRef, SourceState } from './api-types';
import { parseProviderId, providerIdFromArmId, providerIdProblem, type ParsedProviderId } from './provider-id';
import { arr, bool, get, machineDeletingStage, num, str, strings, toMs, type KubeObject } from './unstructured';
import { SlimAmpm, SlimMachine, SlimNode, compactTimeMs, intern } from './slim';

const PAUSED_ANNOTATION = 'cluster.x-k8s.io/paused';
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

/** CAPZ `ProvisioningState` values (api/v1beta1/types.go), in their canonical case. */
const PROVISIONING_STATES = [
  'Creating',
  'Deleting',
  'Failed',
  'Migrating',
  'Succeeded',
  'Updating',
  'Canceled',
  'Deleted',
] as const;

const AMP_CONDITION_TYPES = [
  'Ready',
  'ScaleSetRunning',
  'ScaleSetDesiredReplicas',
  'ScaleSetModelUpdated',
  'BootstrapSucceeded',
  'RoleAssignmentReady',
] as const;

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string | null;
  message: string | null;
  severity: string | null;
  lastTransitionTime: string | null;
}

interface MachinePoolModel {
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

interface AzureMachinePoolModel {
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
}

interface ClusterModel {
  name: string;
  paused: boolean;
  deleting: boolean;
  /**
   * CAPI's own view of its connection to the workload cluster: the Cluster's RemoteConnectionProbe condition
   * (CAPI ≥ v1.9; status.conditions in v1beta2, status.v1beta2.conditions in v1beta1), null when absent.
   */
  remoteConnection: Condition | null;
}

export interface VmssModel {
  id: string;
  name: string;
  providerID: string;
  capacity: number | null;
  /** Canonical case (Azure may send "succeeded"); null when absent. */
  provisioningState: string | null;
  rawProvisioningState: string | null;
  orchestrationMode: 'Uniform' | 'Flexible';
  location: string | null;
}

export interface InstanceModel {
  providerID: string;
  name: string;
  instanceId: string | null;
  provisioningState: string | null;
  /** From instanceView `PowerState/<x>`; null without an instance view. */
  powerState: string | null;
  latestModelApplied: boolean | null;
  /** From instanceView `ProvisioningState/failed/<code>`. */
  errorCode: string | null;
  errorMessage: string | null;
  computerName: string | null;
  /** properties.timeCreated, milliseconds since the epoch (a number: the text was ~56 bytes per VM kept). */
  createdAt: number | null;
}

type AzureData =
  | {
      state: 'ok';
      vmss: VmssModel;
      instances: InstanceModel[];
      /**
       * When Azure listed the VMs (its response's Date header), milliseconds since the epoch; null when unknown. An
       * instance whose AMPM was made or deleted after it waits for the next read (lib/drift's `awaitsAzureRead`).
       */
      readAt: number | null;
    }
  | Exclude<SourceState, { state: 'ok' }>;

type WorkloadData = { state: 'ok'; nodes: NodeModel[] } | Exclude<SourceState, { state: 'ok' }>;

export interface PoolModel {
  ref: PoolRef;
  mp: MachinePoolModel;
  amp: AzureMachinePoolModel | null;
  ampms: AmpmModel[];
  machines: MachineModel[];
  cluster: ClusterModel | null;
  workload: WorkloadData;
  azure: AzureData;
  /** The pool's scale set, parsed from the AMP's spec.providerID (or the VMSS id). */
  scaleSet: ParsedProviderId | null;
  /** CAPZ version (controller image tag) when known, e.g. "v1.19.1". */
  capzVersion: string | null;
  /** PoolInput.departedAmpms (none when not given). */
  departedAmpms: readonly DepartedAmpm[];
  /** PoolInput.otherScaleSetPools (none when not given). */
  otherScaleSetPools: Readonly<Record<string, string>>;
  notes: string[];
}

/** What the sources hand over for one pool: objects exactly as the APIs return them. */
export interface PoolInput {
  context: string;
  machinePool: KubeObject;
  azureMachinePool?: KubeObject | null;
  azureMachinePoolMachines?: KubeObject[];
  machines?: KubeObject[];
  cluster?: KubeObject | null;
  /** Nodes of the workload cluster (all of them, or those of this pool), or why they could not be read. */
  workload?: { state: 'ok'; nodes: KubeObject[] } | Exclude<SourceState, { state: 'ok' }>;
  /**
   * The VMSS and its VMs as the ARM REST API returns them (or already normalised by {@link normaliseAzure},
   * for a caller that analyses the same read many times), or why they could not be read.
   */
  azure?:
    | { state: 'ok'; vmss: unknown; vms: unknown[]; readAt?: string | null }
    | NormalisedAzure
    | Exclude<SourceState, { state: 'ok' }>;
  capzVersion?: string | null;
  /**
   * The pool's AMPMs deleted lately: their providerID, and when the collector saw them go (ms since the epoch). CAPZ
   * removes an AMPM once its VM is deleted or gone, so an instance Azure's last read still lists, whose AMPM went
   * after that read, is most likely gone too (lib/drift's `awaitsAzureRead`).
   */
  departedAmpms?: readonly DepartedAmpm[];
  /**
   * For the other scale sets this pool's lists name (see scaleSetKeyOf), the MachinePool (`namespace/name`) whose
   * AzureMachinePool has that scale set, in the same management cluster: what an ID of another pool is said to be.
   */
  otherScaleSetPools?: Readonly<Record<string, string>>;
}

export interface DepartedAmpm {
  providerID: string;
  at: number;
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

function providerIdList(obj: unknown, ...path: string[]): CheckedList {
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
function checkedList(ids: string[]): CheckedList {
  let c = checkedLists.get(ids);
  if (!c) {
    c = checkList(ids);
    checkedLists.set(ids, c);
  }
  return c;
}

function conditionsAt(obj: unknown, path: string[]): Condition[] {
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

function canonicalState(raw: string | null): string | null {
  if (raw === null) return null;
  return PROVISIONING_STATES.find((s) => s.toLowerCase() === raw.toLowerCase()) ?? raw;
}

function orchestration(raw: string | null): 'Uniform' | 'Flexible' | null {
  if (raw === null) return null;
  if (raw.toLowerCase() === 'flexible') return 'Flexible';
  if (raw.toLowerCase() === 'uniform') return 'Uniform';
  return null;
}

function annotation(obj: KubeObject, key: string): string | null {
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

function normaliseMachinePool(obj: KubeObject, notes: string[]): MachinePoolModel {
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

function normaliseAzureMachinePool(obj: KubeObject, notes: string[]): AzureMachinePoolModel {
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

function normaliseAmpm(obj: KubeObject): AmpmModel {
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

function normaliseMachine(obj: KubeObject): MachineModel {
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

function normaliseNode(obj: KubeObject): NodeModel {
  if (obj instanceof SlimNode) {
    return {
      name: obj.name ?? '',
      providerID: obj.providerID ?? null,
      ready: obj.ready === undefined ? null : obj.ready === 'True',
      uninitializedTaint: obj.taints?.some((t) => t.key === UNINITIALIZED_TAINT) ?? false,
    };
  }
  const ready = arr(obj, 'status', 'conditions').find((c) => str(c, 'type') === 'Ready');
  const readyStatus = ready === undefined ? null : str(ready, 'status');
  return {
    name: obj.metadata?.name ?? '',
    providerID: str(obj, 'spec', 'providerID'),
    ready: readyStatus === null ? null : readyStatus === 'True',
    uninitializedTaint: arr(obj, 'spec', 'taints').some((t) => str(t, 'key') === UNINITIALIZED_TAINT),
  };
}

function normaliseCluster(obj: KubeObject): ClusterModel {
  const v1beta1 = (obj.apiVersion ?? '').endsWith('/v1beta1');
  const conditions = conditionsAt(obj, v1beta1 ? ['status', 'v1beta2', 'conditions'] : ['status', 'conditions']);
  return {
    name: obj.metadata?.name ?? '',
    paused: bool(obj, 'spec', 'paused') === true || annotation(obj, PAUSED_ANNOTATION) !== null,
    deleting: Boolean(obj.metadata?.deletionTimestamp),
    remoteConnection: findCondition(conditions, 'RemoteConnectionProbe'),
  };
}

/** Normalises a VMSS as `GET …/virtualMachineScaleSets/{name}` returns it. */
export function normaliseVmss(raw: unknown): VmssModel | null {
  const id = str(raw, 'id');
  if (!id) return null;
  const state = str(raw, 'properties', 'provisioningState');
  return {
    id,
    name: str(raw, 'name') ?? id.split('/').pop() ?? id,
    providerID: providerIdFromArmId(id),
    capacity: num(raw, 'sku', 'capacity'),
    provisioningState: canonicalState(state),
    rawProvisioningState: state,
    orchestrationMode: orchestration(str(raw, 'properties', 'orchestrationMode')) ?? 'Uniform',
    location: str(raw, 'location'),
  };
}

/**
 * Normalises one VM as the VMSS-VMs list (Uniform, or Flexible through the same API) or the
 * virtualMachines list (Flexible) returns it, with or without `$expand=instanceView`.
 */
export function normaliseInstance(raw: unknown): InstanceModel | null {
  const id = str(raw, 'id');
  if (!id) return null;
  const vmResourceId = str(raw, 'virtualMachineResourceId') ?? str(raw, 'properties', 'virtualMachineResourceId');
  const armId = vmResourceId ?? id;
  let powerState: string | null = null;
  let errorCode: string | null = null;
  let errorMessage: string | null = null;
  for (const s of arr(raw, 'properties', 'instanceView', 'statuses')) {
    const code = str(s, 'code') ?? '';
    if (code.startsWith('PowerState/')) powerState = code.slice('PowerState/'.length);
    const m = /^ProvisioningState\/failed\/(.+)$/i.exec(code);
    if (m) {
      errorCode = m[1] ?? null;
      errorMessage = str(s, 'message');
    }
  }
  return {
    // The same string as the Kubernetes objects' copies (lib/slim interns theirs): a collector keeps a scale
    // set's read between reads, and the join finds the instance by that exact string.
    providerID: intern(providerIdFromArmId(armId)),
    name: str(raw, 'name') ?? armId.split('/').pop() ?? armId,
    instanceId: str(raw, 'instanceId'),
    provisioningState: canonicalState(str(raw, 'properties', 'provisioningState')),
    powerState,
    latestModelApplied: bool(raw, 'properties', 'latestModelApplied'),
    errorCode,
    errorMessage,
    computerName: str(raw, 'properties', 'osProfile', 'computerName'),
    createdAt: toMs(str(raw, 'properties', 'timeCreated')),
  };
}

/** A scale-set read normalised once (see {@link normaliseAzure}), with what normalising it noticed. */
export interface NormalisedAzure {
  state: 'normalised';
  azure: AzureData;
  notes: string[];
}

/**
 * Normalises a VMSS and its VMs as the ARM REST API returns them. A collector analyses the same read many
 * times (every Kubernetes change of the pool until the next read): it normalises it once and keeps only this.
 */
export function normaliseAzure(vmssRaw: unknown, vms: readonly unknown[], readAt?: string | null): NormalisedAzure {
  const notes: string[] = [];
  const vmss = normaliseVmss(vmssRaw);
  if (!vmss)
    return {
      state: 'normalised',
      azure: { state: 'unknown', reason: 'Azure returned a scale set without an id.' },
      notes,
    };
  const instances: InstanceModel[] = [];
  for (const vm of vms) {
    const inst = normaliseInstance(vm);
    if (inst) instances.push(inst);
    else notes.push('Azure returned a VM without an id; it was skipped.');
  }
  return { state: 'normalised', azure: { state: 'ok', vmss, instances, readAt: toMs(readAt ?? undefined) }, notes };
}

/**
 * Normalised MachinePools and AzureMachinePools by the object they were read from, with the notes reading them
 * gave: the collector analyses a pool again for each change to any of its objects (a hundred instances' AMPMs,
 * Machines and Nodes), and most leave these two as they were. Objects are not changed once read (an informer
 * replaces an object on update), and models are not changed by their readers.
 */
const normalised = new WeakMap<KubeObject, { model: MachinePoolModel | AzureMachinePoolModel; notes: string[] }>();

function memo<T extends MachinePoolModel | AzureMachinePoolModel>(
  obj: KubeObject,
  notes: string[],
  read: (o: KubeObject, n: string[]) => T,
): T {
  let m = normalised.get(obj);
  if (!m) {
    const own: string[] = [];
    m = { model: read(obj, own), notes: own };
    normalised.set(obj, m);
  }
  notes.push(...m.notes);
  return m.model as T;
}

export function buildPoolModel(input: PoolInput): PoolModel {
  const notes: string[] = [];
  const mp = memo(input.machinePool, notes, normaliseMachinePool);
  if (mp.replicas === null) notes.push('MachinePool spec.replicas is not set.');
  const amp = input.azureMachinePool ? memo(input.azureMachinePool, notes, normaliseAzureMachinePool) : null;
  if (!amp) notes.push("No AzureMachinePool was found for this MachinePool's infrastructureRef.");

  const w = input.workload ?? { state: 'unknown' as const, reason: 'workload cluster not read' };
  const workload: WorkloadData = w.state === 'ok' ? { state: 'ok', nodes: w.nodes.map(normaliseNode) } : w;

  const a = input.azure ?? { state: 'unknown' as const, reason: 'Azure not read' };
  let azure: AzureData;
  if (a.state === 'ok' || a.state === 'normalised') {
    const n = a.state === 'ok' ? normaliseAzure(a.vmss, a.vms, a.readAt) : a;
    azure = n.azure;
    notes.push(...n.notes);
  } else {
    azure = a;
  }

  const scaleSetRaw = amp?.providerID ?? (azure.state === 'ok' ? azure.vmss.providerID : null);
  const parsed = scaleSetRaw === null ? null : parseProviderId(scaleSetRaw);
  if (parsed && !parsed.ok)
    notes.push(`AzureMachinePool spec.providerID is malformed (${parsed.reason}): ${parsed.raw}`);

  for (const [label, list] of [
    ['MachinePool', mp.providerIDList],
    ['AzureMachinePool', amp?.providerIDList ?? []],
  ] as const) {
    const c = checkedList(list);
    if (c.duplicates) notes.push(`${label} spec.providerIDList has duplicate entries.`);
    if (c.malformed.length === 0) continue;
    // Each malformed entry, as often as the list holds it.
    const bad = new Map(c.malformed);
    for (const id of list)
      if (bad.has(id)) notes.push(`${label} spec.providerIDList has a malformed entry (${bad.get(id)}): ${id}`);
  }

  return {
    ref: { context: input.context, namespace: mp.namespace, name: mp.name },
    mp,
    amp,
    ampms: (input.azureMachinePoolMachines ?? []).map(normaliseAmpm),
    machines: (input.machines ?? []).map(normaliseMachine),
    cluster: input.cluster ? normaliseCluster(input.cluster) : null,
    workload,
    azure,
    scaleSet: parsed && parsed.ok ? parsed : null,
    capzVersion: input.capzVersion ?? null,
    departedAmpms: input.departedAmpms ?? [],
    otherScaleSetPools: input.otherScaleSetPools ?? {},
    notes,
  };
}

/** Whether CAPI's MachinePool controller is paused for this pool (Cluster.spec.paused or the MP annotation). */
export function isPaused(model: PoolModel): boolean {
  return model.mp.pausedAnnotation || (model.cluster?.paused ?? false);
}
