// The living world's AKS controllers (docs/domain.md, "AKS pools"), through the simulated APIs:
// - ASO, on its ManagedClustersAgentPool: a new generation is PUT to AKS (Ready=False, Reconciling) unless AKS is
//   busy (ReconciliationBlocked); once AKS is done, Ready=True (or False with AKS's error code, and PUT again after
//   a back-off: ASO retries a Failed pool) and its status copies AKS's pool; every AZURE_SYNC_PERIOD it reads AKS
//   again (ReconciliationBlocked while AKS is busy then);
// - AKS, on its agent pool: a PUT's count becomes the node resource group scale set's capacity, the pool Scaling
//   until the scale set holds that many running VMs; a failure set on the pool fails the next PUT;
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

const terminal = (state: unknown) => ['succeeded', 'failed', 'canceled'].includes(String(state).toLowerCase());
const propsOf = (rec: AgentPoolRecord) => rec.body.properties as Props;
const readyOf = (o: KubeObject) =>
  ((o.status?.conditions ?? []) as Props[]).find((c) => c.type === 'Ready') as
    (Props & { observedGeneration?: number }) | undefined;

/** ASO and AKS on one pool: ASO's object reconciled against AKS, and AKS's running operation moved on. */
export function asoAndAks(w: WorldState, pool: Pool): void {
  const rec = pool.aks?.agentPoolRec();
  if (!rec) return;
  aksOperation(w, pool, rec);
  aso(w, pool, rec);
}

/** AKS finishes a scale once the scale set holds as many running VMs as the pool counts, none leaving. */
function aksOperation(w: WorldState, pool: Pool, rec: AgentPoolRecord): void {
  const p = propsOf(rec);
  const id = String(rec.body.id).toLowerCase();
  const until = w.aksBusyUntil.get(id);
  if (until !== undefined && w.now() >= until) {
    // AKS's own operation is over.
    w.aksBusyUntil.delete(id);
    p.provisioningState = 'Succeeded';
    w.azure.state.changed();
  }
  if (p.provisioningState !== 'Scaling' || !pool.rec) return;
  const vms = [...pool.rec.vms.values()].map((v) => (v.properties as Props).provisioningState);
  if (vms.length === p.count && vms.every((s) => s === 'Succeeded')) {
    p.provisioningState = 'Succeeded';
    w.azure.state.changed();
  }
}

/** AKS applies a PUT of `count`: Scaling towards it, or Failed with the failure set on the pool. */
function aksPut(w: WorldState, pool: Pool, rec: AgentPoolRecord, count: number): void {
  const p = propsOf(rec);
  const failure = w.aksFailures.get(String(rec.body.id).toLowerCase());
  p.count = count;
  if (failure) {
    p.provisioningState = 'Failed';
    p.status = { provisioningError: { ...failure, details: [] } };
  } else {
    p.provisioningState = 'Scaling';
    delete p.status;
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
  const key = `${pool.clusterName}/${pool.ns}/${pool.aks?.asoName}`;
  const now = w.now();
  if (!w.asoSynced.has(key)) w.asoSynced.set(key, now);
  const gen = obj.metadata?.generation ?? 1;
  const ready = readyOf(obj);
  let observed = ready?.observedGeneration ?? gen;
  const skip = obj.metadata?.annotations?.['serviceoperator.azure.com/reconcile-policy'] === 'skip';
  const busy = !terminal(propsOf(rec).provisioningState);
  let next: Ready | null = null;
  if (gen > observed && !skip) {
    if (busy) next = blocked(rec);
    else {
      aksPut(w, pool, rec, Number((obj.spec as Props | undefined)?.count ?? 0));
      observed = gen;
      next =
        propsOf(rec).provisioningState === 'Failed'
          ? settled(rec)
          : { status: 'False', reason: 'Reconciling', severity: 'Info' };
    }
  } else if (ready?.reason === 'Reconciling' || ready?.reason === 'ReconciliationBlocked') {
    if (!busy) next = settled(rec);
  } else if (ready?.status === 'False' && !busy && !skip && now - (w.asoSynced.get(key) as number) >= RETRY_MS) {
    // A Failed pool: ASO writes it again after its back-off, and AKS tries again.
    aksPut(w, pool, rec, Number((obj.spec as Props | undefined)?.count ?? 0));
    next =
      propsOf(rec).provisioningState === 'Failed'
        ? settled(rec)
        : { status: 'False', reason: 'Reconciling', severity: 'Info' };
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
  const desired = autoscaling && typeof cached === 'number' ? cached : Number(mp.spec?.replicas ?? 1);
  if ((aso.spec as Props | undefined)?.count !== desired) {
    store.update(R.asoap, ns, a.asoName, { ...aso, spec: { ...(aso.spec ?? {}), count: desired } }, { force: true });
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
  const replicas = a.flavour === 'aks-managed' ? ids.length : Number(cached ?? ids.length);
  writeInfra(w, pool, infra, { list: ids, replicas, ready: true, agentPools: { status: 'True' } });
  if (autoscaling && typeof cached === 'number') managedReplicas(pool, mp, cached);
}

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
