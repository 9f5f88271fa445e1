// A MachinePool being deleted, in the living world: CAPI and CAPZ tearing down its AzureMachinePool, scale set,
// machines and Nodes over two passes before its finalizer goes.

import type { KubeObject } from '../../lib/unstructured';
import type { ClusterStore } from '../kube/store';
import { reconcilePhase, retiredNodes } from './capi-behaviour';
import { applyNodeChanges, capiNodesOf, machinePoolState } from './world-capi';
import { current, R, remove } from './world-objects';
import type { WorldState } from './world-state';

/**
 * A MachinePool being deleted (its finalizer holds it), over two passes; each shows phase Deleting
 * (reconcilePhase runs after every deletion reconcile). CAPI deletes its AzureMachinePool; CAPZ deletes the
 * scale set (with its VMs) and the AMPMs, then lets the AzureMachinePool go. On the next pass CAPI deletes the
 * Nodes in nodeRefs whose providerID is not in the list (reconcileDeleteNodes: it needs the workload cluster,
 * else the pool waits) and removes its finalizer; the pool's Machines go with it, the Machine controller
 * deleting each one's Node. Paused (Cluster or annotation), nothing moves.
 */
export function deleteMachinePool(
  w: WorldState,
  store: ClusterStore,
  mp: KubeObject,
  ampmsByAmp: Map<string, KubeObject[]>,
): void {
  const ns = String(mp.metadata?.namespace);
  const mpName = String(mp.metadata?.name);
  const clusterName = String(mp.spec?.clusterName ?? '');
  const cluster = store.peekOne(R.cluster, ns, clusterName);
  if (
    cluster?.spec?.paused === true ||
    cluster?.metadata?.annotations?.['cluster.x-k8s.io/paused'] !== undefined ||
    mp.metadata?.annotations?.['cluster.x-k8s.io/paused'] !== undefined
  )
    return;
  const phase = reconcilePhase(machinePoolState(mp));
  if (mp.status?.phase !== phase)
    store.update(R.mp, ns, mpName, { ...mp, status: { ...mp.status, phase } }, { subresource: 'status', force: true });
  const ampName = (mp.spec?.template as { spec?: { infrastructureRef?: { name?: string } } } | undefined)?.spec
    ?.infrastructureRef?.name;
  const amp = ampName ? store.peekOne(R.amp, ns, ampName) : undefined;
  if (amp && ampName) {
    const m =
      /^azure:\/\/\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Compute\/virtualMachineScaleSets\/([^/]+)$/i.exec(
        String(amp.spec?.providerID ?? ''),
      );
    if (m) w.azure.state.deleteScaleSet(m[1] as string, m[2] as string, m[3] as string);
    for (const a of current(store, R.ampm, ns, ampmsByAmp.get(`${ns}/${ampName}`) ?? []))
      remove(store, R.ampm, ns, String(a.metadata?.name));
    remove(store, R.amp, ns, ampName);
    return;
  }
  const workload = w.unreachable.has(clusterName) ? null : (w.kube.clusters.get(clusterName)?.store ?? null);
  const state = machinePoolState(mp);
  if (state.nodeRefs.length && !workload) return;
  if (workload)
    applyNodeChanges(workload, retiredNodes(state.nodeRefs, state.providerIDList, capiNodesOf(w, workload)), []);
  for (const machine of store.peek(R.machine)) {
    if (machine.metadata?.namespace !== ns || machine.metadata?.labels?.['cluster.x-k8s.io/pool-name'] !== mpName)
      continue;
    const node = (machine.status?.nodeRef as { name?: string } | undefined)?.name;
    if (workload && node) applyNodeChanges(workload, [node], []);
    remove(store, R.machine, ns, String(machine.metadata?.name));
  }
  remove(store, R.mp, ns, mpName);
}
