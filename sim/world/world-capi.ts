// CAPI's MachinePool controller in the living world, applied through the simulated APIs: the MachinePool's
// providerIDList and status and the workload Nodes it deletes or patches (its Machines: world-capi-machines.ts).
// The decisions are capi-behaviour.ts's pure functions; this module reads their inputs and writes their results.

import type { KubeObject } from '../../lib/unstructured';
import type { ClusterStore } from '../kube/store';
import {
  capiNode,
  reconcileNormal,
  reconcilePhase,
  type CapiNode,
  type InfraMachinePool,
  type MachinePoolState,
  type NodePatch,
} from './capi-behaviour';
import { setReplicas, type ReplicaCounters } from './capi-status';
import { capiMachines } from './world-capi-machines';
import { nodesOf } from './world-nodes';
import { R, remove, same, setCond } from './world-objects';
import type { Pool } from './world-pool';
import type { WorldState } from './world-state';

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * CAPI's MachinePool controller on one pool (capi-behaviour.ts): the Machines for its AMPMs, then bootstrap,
 * infrastructure (the readiness gate) and node references, then the status a reconcile writes (phase, v1beta2
 * counters, v1beta1 conditions).
 */
export function capi(w: WorldState, pool: Pool): void {
  const { store, ns } = pool;
  const mpName = String(pool.mp.metadata?.name);
  const amp = store.get(pool.infraDef, ns, String(pool.amp.metadata?.name));
  const nodes = pool.workload ? capiNodesOf(w, pool.workload) : null;
  const machines = capiMachines(w, pool, nodes);
  const mp = store.get(R.mp, ns, mpName);
  const before = machinePoolState(mp);
  const ampStatus = (amp.status ?? {}) as {
    ready?: unknown;
    replicas?: unknown;
    infrastructureMachineKind?: unknown;
  };
  const infra: InfraMachinePool = {
    ready: ampStatus.ready === true,
    providerIDList: Array.isArray(amp.spec?.providerIDList) ? (amp.spec.providerIDList as string[]) : undefined,
    replicas: typeof ampStatus.replicas === 'number' ? ampStatus.replicas : undefined,
    deleting: Boolean(amp.metadata?.deletionTimestamp),
  };
  // Bootstrap data is given directly (spec.template.spec.bootstrap.dataSecretName): always created.
  const r = reconcileNormal({ mp: before, bootstrapDataSecretCreated: true, infra, nodes, now: w.now() });
  if (pool.workload) applyNodeChanges(pool.workload, r.deleteNodes, r.patchNodes);
  const counters = setReplicas(
    r.mp,
    typeof ampStatus.infrastructureMachineKind === 'string' && ampStatus.infrastructureMachineKind !== '',
    machines,
    nodes,
  );
  const list = omitEmpty(r.mp.providerIDList);
  if (!same(list, omitEmpty(mp.spec?.providerIDList as string[] | undefined))) {
    const { providerIDList: _old, ...spec } = (mp.spec ?? {}) as Record<string, unknown>;
    store.update(
      R.mp,
      ns,
      mpName,
      { ...mp, spec: { ...spec, ...(list ? { providerIDList: list } : {}) } },
      { force: true },
    );
  }
  const latest = store.get(R.mp, ns, mpName);
  const st = capiStatus(w, latest, before, r.mp, counters, amp);
  if (!same(st, latest.status))
    store.update(R.mp, ns, mpName, { ...latest, status: st }, { subresource: 'status', force: true });
}

/** The MachinePool status after a reconcile: the fields of `after` written over what the object holds. */
function capiStatus(
  w: WorldState,
  mp: KubeObject,
  before: MachinePoolState,
  after: MachinePoolState,
  counters: ReplicaCounters,
  amp: KubeObject,
): Record<string, unknown> {
  const now = w.iso();
  const st = structuredClone(mp.status ?? {}) as Record<string, unknown>;
  st.initialization = {
    bootstrapDataSecretCreated: after.bootstrapDataSecretCreated,
    infrastructureProvisioned: after.infrastructureProvisioned,
  };
  if (after.statusReplicas !== undefined) st.replicas = after.statusReplicas;
  if (after.nodeRefs !== before.nodeRefs) {
    if (after.nodeRefs.length)
      st.nodeRefs = after.nodeRefs.map((r) => ({
        apiVersion: 'v1',
        kind: 'Node',
        name: r.name,
        ...(r.uid ? { uid: r.uid } : {}),
      }));
    else delete st.nodeRefs;
  }
  for (const k of ['readyReplicas', 'availableReplicas', 'upToDateReplicas', 'versions'] as const) {
    if (counters[k] === undefined) delete st[k];
    else st[k] = counters[k];
  }
  st.phase = reconcilePhase(after);
  const dep = (isObj(st.deprecated) && isObj(st.deprecated.v1beta1) ? st.deprecated.v1beta1 : {}) as Record<
    string,
    unknown
  >;
  Object.assign(dep, after.v1beta1);
  dep.conditions = v1beta1Conditions((dep.conditions as Record<string, unknown>[] | undefined) ?? [], after, amp, now);
  st.deprecated = { ...(isObj(st.deprecated) ? st.deprecated : {}), v1beta1: dep };
  return st;
}

/** The v1beta1 conditions a reconcile sets: InfrastructureReady, BootstrapReady, ReplicasReady, then Ready. */
function v1beta1Conditions(
  conds: Record<string, unknown>[],
  after: MachinePoolState,
  amp: KubeObject,
  now: string,
): Record<string, unknown>[] {
  // InfrastructureReady mirrors the infra object's Ready condition, else falls back on status.ready.
  const infraReady = (
    amp.status?.conditions as
      { type: string; status: string; reason?: string; severity?: string; message?: string }[] | undefined
  )?.find((c) => c.type === 'Ready');
  conds = setCond(
    conds,
    infraReady
      ? {
          type: 'InfrastructureReady',
          status: infraReady.status,
          reason: infraReady.reason,
          severity: infraReady.severity,
        }
      : {
          type: 'InfrastructureReady',
          status: after.infrastructureProvisioned ? 'True' : 'False',
          reason: after.infrastructureProvisioned ? undefined : 'WaitingForInfrastructure',
          severity: 'Info',
        },
    now,
  );
  conds = setCond(conds, { type: 'BootstrapReady', status: 'True' }, now);
  if (after.replicasReady)
    conds = setCond(
      conds,
      {
        type: 'ReplicasReady',
        status: after.replicasReady,
        reason: after.replicasReady === 'False' ? 'WaitingForReplicasReady' : undefined,
        severity: 'Info',
      },
      now,
    );
  const notReady = conds.find((c) => c.type !== 'Ready' && c.status === 'False');
  return setCond(
    conds,
    notReady
      ? {
          type: 'Ready',
          status: 'False',
          reason: String(notReady.reason ?? ''),
          severity: String(notReady.severity ?? 'Info'),
        }
      : { type: 'Ready', status: 'True' },
    now,
  );
}

/** Deletes and patches workload Nodes for CAPI (Nodes already gone are skipped). */
export function applyNodeChanges(
  workload: ClusterStore,
  removed: readonly string[],
  patches: readonly NodePatch[],
): void {
  for (const name of removed) if (workload.has(R.node, undefined, name)) remove(workload, R.node, undefined, name);
  for (const p of patches) {
    const n = workload.peekOne(R.node, undefined, p.name);
    if (!n) continue;
    const { taints: _old, ...spec } = (n.spec ?? {}) as Record<string, unknown>;
    workload.update(R.node, undefined, p.name, {
      ...n,
      metadata: { ...n.metadata, annotations: p.annotations },
      spec: { ...spec, ...(p.taints.length ? { taints: p.taints } : {}) },
    });
  }
}

/** A workload cluster's Nodes as CAPI reads them, once per change of that cluster. */
export function capiNodesOf(w: WorldState, workload: ClusterStore): CapiNode[] {
  const hit = w.capiNodeIndex.get(workload);
  if (hit && hit.rv === workload.resourceVersion) return hit.nodes;
  const nodes = nodesOf(w, workload).all.map(capiNode);
  w.capiNodeIndex.set(workload, { rv: workload.resourceVersion, nodes });
  return nodes;
}

/** A stored list as CAPI writes it (omitempty): an empty list is not written. */
const omitEmpty = (list: readonly string[] | undefined) => (list && list.length ? list : undefined);

/** A MachinePool object as CAPI's MachinePool controller reads it. */
export function machinePoolState(mp: KubeObject): MachinePoolState {
  const spec = (mp.spec ?? {}) as {
    clusterName?: string;
    replicas?: unknown;
    providerIDList?: unknown;
    template?: { spec?: { minReadySeconds?: unknown } };
  };
  const st = (mp.status ?? {}) as {
    phase?: string;
    replicas?: unknown;
    nodeRefs?: { name?: string; uid?: string }[];
    initialization?: Record<string, unknown>;
    deprecated?: { v1beta1?: Record<string, unknown> };
  };
  const dep = st.deprecated?.v1beta1 ?? {};
  const count = (v: unknown) => (typeof v === 'number' ? v : 0);
  const replicasReady = (dep.conditions as { type: string; status: string }[] | undefined)?.find(
    (c) => c.type === 'ReplicasReady',
  )?.status;
  const minReady = spec.template?.spec?.minReadySeconds;
  return {
    name: String(mp.metadata?.name ?? ''),
    namespace: String(mp.metadata?.namespace ?? ''),
    clusterName: String(spec.clusterName ?? ''),
    specReplicas: typeof spec.replicas === 'number' ? spec.replicas : null,
    providerIDList: Array.isArray(spec.providerIDList) ? (spec.providerIDList as string[]) : undefined,
    minReadySeconds: typeof minReady === 'number' ? minReady : 0,
    replicasManagedBy: mp.metadata?.annotations?.['cluster.x-k8s.io/replicas-managed-by'],
    deleting: Boolean(mp.metadata?.deletionTimestamp),
    phase: st.phase ?? '',
    bootstrapDataSecretCreated: st.initialization?.bootstrapDataSecretCreated === true,
    infrastructureProvisioned: st.initialization?.infrastructureProvisioned === true,
    statusReplicas: typeof st.replicas === 'number' ? st.replicas : undefined,
    nodeRefs: (st.nodeRefs ?? []).map((r) => ({ name: String(r.name ?? ''), ...(r.uid ? { uid: r.uid } : {}) })),
    v1beta1: {
      readyReplicas: count(dep.readyReplicas),
      availableReplicas: count(dep.availableReplicas),
      unavailableReplicas: count(dep.unavailableReplicas),
    },
    ...(replicasReady === 'True' || replicasReady === 'False' ? { replicasReady } : {}),
  };
}
