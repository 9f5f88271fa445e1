// The living world's AKS controllers (docs/domain.md, "AKS pools"), through the simulated APIs:
// - ASO, on its ManagedClustersAgentPool: a new generation is PUT to AKS (Ready=False, Reconciling) unless AKS is
//   busy (ReconciliationBlocked); once AKS is done, Ready=True (or False with AKS's error code, and PUT again after
//   a back-off: ASO retries a Failed pool) and its status copies AKS's pool; every AZURE_SYNC_PERIOD it reads AKS
//   again (ReconciliationBlocked while AKS is busy then);
// - AKS, on its agent pool: a PUT's count becomes the node resource group scale set's capacity, the pool Scaling
//   until the scale set holds that many running VMs; a PUT of a new version Upgrading, with one surge VM, for
//   `aksUpgrade`; a PUT that changes neither Updating for a few seconds; a failure set on the pool fails the next
//   PUT. ASO holds a version back while the cluster's control plane has not reached it (ReconciliationBlocked); the
//   managed cluster is Upgrading meanwhile;
// - CAPZ's AzureManagedMachinePool and AzureASOManagedMachinePool controllers: the count asked of ASO, not ready
//   while ASO is not done, and only on a whole success the list (an AMMP's from the scale set's VMs, an ASO-MP's
//   from the labelled Nodes) with ready=true. CAPI's side is world-capi.ts's, as for any pool.

import { providerIdFromArmId } from '../../lib/provider-id';
import type { KubeObject } from '../../lib/unstructured';
import type { AgentPoolRecord } from '../azure/state';
import { nodesOf } from './world-nodes';
import { R, same, setCond } from './world-objects';
import type { Pool } from './world-pool';
import type { WorldState } from './world-state';

type Props = Record<string, unknown>;
type Ready = { status: 'True' | 'False'; reason: string; severity?: string; message?: string };

/** ASO's back-off before it writes a Failed agent pool again (simulated ms). */
const RETRY_MS = 20_000;
/** How long AKS takes over a PUT that changes neither the count nor the version (simulated ms). */
const UPDATE_MS = 8_000;

const terminal = (state: unknown) => ['succeeded', 'failed', 'canceled'].includes(String(state).toLowerCase());
const propsOf = (rec: AgentPoolRecord) => rec.body.properties as Props;
const readyOf = (o: KubeObject) =>
  ((o.status?.conditions ?? []) as Props[]).find((c) => c.type === 'Ready') as
    (Props & { observedGeneration?: number }) | undefined;

/** A living AKS pool's ASO object, as the world's maps key it. */
export const asoKey = (pool: Pool) => `${pool.clusterName}/${pool.ns}/${pool.aks?.asoName}`;

/** The managed cluster an agent pool belongs to, by its ARM id (lower-case). */
export const managedClusterIdOf = (rec: AgentPoolRecord) =>
  String(rec.body.id)
    .toLowerCase()
    .replace(/\/agentpools\/[^/]+$/, '');

/** major.minor of a Kubernetes version, comparable as a number pair; null when not one. */
function minorOf(v: string): [number, number] | null {
  const m = /^v?(\d+)\.(\d+)/.exec(v);
  return m ? [Number(m[1]), Number(m[2])] : null;
}

const newerMinor = (a: string, b: string) => {
  const x = minorOf(a);
  const y = minorOf(b);
  return !!x && !!y && (x[0] > y[0] || (x[0] === y[0] && x[1] > y[1]));
};

/**
 * Why ASO holds the agent pool's version back (ASO's pre-reconcile check): the cluster's control plane upgrading,
 * or older than the pool asks for. Null: it may go on.
 */
function versionHold(w: WorldState, rec: AgentPoolRecord, want: string | undefined): string | null {
  const cp = w.aksControlPlanes.get(managedClusterIdOf(rec));
  if (!cp) return null;
  const mc = managedClusterIdOf(rec).split('/').pop();
  if (w.now() < cp.at) return `Managed cluster "${mc}" has not reached Kubernetes version "${cp.version}"`;
  // The pool asks for a newer minor than the control plane has: the same wait, with no end in sight.
  if (want && newerMinor(want, cp.version))
    return `Managed cluster "${mc}" has not reached Kubernetes version "${want}"`;
  return null;
}

/**
 * AKS's managed cluster as its control plane stands: Upgrading to the version an `aksControlPlane` step asked for
 * until it reaches it, then Succeeded at that version.
 */
function controlPlane(w: WorldState, rec: AgentPoolRecord): void {
  const cp = w.aksControlPlanes.get(managedClusterIdOf(rec));
  const mc = cp && w.azure.state.getManagedCluster(rec.subscriptionId, rec.resourceGroup, rec.cluster);
  if (!cp || !mc) return;
  const p = mc.body.properties as Props;
  const reached = w.now() >= cp.at;
  const want = {
    kubernetesVersion: cp.version,
    currentKubernetesVersion: reached ? cp.version : p.currentKubernetesVersion,
    provisioningState: reached ? 'Succeeded' : 'Upgrading',
  };
  if (Object.entries(want).every(([k, v]) => p[k] === v)) return;
  Object.assign(p, want);
  w.azure.state.changed();
}

/** ASO and AKS on one pool: ASO's object reconciled against AKS, and AKS's running operation moved on. */
export function asoAndAks(w: WorldState, pool: Pool): void {
  const rec = pool.aks?.agentPoolRec();
  if (!rec) return;
  controlPlane(w, rec);
  aksOperation(w, pool, rec);
  aso(w, pool, rec);
}

/** The pool's Nodes report `version` once AKS has upgraded them (their kubelet's, as a reimage leaves it). */
function upgradeNodes(w: WorldState, pool: Pool, version: string): void {
  const label = pool.nodeLabels?.['kubernetes.azure.com/agentpool'];
  if (!pool.workload || !label) return;
  const kubelet = `v${version.replace(/^v/, '')}`;
  for (const node of nodesOf(w, pool.workload).all) {
    const info = (node.status?.nodeInfo ?? {}) as Props;
    if (node.metadata?.labels?.['kubernetes.azure.com/agentpool'] !== label || info.kubeletVersion === kubelet)
      continue;
    const name = String(node.metadata?.name);
    pool.workload.update(
      R.node,
      undefined,
      name,
      { ...node, status: { ...node.status, nodeInfo: { ...info, kubeletVersion: kubelet } } },
      { subresource: 'status' },
    );
  }
}

/**
 * AKS moves its operation on: its own (or an upgrade) ends at its time, an upgrade giving back its surge VM; a
 * scale or update ends once the scale set holds as many running VMs as the pool counts.
 */
function aksOperation(w: WorldState, pool: Pool, rec: AgentPoolRecord): void {
  const p = propsOf(rec);
  const id = String(rec.body.id).toLowerCase();
  const until = w.aksBusyUntil.get(id);
  if (until !== undefined && w.now() < until) return;
  if (until !== undefined) {
    w.aksBusyUntil.delete(id);
    const upgrade = w.aksUpgrades.get(id);
    w.aksUpgrades.delete(id);
    if (upgrade) {
      // The nodes run the new version; the surge VM goes, and the pool is done once it has.
      p.currentOrchestratorVersion = upgrade.version;
      upgradeNodes(w, pool, upgrade.version);
      if (pool.rec) w.azure.state.setCapacity(pool.rec, upgrade.count);
      p.provisioningState = 'Scaling';
    } else p.provisioningState = 'Succeeded';
    w.azure.state.changed();
  }
  if (!['Scaling', 'Updating'].includes(String(p.provisioningState)) || !pool.rec) return;
  const vms = [...pool.rec.vms.values()].map((v) => (v.properties as Props).provisioningState);
  if (vms.length === p.count && vms.every((s) => s === 'Succeeded')) {
    p.provisioningState = 'Succeeded';
    w.azure.state.changed();
  }
}

/**
 * AKS applies a PUT of ASO's spec: Upgrading (a new version), Scaling (a new count) or Updating; or Failed with the
 * failure set on the pool.
 */
function aksPut(w: WorldState, pool: Pool, rec: AgentPoolRecord, spec: Props): void {
  const p = propsOf(rec);
  const id = String(rec.body.id).toLowerCase();
  const failure = w.aksFailures.get(id);
  const count = Number(spec.count ?? 0);
  const version = typeof spec.orchestratorVersion === 'string' ? spec.orchestratorVersion : undefined;
  const resized = count !== p.count;
  p.count = count;
  if (failure) {
    p.provisioningState = 'Failed';
    p.status = { provisioningError: { ...failure, details: [] } };
  } else if (version && version !== p.currentOrchestratorVersion) {
    p.orchestratorVersion = version;
    p.provisioningState = 'Upgrading';
    delete p.status;
    w.aksUpgrades.set(id, { version, count });
    w.aksBusyUntil.set(id, w.now() + w.delays.aksUpgrade * 1000);
    if (pool.rec) w.azure.state.setCapacity(pool.rec, count + 1);
  } else {
    p.provisioningState = resized ? 'Scaling' : 'Updating';
    delete p.status;
    if (!resized) w.aksBusyUntil.set(id, w.now() + UPDATE_MS);
    if (pool.rec) w.azure.state.setCapacity(pool.rec, count);
  }
  w.azure.state.changed();
}

/** What ASO's Ready says once AKS is done: True, or False with AKS's error code. */
function settled(rec: AgentPoolRecord): Ready {
  const p = propsOf(rec);
  if (p.provisioningState !== 'Failed') return { status: 'True', reason: 'Succeeded' };
  const e = (p.status as { provisioningError?: { code?: string; message?: string } } | undefined)?.provisioningError;
  return { status: 'False', reason: e?.code ?? 'Failed', severity: 'Error', message: e?.message ?? '' };
}

function blocked(rec: AgentPoolRecord): Ready {
  return {
    status: 'False',
    reason: 'ReconciliationBlocked',
    severity: 'Warning',
    message: `Managed cluster agent pool is in provisioning state "${String(propsOf(rec).provisioningState)}"`,
  };
}

/** ASO's reconcile of its agent pool object (see the file's head). */
function aso(w: WorldState, pool: Pool, rec: AgentPoolRecord): void {
  const obj = pool.aks?.aso();
  if (!obj) return;
  const key = asoKey(pool);
  const now = w.now();
  if (!w.asoSynced.has(key)) w.asoSynced.set(key, now);
  const gen = obj.metadata?.generation ?? 1;
  const ready = readyOf(obj);
  let observed = ready?.observedGeneration ?? gen;
  const skip = obj.metadata?.annotations?.['serviceoperator.azure.com/reconcile-policy'] === 'skip';
  const busy = !terminal(propsOf(rec).provisioningState);
  const spec = (obj.spec ?? {}) as Props;
  const hold = versionHold(w, rec, typeof spec.orchestratorVersion === 'string' ? spec.orchestratorVersion : undefined);
  /** ASO writes the pool to AKS: Reconciling, or AKS's error at once. */
  const put = (): Ready => {
    aksPut(w, pool, rec, spec);
    return propsOf(rec).provisioningState === 'Failed'
      ? settled(rec)
      : { status: 'False', reason: 'Reconciling', severity: 'Info' };
  };
  let next: Ready | null = null;
  if (gen > observed && !skip) {
    if (busy) next = blocked(rec);
    else if (hold) next = { status: 'False', reason: 'ReconciliationBlocked', severity: 'Warning', message: hold };
    else {
      next = put();
      observed = gen;
    }
  } else if (ready?.reason === 'Reconciling' || ready?.reason === 'ReconciliationBlocked') {
    if (!busy) next = settled(rec);
  } else if (
    ready?.status === 'False' &&
    !busy &&
    !skip &&
    !hold &&
    now - (w.asoSynced.get(key) as number) >= RETRY_MS
  ) {
    // A Failed pool: ASO writes it again after its back-off, and AKS tries again.
    next = put();
  } else if (now - (w.asoSynced.get(key) as number) >= w.delays.asoSync * 1000) {
    next = busy ? blocked(rec) : settled(rec);
  }
  if (!next) return;
  if (!busy) w.asoSynced.set(key, now);
  writeAso(w, pool, obj, next, observed, busy ? null : rec);
}

/** Writes ASO's status: its Ready condition and, when AKS was read, its copy of the agent pool. */
function writeAso(
  w: WorldState,
  pool: Pool,
  obj: KubeObject,
  ready: Ready,
  observedGeneration: number,
  read: AgentPoolRecord | null,
): void {
  const prev = readyOf(obj);
  const keep = prev && prev.status === ready.status && prev.reason === ready.reason;
  const cond = {
    type: 'Ready',
    status: ready.status,
    reason: ready.reason,
    message: ready.message ?? '',
    severity: ready.status === 'True' ? '' : (ready.severity ?? 'Info'),
    lastTransitionTime: keep ? prev.lastTransitionTime : w.iso(),
    observedGeneration,
  };
  const p = read ? propsOf(read) : null;
  const copy = p
    ? {
        id: read?.body.id,
        count: p.count,
        provisioningState: p.provisioningState,
        enableAutoScaling: p.enableAutoScaling,
        minCount: p.minCount,
        maxCount: p.maxCount,
        powerState: p.powerState,
        orchestratorVersion: p.orchestratorVersion,
        currentOrchestratorVersion: p.currentOrchestratorVersion,
        nodeImageVersion: p.nodeImageVersion,
      }
    : {};
  const status = { ...(obj.status ?? {}), ...copy, conditions: [cond] };
  if (same(status, obj.status)) return;
  const name = String(obj.metadata?.name);
  pool.store.update(R.asoap, pool.ns, name, { ...obj, status }, { subresource: 'status', force: true });
}

/** CAPZ's reconcile of a living AKS pool's infra object (see the file's head). */
export function capzAks(w: WorldState, pool: Pool): void {
  const a = pool.aks;
  if (!a) return;
  const { store, ns } = pool;
  const name = String(pool.amp.metadata?.name);
  const infra = store.get(pool.infraDef, ns, name);
  const mp = store.get(R.mp, ns, String(pool.mp.metadata?.name));
  const aso = a.aso();
  if (!aso)
    return notReady(w, pool, infra, { reason: 'Failed', severity: 'Error', message: 'agent pool object not found' });
  if (a.flavour === 'aks-aso' && infra.metadata?.annotations?.['cluster.x-k8s.io/paused'] !== undefined)
    return notReady(w, pool, infra, null);
  const autoscaling =
    a.flavour === 'aks-managed'
      ? Boolean(infra.spec?.scaling)
      : (aso.spec as Props | undefined)?.enableAutoScaling === true;
  const cached = (aso.status as Props | undefined)?.count;
  const asoSpec = (aso.spec ?? {}) as Props;
  const want = desiredSpec(mp, asoSpec, autoscaling && typeof cached === 'number' ? cached : null);
  if (!same(want, asoSpec)) {
    store.update(R.asoap, ns, a.asoName, { ...aso, spec: want }, { force: true });
    return notReady(w, pool, infra, {
      reason: 'Creating',
      severity: 'Info',
      message: 'agentpools creating or updating',
    });
  }
  const ready = readyOf(aso);
  if (ready?.status !== 'True' || (ready.observedGeneration ?? 0) < (aso.metadata?.generation ?? 1)) {
    const reconciling = ready?.reason === 'Reconciling' || ready === undefined;
    return notReady(
      w,
      pool,
      infra,
      reconciling
        ? { reason: 'Creating', severity: 'Info', message: 'agentpools creating or updating' }
        : {
            reason: 'Failed',
            severity: 'Error',
            message: `agentpools failed to create or update. err: resource is not Ready: ${String(ready?.message ?? '')}`,
          },
    );
  }
  const ids = listed(w, pool);
  if (!ids) return notReady(w, pool, infra, { reason: 'Failed', severity: 'Error', message: 'members not found' });
  perpetualDiff(w, pool, aso);
  const replicas = a.flavour === 'aks-managed' ? ids.length : Number(cached ?? ids.length);
  writeInfra(w, pool, infra, { list: ids, replicas, ready: true, agentPools: { status: 'True' } });
  if (autoscaling && typeof cached === 'number') managedReplicas(pool, mp, cached);
}

/**
 * What CAPZ asks of ASO: the MachinePool's count (ASO's cached one while AKS's autoscaler owns it) and its version
 * (CAPZ's AzureManagedMachinePool takes the higher of it and the control plane's auto-upgrade version; no
 * auto-upgrade here).
 */
function desiredSpec(mp: KubeObject, spec: Props, autoscaled: number | null): Props {
  const count = autoscaled ?? Number(mp.spec?.replicas ?? 1);
  const version = (mp.spec?.template as { spec?: { version?: unknown } } | undefined)?.spec?.version;
  return {
    ...spec,
    count,
    ...(typeof version === 'string' ? { orchestratorVersion: version.replace(/^v/, '') } : {}),
  };
}

/**
 * A perpetual diff (K7): CAPZ's desired agent pool never matches ASO's object (a spot taint AKS adds and CAPZ
 * takes away, CAPZ #3976 and #4116), so CAPZ writes it again at its next reconcile, every `capzRequeue`. CAPZ
 * judges readiness by the object as it found it (Ready), so the pool is ready until ASO takes the write up.
 */
function perpetualDiff(w: WorldState, pool: Pool, aso: KubeObject): void {
  const key = asoKey(pool);
  if (!w.aksPerpetualDiff.has(key)) return;
  const last = w.lastDiffWrite.get(key) ?? 0;
  if (w.now() - last < w.delays.capzRequeue * 1000) return;
  w.lastDiffWrite.set(key, w.now());
  const spec = (aso.spec ?? {}) as Props;
  const taints = Array.isArray(spec.nodeTaints) && spec.nodeTaints.length ? [] : [SPOT_TAINT];
  pool.store.update(
    R.asoap,
    pool.ns,
    String(aso.metadata?.name),
    { ...aso, spec: { ...spec, nodeTaints: taints } },
    {
      force: true,
    },
  );
}

const SPOT_TAINT = 'kubernetes.azure.com/scalesetpriority=spot:NoSchedule';

/** The members CAPZ lists on success: an AMMP its scale set's VMs, an ASO-MP its labelled Nodes (null: cannot). */
function listed(w: WorldState, pool: Pool): string[] | null {
  const a = pool.aks as NonNullable<Pool['aks']>;
  if (a.flavour === 'aks-managed') {
    if (!pool.rec) return null;
    return [...pool.rec.vms.values()].map((v) => providerIdFromArmId(String(v.id))).sort();
  }
  if (!pool.workload) return null;
  const nodes = nodesOf(w, pool.workload).all.filter(
    (n) => n.metadata?.labels?.['kubernetes.azure.com/agentpool'] === a.agentPool,
  );
  if (nodes.some((n) => !n.spec?.providerID)) return null;
  return nodes.map((n) => String(n.spec?.providerID)).sort();
}

/** Not ready, its list and replicas as they were; an AMMP's AgentPoolsReady says why (null: leave it). */
function notReady(
  w: WorldState,
  pool: Pool,
  infra: KubeObject,
  why: { reason: string; severity: string; message: string } | null,
): void {
  writeInfra(w, pool, infra, {
    list: null,
    replicas: null,
    ready: false,
    agentPools: why ? { status: 'False', ...why } : null,
  });
}

function writeInfra(
  w: WorldState,
  pool: Pool,
  infra: KubeObject,
  o: {
    list: string[] | null;
    replicas: number | null;
    ready: boolean;
    agentPools: { status: string; reason?: string; severity?: string; message?: string } | null;
  },
): void {
  const { store, ns } = pool;
  const name = String(infra.metadata?.name);
  if (o.list && !same(o.list, infra.spec?.providerIDList))
    store.update(
      pool.infraDef,
      ns,
      name,
      { ...infra, spec: { ...(infra.spec ?? {}), providerIDList: o.list } },
      { force: true },
    );
  const cur = store.get(pool.infraDef, ns, name);
  const status: Props = { ...(cur.status ?? {}), ready: o.ready };
  if (o.replicas !== null) status.replicas = o.replicas;
  if (pool.aks?.flavour === 'aks-managed' && o.agentPools) {
    const c = { type: 'AgentPoolsReady', ...o.agentPools };
    let conds = setCond((status.conditions ?? []) as Props[], c, w.iso());
    conds = setCond(conds, { ...c, type: 'Ready' }, w.iso());
    status.conditions = conds.map((x) => ({
      ...x,
      ...(x.status === 'False' ? { message: o.agentPools?.message } : {}),
    }));
  }
  if (!same(status, cur.status))
    store.update(pool.infraDef, ns, name, { ...cur, status }, { subresource: 'status', force: true });
}

/** With AKS's autoscaler on, CAPZ marks the MachinePool's replicas as managed elsewhere and sets them to ASO's count. */
function managedReplicas(pool: Pool, mp: KubeObject, count: number): void {
  const value = pool.aks?.flavour === 'aks-managed' ? 'true' : 'aks';
  const annotations = { ...(mp.metadata?.annotations ?? {}), 'cluster.x-k8s.io/replicas-managed-by': value };
  if (mp.spec?.replicas === count && same(annotations, mp.metadata?.annotations)) return;
  pool.store.update(
    R.mp,
    pool.ns,
    String(mp.metadata?.name),
    { ...mp, metadata: { ...mp.metadata, annotations }, spec: { ...(mp.spec ?? {}), replicas: count } },
    { force: true },
  );
}
