// The workload clusters' side of the living world: a Node joins for each provisioned VM (NotReady, then Ready,
// as its kubelet reports), and the Node of a VM that is gone goes Ready=Unknown and is deleted, as the node
// lifecycle controllers do. Also the per-cluster read of Nodes the other controllers share.

import { providerIdFromArmId } from '../../lib/provider-id';
import type { KubeObject } from '../../lib/unstructured';
import type { ScaleSetRecord } from '../azure/state';
import type { ClusterStore } from '../kube/store';
import { R, remove } from './world-objects';
import type { Pool } from './world-pool';
import { vmKey, type WorldState } from './world-state';

/** The cloud node lifecycle controller's period: a Node is Ready=Unknown this long before it is deleted. */
const NODE_MONITOR_MS = 5_000;

/** A workload cluster's Nodes, read once per change of that cluster rather than once per pool. */
export function nodesOf(
  w: WorldState,
  workload: ClusterStore,
): { all: KubeObject[]; byProviderId: Map<string, KubeObject> } {
  const hit = w.nodeIndex.get(workload);
  if (hit && hit.rv === workload.resourceVersion) return hit;
  const all = workload.peek(R.node);
  const entry = {
    rv: workload.resourceVersion,
    all,
    byProviderId: new Map(all.map((n) => [String(n.spec?.providerID), n])),
  };
  w.nodeIndex.set(workload, entry);
  return entry;
}

export function nodes(w: WorldState, pool: Pool): void {
  const workload = w.kube.clusters.get(pool.clusterName)?.store;
  if (!workload || !pool.rec) return;
  const now = w.now();
  nodesGone(w, pool.rec, workload, now);
  for (const vm of pool.rec.vms.values()) {
    const p = vm.properties as Record<string, unknown>;
    const plan = w.plans.get(vmKey(vm));
    if (!plan || !plan.joins || p.provisioningState !== 'Succeeded' || plan.dueAt > now) continue;
    const name = String((p.osProfile as { computerName?: string } | undefined)?.computerName ?? vm.name);
    const providerID = providerIdFromArmId(String(vm.virtualMachineResourceId ?? vm.id));
    if (!workload.has(R.node, undefined, name)) {
      joinNode(w, workload, {
        name,
        providerID,
        location: pool.rec.location,
        labels: pool.nodeLabels,
        version: pool.nodeVersion,
      });
      plan.dueAt = now + w.delays.ready * 1000;
    } else {
      nodeReady(w, workload, name);
      plan.joins = false; // done
    }
  }
}

/** A VM's Node as its kubelet registers it: tainted uninitialized, NotReady until the network is up. */
function joinNode(
  w: WorldState,
  workload: ClusterStore,
  n: { name: string; providerID: string; location: string; labels?: Record<string, string>; version?: string },
): void {
  const { name, providerID, location } = n;
  workload.create(R.node, undefined, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'topology.kubernetes.io/region': location,
        ...n.labels,
      },
    },
    spec: { providerID, taints: [{ key: 'node.cluster.x-k8s.io/uninitialized', effect: 'NoSchedule' }] },
  });
  const node = workload.get(R.node, undefined, name);
  // A kubelet reports the pressure conditions with Ready from its first status (CAPI's NodeHealthy reads them).
  const pressure = [
    ['MemoryPressure', 'KubeletHasSufficientMemory'],
    ['DiskPressure', 'KubeletHasNoDiskPressure'],
    ['PIDPressure', 'KubeletHasSufficientPID'],
  ].map(([type, reason]) => ({
    type,
    status: 'False',
    reason,
    message: '',
    lastHeartbeatTime: w.iso(),
    lastTransitionTime: w.iso(),
  }));
  workload.update(
    R.node,
    undefined,
    name,
    {
      ...node,
      status: {
        conditions: [
          ...pressure,
          {
            type: 'Ready',
            status: 'False',
            reason: 'KubeletNotReady',
            message: 'container runtime network not ready',
            lastHeartbeatTime: w.iso(),
            lastTransitionTime: w.iso(),
          },
        ],
        nodeInfo: { kubeletVersion: n.version ?? 'v1.33.4' },
      },
    },
    { subresource: 'status' },
  );
}

/** The Node turns Ready (unless it already is). */
function nodeReady(w: WorldState, workload: ClusterStore, name: string): void {
  const node = workload.get(R.node, undefined, name);
  const conditions = (node.status?.conditions as { type: string; status: string }[] | undefined) ?? [];
  const ready = conditions.find((c) => c.type === 'Ready');
  if (ready?.status === 'True') return;
  const others = conditions.filter((c) => c.type !== 'Ready');
  workload.update(
    R.node,
    undefined,
    name,
    {
      ...node,
      status: {
        ...node.status,
        conditions: [
          ...others,
          {
            type: 'Ready',
            status: 'True',
            reason: 'KubeletReady',
            message: 'kubelet is posting ready status',
            lastHeartbeatTime: w.iso(),
            lastTransitionTime: w.iso(),
          },
        ],
      },
    },
    { subresource: 'status' },
  );
}

/**
 * The Nodes of a scale set's VMs that are gone (deleted out of band, by a scale-in or with their Machine):
 * Ready=Unknown once the grace period is over, deleted by the cloud node lifecycle controller
 * {@link NODE_MONITOR_MS} later. Only VMs seen to go are followed: a scenario's Node that has no VM from the
 * start stays (a cluster whose cloud node lifecycle controller does not run).
 */
function nodesGone(w: WorldState, rec: ScaleSetRecord, workload: ClusterStore, now: number): void {
  let seen = w.vmsSeen.get(rec);
  if (!seen) w.vmsSeen.set(rec, (seen = { ids: new Map(), gone: new Map() }));
  // A VM's providerID is worked out once, when it is first seen (a pass goes over every pool's VMs).
  for (const [member, vm] of rec.vms) {
    if (seen.ids.has(member)) continue;
    const id = providerIdFromArmId(String(vm.virtualMachineResourceId ?? vm.id));
    seen.ids.set(member, id);
    seen.gone.delete(id);
  }
  for (const [member, id] of seen.ids) {
    if (rec.vms.has(member)) continue;
    seen.ids.delete(member);
    seen.gone.set(id, now);
  }
  if (!seen.gone.size) return;
  const { byProviderId } = nodesOf(w, workload);
  for (const [id, since] of seen.gone) {
    const node = byProviderId.get(id);
    const name = String(node?.metadata?.name);
    if (!node || !workload.has(R.node, undefined, name)) {
      seen.gone.delete(id);
      continue;
    }
    if (now < since + w.delays.nodeGone * 1000 - NODE_MONITOR_MS) continue;
    const live = workload.get(R.node, undefined, name);
    const conditions = (live.status?.conditions as { type: string; status: string }[] | undefined) ?? [];
    // Deleted only once seen Unknown, however coarse the passes (at a high speed one pass may span both).
    if (conditions.find((c) => c.type === 'Ready')?.status !== 'Unknown') {
      const unknown = {
        type: 'Ready',
        status: 'Unknown',
        reason: 'NodeStatusUnknown',
        message: 'Kubelet stopped posting node status.',
        lastHeartbeatTime: w.iso(),
        lastTransitionTime: w.iso(),
      };
      workload.update(
        R.node,
        undefined,
        name,
        {
          ...live,
          status: { ...live.status, conditions: [...conditions.filter((c) => c.type !== 'Ready'), unknown] },
        },
        { subresource: 'status' },
      );
    } else if (now >= since + w.delays.nodeGone * 1000) {
      remove(workload, R.node, undefined, name);
      seen.gone.delete(id);
    }
  }
}
