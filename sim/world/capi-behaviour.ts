// CAPI's MachinePool controller (core/reconcilers/machinepool at ae7ff04; docs/domain.md,
// "CAPI's MachinePool controller"), and the part of its Machine controller a MachinePool Machine's readiness rests
// on, as pure functions over plain data: what the simulated world applies to a MachinePool, its Nodes and its
// Machines. sim/world/upstream/capi-cases.ts holds
// the upstream test rows these functions are checked against. Its status counters are ./capi-status, a Machine's
// conditions ./capi-machine-conditions.

import type { KubeObject } from '../../lib/unstructured';

const UNINITIALIZED_TAINT = { key: 'node.cluster.x-k8s.io/uninitialized', effect: 'NoSchedule' } as const;

interface NodeCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  message?: string;
}

export interface Taint {
  key: string;
  value?: string;
  effect?: string;
}

/** A workload cluster Node, as far as the controllers read it. */
export interface CapiNode {
  name: string;
  uid?: string;
  /** '' when the Node has none. */
  providerID: string;
  conditions: NodeCondition[];
  kubeletVersion?: string;
  annotations?: Record<string, string>;
  taints?: Taint[];
}

export interface NodeRef {
  name: string;
  uid?: string;
}

/** The MachinePool fields the controller reads and writes (v1beta2 names; the v1beta1 counters apart). */
export interface MachinePoolState {
  name: string;
  namespace: string;
  clusterName: string;
  /** spec.replicas; null when unset. */
  specReplicas: number | null;
  /** spec.providerIDList; undefined when unset (CAPI's compare tells an unset list from an empty one). */
  providerIDList: string[] | undefined;
  /** spec.template.spec.minReadySeconds. */
  minReadySeconds: number;
  /** The `cluster.x-k8s.io/replicas-managed-by` annotation. */
  replicasManagedBy?: string;
  deleting: boolean;
  /** status.phase; '' when unset. */
  phase: string;
  bootstrapDataSecretCreated: boolean;
  infrastructureProvisioned: boolean;
  /** status.replicas; undefined when unset. */
  statusReplicas: number | undefined;
  nodeRefs: NodeRef[];
  /** status.deprecated.v1beta1 counters: Nodes in the list found Ready / available, and the rest. */
  v1beta1: { readyReplicas: number; availableReplicas: number; unavailableReplicas: number };
  /** Status of the v1beta1 ReplicasReady condition; undefined when not set. */
  replicasReady?: 'True' | 'False';
}

/** What the controller reads from the infrastructure MachinePool (AzureMachinePool). */
export interface InfraMachinePool {
  /** status.ready */
  ready: boolean;
  /** spec.providerIDList; undefined when unset. */
  providerIDList?: string[];
  /** status.replicas; undefined when unset. */
  replicas?: number;
  deleting?: boolean;
}

export interface NodePatch {
  name: string;
  annotations: Record<string, string>;
  taints: Taint[];
}

const withoutEmpty = (list: readonly string[] | undefined) => (list ?? []).filter((id) => id !== '');

/** Go's reflect.DeepEqual over two string slices: order counts, and an unset list differs from an empty one. */
function sameList(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** A Node object as the controllers read it. */
export function capiNode(obj: KubeObject): CapiNode {
  const spec = (obj.spec ?? {}) as { providerID?: string; taints?: Taint[] };
  const status = (obj.status ?? {}) as { conditions?: NodeCondition[]; nodeInfo?: { kubeletVersion?: string } };
  return {
    name: String(obj.metadata?.name ?? ''),
    uid: obj.metadata?.uid,
    providerID: spec.providerID ?? '',
    conditions: status.conditions ?? [],
    kubeletVersion: status.nodeInfo?.kubeletVersion,
    annotations: obj.metadata?.annotations,
    taints: spec.taints,
  };
}

interface NodeIndex {
  byProviderId: Map<string, CapiNode>;
  byName: Map<string, CapiNode>;
}

/** Indexes of a Node list, built once per list (the world hands every pool of a cluster the same list). */
const indexes = new WeakMap<readonly CapiNode[], NodeIndex>();

export function indexOf(nodes: readonly CapiNode[]): NodeIndex {
  let hit = indexes.get(nodes);
  if (!hit) {
    hit = {
      byProviderId: new Map(nodes.filter((n) => n.providerID !== '').map((n) => [n.providerID, n])),
      byName: new Map(nodes.map((n) => [n.name, n])),
    };
    indexes.set(nodes, hit);
  }
  return hit;
}

/** The Nodes by providerID, those without one left out (getNodeRefMap). */
export function nodesByProviderId(nodes: readonly CapiNode[]): ReadonlyMap<string, CapiNode> {
  return indexOf(nodes).byProviderId;
}

// ---------------- reconcileInfrastructure ----------------

/**
 * The readiness gate (phases.go reconcileInfrastructure): infrastructureProvisioned always follows the infra
 * object's status.ready; the workload cluster must answer (else an error, nothing more); past the gate
 * status.replicas is copied, an empty list with replicas ≠ 0 is refused, and a different list (order-sensitive)
 * is copied with the v1beta1 counters reset.
 */
export function reconcileInfrastructure(
  mp: MachinePoolState,
  infra: InfraMachinePool,
  workloadReachable: boolean,
): { mp: MachinePoolState; error?: string } {
  if (infra.deleting) return { mp };
  const next: MachinePoolState = { ...mp, infrastructureProvisioned: infra.ready };
  if (!workloadReachable) return { mp: next, error: 'failed to get nodeRefs: the workload cluster is unreachable' };
  if (!infra.ready) return { mp: next };
  if (infra.replicas !== undefined) next.statusReplicas = infra.replicas;
  if ((infra.providerIDList ?? []).length === 0 && (next.statusReplicas ?? 0) !== 0) return { mp: next };
  if (!sameList(mp.providerIDList, infra.providerIDList)) {
    next.providerIDList = infra.providerIDList;
    next.v1beta1 = { readyReplicas: 0, availableReplicas: 0, unavailableReplicas: next.statusReplicas ?? 0 };
  }
  return { mp: next };
}

// ---------------- reconcileNodeRefs ----------------

const readyCondition = (n: CapiNode) => n.conditions.find((c) => c.type === 'Ready');
const isNodeReady = (n: CapiNode) => readyCondition(n)?.status === 'True';

/** Ready for longer than minReadySeconds (a Ready condition without a transition time never is, unless 0). */
function isNodeAvailable(n: CapiNode, minReadySeconds: number, now: number): boolean {
  if (!isNodeReady(n)) return false;
  if (minReadySeconds === 0) return true;
  const since = Date.parse(readyCondition(n)?.lastTransitionTime ?? '');
  return Number.isFinite(since) && since + minReadySeconds * 1000 < now;
}

/** The Node names in nodeRefs whose Node's providerID is no longer in the list (deleteRetiredNodes). */
export function retiredNodes(
  nodeRefs: readonly NodeRef[],
  providerIDList: readonly string[] | undefined,
  nodes: readonly CapiNode[],
): string[] {
  const { byName } = indexOf(nodes);
  const listed = new Set(withoutEmpty(providerIDList));
  const out: string[] = [];
  for (const ref of nodeRefs) {
    const node = byName.get(ref.name);
    if (!node || node.providerID === '' || listed.has(node.providerID)) continue;
    if (!out.includes(node.name)) out.push(node.name);
  }
  return out;
}

export interface NodeReferences {
  references: { apiVersion: 'v1'; kind: 'Node'; name: string; uid?: string }[];
  ready: number;
  available: number;
}

/**
 * Each listed providerID looked up exactly, in list order (getNodeReferences). Null when the list names
 * providerIDs and none has a Node: the caller then leaves nodeRefs and the counters as they were.
 */
export function getNodeReferences(
  providerIDList: readonly string[],
  minReadySeconds: number,
  byProviderId: ReadonlyMap<string, CapiNode>,
  now: number,
): NodeReferences | null {
  const out: NodeReferences = { references: [], ready: 0, available: 0 };
  for (const id of withoutEmpty(providerIDList)) {
    const node = byProviderId.get(id);
    if (!node) continue;
    if (isNodeReady(node)) {
      out.ready++;
      if (isNodeAvailable(node, minReadySeconds, now)) out.available++;
    }
    out.references.push({ apiVersion: 'v1', kind: 'Node', name: node.name, ...(node.uid ? { uid: node.uid } : {}) });
  }
  return out.references.length === 0 && providerIDList.length !== 0 ? null : out;
}

/** The Nodes to patch (patchNodes): the four ownership annotations added, the uninitialized taint dropped. */
export function patchNodes(
  refs: readonly NodeRef[],
  nodes: readonly CapiNode[],
  mp: Pick<MachinePoolState, 'name' | 'namespace' | 'clusterName'>,
): NodePatch[] {
  const { byName } = indexOf(nodes);
  const desired: Record<string, string> = {
    'cluster.x-k8s.io/cluster-name': mp.clusterName,
    'cluster.x-k8s.io/cluster-namespace': mp.namespace,
    'cluster.x-k8s.io/owner-kind': 'MachinePool',
    'cluster.x-k8s.io/owner-name': mp.name,
  };
  const out: NodePatch[] = [];
  for (const ref of refs) {
    const node = byName.get(ref.name);
    if (!node) continue;
    const current = node.annotations ?? {};
    const taints = (node.taints ?? []).filter(
      (t) => !(t.key === UNINITIALIZED_TAINT.key && t.effect === UNINITIALIZED_TAINT.effect),
    );
    const annotationsChange = Object.entries(desired).some(([k, v]) => current[k] !== v);
    if (annotationsChange || taints.length !== (node.taints ?? []).length)
      out.push({ name: node.name, annotations: { ...current, ...desired }, taints });
  }
  return out;
}

export interface NodeRefsResult {
  mp: MachinePoolState;
  /** Nodes to delete from the workload cluster. */
  deleteNodes: string[];
  patchNodes: NodePatch[];
  /** Seconds until the controller looks again (0: on the next event). */
  requeueAfter: number;
  error?: string;
}

/** nodeRefs still name the live Nodes (same names and UIDs): nothing to do. */
function nodeRefsCurrent(mp: MachinePoolState, nodes: readonly CapiNode[] | null): boolean {
  const ready = mp.v1beta1.readyReplicas;
  if ((mp.statusReplicas ?? 0) !== ready || mp.nodeRefs.length !== ready || nodes === null) return false;
  // Only Nodes with a providerID count (the controller's map is keyed by it).
  const { byName } = indexOf(nodes);
  return mp.nodeRefs.every((r) => {
    const n = byName.get(r.name);
    return n !== undefined && n.providerID !== '' && (n.uid ?? '') === (r.uid ?? '');
  });
}

/**
 * reconcileNodeRefs (noderef.go): nothing while deleting; ReplicasReady True and nothing else while nodeRefs are
 * current; nothing while the list is empty and spec.replicas is not 0; an error while the workload cluster is
 * unreachable; else retired Nodes deleted, nodeRefs and counters set from the Nodes found (left as they were if
 * none is found), the Nodes patched, and ReplicasReady True only when status.replicas Nodes are Ready.
 */
export function reconcileNodeRefs(
  mp: MachinePoolState,
  nodes: readonly CapiNode[] | null,
  now: number,
): NodeRefsResult {
  const none = { deleteNodes: [], patchNodes: [], requeueAfter: 0 };
  if (mp.deleting) return { mp, ...none };
  if (nodeRefsCurrent(mp, nodes)) return { mp: { ...mp, replicasReady: 'True' }, ...none };
  if ((mp.providerIDList ?? []).length === 0 && mp.specReplicas !== 0) return { mp, ...none };
  if (nodes === null)
    return { mp, ...none, error: 'failed to reconcile nodeRefs: the workload cluster is unreachable' };
  const deleteNodes = retiredNodes(mp.nodeRefs, mp.providerIDList, nodes);
  const found = getNodeReferences(mp.providerIDList ?? [], mp.minReadySeconds, nodesByProviderId(nodes), now);
  if (!found) return { mp, ...none, deleteNodes };
  const replicas = mp.statusReplicas ?? 0;
  const next: MachinePoolState = {
    ...mp,
    nodeRefs: found.references.map((r) => ({ name: r.name, ...(r.uid ? { uid: r.uid } : {}) })),
    v1beta1: {
      readyReplicas: found.ready,
      availableReplicas: found.available,
      unavailableReplicas: replicas - found.available,
    },
  };
  const allReady = replicas === found.ready && found.references.length === found.ready;
  next.replicasReady = allReady ? 'True' : 'False';
  return { mp: next, deleteNodes, patchNodes: patchNodes(next.nodeRefs, nodes, mp), requeueAfter: allReady ? 0 : 30 };
}

// ---------------- one reconcile ----------------

export interface ReconcileInput {
  mp: MachinePoolState;
  /** The bootstrap config's status.initialization.dataSecretCreated (true for bootstrap data given directly). */
  bootstrapDataSecretCreated: boolean;
  infra: InfraMachinePool;
  /** The workload cluster's Nodes, or null while CAPI cannot reach it. */
  nodes: readonly CapiNode[] | null;
  /** ms since the epoch. */
  now: number;
}

export interface ReconcileResult extends Omit<NodeRefsResult, 'error'> {
  errors: string[];
}

/**
 * The normal phases in order (bootstrap, infrastructure, node references); as doReconcile does, a phase's
 * error does not stop the later ones. The phase and the v1beta2 counters are set afterwards
 * ({@link reconcilePhase}, {@link setReplicas}), as the controller's deferred status update does.
 */
export function reconcileNormal(input: ReconcileInput): ReconcileResult {
  const errors: string[] = [];
  const bootstrapped: MachinePoolState = { ...input.mp, bootstrapDataSecretCreated: input.bootstrapDataSecretCreated };
  const infra = reconcileInfrastructure(bootstrapped, input.infra, input.nodes !== null);
  if (infra.error) errors.push(infra.error);
  const refs = reconcileNodeRefs(infra.mp, input.nodes, input.now);
  if (refs.error) errors.push(refs.error);
  return {
    mp: refs.mp,
    deleteNodes: refs.deleteNodes,
    patchNodes: refs.patchNodes,
    requeueAfter: refs.requeueAfter,
    errors,
  };
}

// ---------------- reconcilePhase ----------------

/**
 * reconcilePhase (phases.go): the checks in order, a later match overriding an earlier one
 * (docs/domain.md, "MachinePool phases").
 */
export function reconcilePhase(mp: MachinePoolState): string {
  let phase = mp.phase === '' ? 'Pending' : mp.phase;
  if (mp.bootstrapDataSecretCreated && !mp.infrastructureProvisioned) phase = 'Provisioning';
  if (mp.nodeRefs.length !== 0) phase = 'Provisioned';
  const ready = mp.v1beta1.readyReplicas;
  const managed = mp.replicasManagedBy !== undefined && mp.replicasManagedBy !== 'false';
  if (mp.infrastructureProvisioned && mp.specReplicas !== null) {
    if (mp.specReplicas === ready) phase = 'Running';
    else if (mp.specReplicas > ready) phase = managed ? 'Scaling' : 'ScalingUp';
    else phase = managed ? 'Scaling' : 'ScalingDown';
  }
  if (mp.deleting) phase = 'Deleting';
  return phase;
}
