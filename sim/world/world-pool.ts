// A MachinePool as the living world's controllers work on it (its AzureMachinePool, machines, scale set and
// workload cluster, resolved once per step), and when CAPZ and CAPI are due to reconcile it.

import type { KubeObject } from '../../lib/unstructured';
import type { ScaleSetRecord } from '../azure/state';
import type { ResourceDef } from '../kube/resources';
import type { ClusterStore } from '../kube/store';
import { resolveAks, type AksPart } from './world-aks-pool';
import { current, R } from './world-objects';
import type { WorldState } from './world-state';

export interface Pool {
  store: ClusterStore;
  ns: string;
  mp: KubeObject;
  /** The infra object (an AzureMachinePool, or a living AKS pool's), of kind `infraDef`. */
  amp: KubeObject;
  infraDef: ResourceDef;
  /** A living AKS pool's own parts (null for an AzureMachinePool). */
  aks: AksPart | null;
  /** Labels its Nodes join with (an AKS pool's agent pool labels). */
  nodeLabels?: Record<string, string>;
  /** The kubelet version its new Nodes report (an AKS pool's: the agent pool's orchestratorVersion). */
  nodeVersion?: string;
  rec: ScaleSetRecord | null;
  clusterName: string;
  /** The workload cluster's store, or null while it is unreachable. */
  workload: ClusterStore | null;
  capiPaused: boolean;
  capzPaused: boolean;
  ampms: KubeObject[];
}

export function resolve(
  w: WorldState,
  store: ClusterStore,
  mp: KubeObject,
  ampmsByAmp: Map<string, KubeObject[]>,
): Pool | null {
  const ns = mp.metadata?.namespace as string;
  const infra = (mp.spec?.template as { spec?: { infrastructureRef?: { name?: string; kind?: string } } } | undefined)
    ?.spec?.infrastructureRef;
  // The world only reads what it resolves (its writes go through update): the stored objects, not copies.
  if (infra?.kind !== 'AzureMachinePool') return resolveAks(w, store, mp);
  const amp = infra.name ? store.peekOne(R.amp, ns, infra.name) : undefined;
  if (!amp) return null;
  const clusterName = String(mp.spec?.clusterName ?? '');
  const cluster = store.peekOne(R.cluster, ns, clusterName) ?? null;
  const vmssId = String(amp.spec?.providerID ?? '').replace(/^azure:\/\//, '');
  const m =
    /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Compute\/virtualMachineScaleSets\/([^/]+)$/i.exec(
      vmssId,
    );
  const rec = m ? (w.azure.state.get(m[1] as string, m[2] as string, m[3] as string) ?? null) : null;
  const clusterPaused =
    cluster?.spec?.paused === true || cluster?.metadata?.annotations?.['cluster.x-k8s.io/paused'] !== undefined;
  const workload = w.kube.clusters.get(clusterName)?.store ?? null;
  return {
    store,
    ns,
    mp,
    amp,
    infraDef: R.amp,
    aks: null,
    rec,
    clusterName,
    workload: workload && !w.unreachable.has(clusterName) ? workload : null,
    capiPaused: clusterPaused || mp.metadata?.annotations?.['cluster.x-k8s.io/paused'] !== undefined,
    capzPaused: clusterPaused || amp.metadata?.annotations?.['cluster.x-k8s.io/paused'] !== undefined,
    // As they are now (the list was taken when the pass reached this cluster; AMPMs deleted since are gone).
    ampms: current(store, R.ampm, ns, ampmsByAmp.get(`${ns}/${amp.metadata?.name}`) ?? []),
  };
}

export function capzDue(w: WorldState, cluster: string, pool: Pool): boolean {
  const key = `${cluster}/${pool.ns}/${pool.amp.metadata?.name}`;
  const last = w.lastCapz.get(key);
  const now = w.now();
  // Changes to the AzureMachinePool itself (e.g. a resync annotation) also trigger a reconcile.
  const replicas = `${String(pool.mp.spec?.replicas)}|${pool.amp.metadata?.resourceVersion}`;
  if (last && last.replicas === replicas && now - last.at < w.delays.capzRequeue * 1000) return false;
  w.lastCapz.set(key, { at: now, replicas: undefined });
  return true;
}

/**
 * CAPI reconciles a pool when its MachinePool, AzureMachinePool, AMPMs or workload Nodes changed, and at
 * least every 10 simulated seconds (a stand-in for its watches and resync).
 */
export function capiDue(w: WorldState, cluster: string, pool: Pool): boolean {
  const key = `${cluster}/${pool.ns}/${pool.mp.metadata?.name}`;
  const sig = [
    pool.mp.metadata?.resourceVersion,
    pool.store.peekOne(pool.infraDef, pool.ns, String(pool.amp.metadata?.name))?.metadata?.resourceVersion ?? '',
    pool.aks ? (pool.aks.aso()?.metadata?.resourceVersion ?? '') : '',
    pool.ampms.map((a) => a.metadata?.resourceVersion).join(','),
    pool.workload?.resourceVersion ?? 'unreachable',
  ].join('|');
  const last = w.lastCapi.get(key);
  const now = w.now();
  if (last && last.sig === sig && now - last.at < 10_000) return false;
  w.lastCapi.set(key, { at: now, sig });
  return true;
}

/** What a living AKS pool's CAPZ reconcile depends on: its objects, ASO's, and its scale set's VMs or its Nodes. */
function aksSignature(pool: Pool): string {
  const vms = pool.rec
    ? [...pool.rec.vms.values()].map(
        (v) => `${String(v.name)}:${String((v.properties as { provisioningState?: string }).provisioningState)}`,
      )
    : [];
  return [
    pool.store.peekOne(R.mp, pool.ns, String(pool.mp.metadata?.name))?.metadata?.resourceVersion,
    pool.store.peekOne(pool.infraDef, pool.ns, String(pool.amp.metadata?.name))?.metadata?.resourceVersion,
    pool.aks?.aso()?.metadata?.resourceVersion,
    vms.join(','),
    pool.workload?.resourceVersion ?? 'unreachable',
  ].join('|');
}

/**
 * CAPZ reconciles a living AKS pool when any of what it reads changed (CAPZ watches the MachinePool and the infra
 * object; an ASO-MP also ASO's objects, and either requeues while not ready), and at least every `capzRequeue`.
 */
export function aksCapzDue(w: WorldState, cluster: string, pool: Pool): boolean {
  const key = `${cluster}/${pool.ns}/aks/${pool.amp.metadata?.name}`;
  const last = w.lastCapz.get(key);
  const now = w.now();
  if (last && last.replicas === aksSignature(pool) && now - last.at < w.delays.capzRequeue * 1000) return false;
  w.lastCapz.set(key, { at: now, replicas: undefined });
  return true;
}

/** Records what CAPZ left after reconciling a living AKS pool, so its own writes do not retrigger it. */
export function aksCapzDone(w: WorldState, cluster: string, pool: Pool): void {
  const entry = w.lastCapz.get(`${cluster}/${pool.ns}/aks/${pool.amp.metadata?.name}`);
  if (entry) entry.replicas = aksSignature(pool);
}

/** Records what CAPZ saw after its pass, so its own writes do not retrigger it. */
export function capzDone(w: WorldState, cluster: string, pool: Pool): void {
  const key = `${cluster}/${pool.ns}/${pool.amp.metadata?.name}`;
  const amp = pool.store.get(pool.infraDef, pool.ns, String(pool.amp.metadata?.name));
  const entry = w.lastCapz.get(key);
  if (entry) entry.replicas = `${String(pool.mp.spec?.replicas)}|${amp.metadata?.resourceVersion}`;
}
