// CAPZ's AzureMachinePool controller in the living world: scales the scale set to the MachinePool's replicas,
// keeps one AzureMachinePoolMachine per VM (with its status and the Events CAPZ records), and writes the
// AzureMachinePool's status and providerIDList as the chosen CAPZ behaviour does (capz-behaviour.ts).

import { providerIdFromArmId } from '../../lib/provider-id';
import type { KubeObject } from '../../lib/unstructured';
import type { Rest, ScaleSetRecord } from '../azure/state';
import type { ClusterStore } from '../kube/store';
import {
  capzAmpmLabels,
  capzProvisioningState,
  capzReadySummary,
  capzReplicasAndProviderIds,
  seededRandom,
  shuffledOrder,
  type CacheOrder,
  type CapzBehaviour,
  type CapzCondition,
  type CapzPoolRef,
} from './capz-behaviour';
import { nodesOf } from './world-nodes';
import { current, R, remove, same, setCond } from './world-objects';
import type { Pool } from './world-pool';
import type { WorldState } from './world-state';

/**
 * The order CAPZ's informer cache lists a pool's AzureMachinePoolMachines in: a Go map's, so a fresh shuffle
 * for each list, from one generator per world (seeded by `opts.seed`).
 */
function capzCacheOrder(w: WorldState): CacheOrder {
  return (w.cacheOrder ??= shuffledOrder(seededRandom(w.opts.seed ?? Date.now())));
}

export function capz(w: WorldState, pool: Pool, behaviour: CapzBehaviour): void {
  const { ns, mp, amp, rec } = pool;
  if (!rec) return;
  const state = w.azure.state;
  const replicas = typeof mp.spec?.replicas === 'number' ? mp.spec.replicas : null;
  const managed = mp.metadata?.annotations?.['cluster.x-k8s.io/replicas-managed-by'];
  // Scale the VMSS to spec.replicas (unless an external autoscaler manages it).
  if (
    replicas !== null &&
    (!managed || managed === 'false') &&
    state.capacity(rec) !== replicas &&
    (rec.body.properties as Record<string, unknown>).provisioningState !== 'Updating'
  ) {
    state.setCapacity(rec, replicas);
  }
  const vmsById = new Map(
    [...rec.vms.values()].map((vm) => [providerIdFromArmId(String(vm.virtualMachineResourceId ?? vm.id)), vm]),
  );
  const byProviderId = new Map(pool.ampms.map((a) => [String(a.spec?.providerID), a]));
  const ref: CapzPoolRef = {
    namespace: ns,
    clusterName: pool.clusterName,
    ampName: String(amp.metadata?.name),
    mpName: String(mp.metadata?.name),
  };
  const workload = pool.workload;
  const nodeByPid = workload ? nodesOf(w, workload).byProviderId : new Map<string, KubeObject>();
  const now = w.iso();
  const created = createMachines(pool, ref, vmsById, byProviderId);
  deleteGoneMachines(w, pool, vmsById, byProviderId);
  machineStatuses(w, pool, vmsById, byProviderId, nodeByPid, now);
  poolStatus(w, pool, behaviour, { rec, ref, replicas, created, now });
}

/** Creates an AMPM for every instance that has none (skipping Deleting); returns those created. */
function createMachines(
  pool: Pool,
  ref: CapzPoolRef,
  vmsById: Map<string, Rest>,
  byProviderId: Map<string, KubeObject>,
): KubeObject[] {
  const { store, ns, amp } = pool;
  const created: KubeObject[] = [];
  for (const [pid, vm] of vmsById) {
    const p = vm.properties as Record<string, unknown>;
    if (byProviderId.has(pid) || p.provisioningState === 'Deleting') continue;
    const member = String(vm.instanceId ?? vm.name);
    const name = `${amp.metadata?.name}-${member.replace(/_/g, '-')}`.toLowerCase();
    if (store.has(R.ampm, ns, name)) continue;
    store.create(R.ampm, ns, {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'AzureMachinePoolMachine',
      metadata: {
        name,
        labels: capzAmpmLabels(ref),
        finalizers: ['azuremachinepoolmachine.infrastructure.cluster.x-k8s.io'],
        ownerReferences: [
          {
            apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
            kind: 'AzureMachinePool',
            name: String(amp.metadata?.name),
            uid: String(amp.metadata?.uid),
          },
        ],
      },
      spec: { providerID: pid, instanceID: member },
    });
    byProviderId.set(pid, store.get(R.ampm, ns, name));
    created.push(store.get(R.ampm, ns, name));
  }
  return created;
}

/** AMPMs whose instance is gone: delete the owner Machine and the AMPM (drain is instant here). */
function deleteGoneMachines(
  w: WorldState,
  pool: Pool,
  vmsById: Map<string, Rest>,
  byProviderId: Map<string, KubeObject>,
): void {
  const { store, ns, amp } = pool;
  for (const [pid, ampm] of byProviderId) {
    if (vmsById.has(pid)) continue;
    const name = String(ampm.metadata?.name);
    if (!w.scaledIn.delete(pid)) {
      event(
        w,
        store,
        amp,
        'UnexpectedVMDeletion',
        `VM ${String(ampm.spec?.instanceID ?? name)} (${pid}) was deleted outside of CAPZ`,
        'azuremachinepool-reconciler',
        `deleted:${pid}`,
      );
    }
    const machine = ampm.metadata?.ownerReferences?.find((o) => o.kind === 'Machine')?.name;
    if (machine && store.has(R.machine, ns, machine)) remove(store, R.machine, ns, machine);
    remove(store, R.ampm, ns, name);
    byProviderId.delete(pid);
  }
}

/** AMPM status: ready = the Node found by exact providerID is Ready and the VM Succeeded. */
function machineStatuses(
  w: WorldState,
  pool: Pool,
  vmsById: Map<string, Rest>,
  byProviderId: Map<string, KubeObject>,
  nodeByPid: Map<string, KubeObject>,
  now: string,
): void {
  const { store, ns } = pool;
  for (const [pid, a] of byProviderId) {
    const vm = vmsById.get(pid);
    const vmState = String((vm?.properties as Record<string, unknown> | undefined)?.provisioningState ?? 'Deleted');
    const node = nodeByPid.get(pid);
    const nodeReady =
      (node?.status?.conditions as { type: string; status: string }[] | undefined)?.some(
        (c) => c.type === 'Ready' && c.status === 'True',
      ) ?? false;
    const isReady = nodeReady && vmState === 'Succeeded';
    if (vmState === 'Failed') {
      const code =
        /ProvisioningState\/failed\/(.+)/.exec(
          String(
            ((vm?.properties as { instanceView?: { statuses?: { code?: string }[] } } | undefined)?.instanceView
              ?.statuses ?? [])[0]?.code ?? '',
          ),
        )?.[1] ?? 'unknown';
      event(
        w,
        store,
        a,
        'FailedVMState',
        `VM is in a failed state: ProvisioningState/failed/${code}`,
        'azuremachinepoolmachine-reconciler',
        `failed:${pid}`,
      );
    }
    const conds = (a.status?.conditions as Record<string, unknown>[] | undefined) ?? [];
    const reason = isReady ? undefined : node ? 'NodeConditionsFailed' : 'NodeProvisioning';
    const status = {
      ...a.status,
      ready: isReady,
      provisioningState: vmState,
      latestModelApplied: (vm?.properties as { latestModelApplied?: boolean } | undefined)?.latestModelApplied ?? true,
      version: 'v1.33.4',
      ...(node && isReady ? { nodeRef: { apiVersion: 'v1', kind: 'Node', name: node.metadata?.name } } : {}),
      conditions: setCond(
        setCond(
          conds,
          { type: 'MachineNodeHealthy', status: isReady ? 'True' : 'False', reason, severity: 'Info' },
          now,
        ),
        { type: 'Ready', status: isReady ? 'True' : 'False', reason, severity: 'Info' },
        now,
      ),
    };
    if (!same(status, a.status))
      store.update(R.ampm, ns, String(a.metadata?.name), { ...a, status }, { subresource: 'status', force: true });
  }
}

/** The AzureMachinePool's status and providerIDList, as the CAPZ behaviour writes them. */
function poolStatus(
  w: WorldState,
  pool: Pool,
  behaviour: CapzBehaviour,
  step: { rec: ScaleSetRecord; ref: CapzPoolRef; replicas: number | null; created: KubeObject[]; now: string },
): void {
  const { store, ns, amp } = pool;
  const { rec, ref, replicas, created, now } = step;
  // setProvisioningStateAndConditions (with the previous status.replicas), then updateReplicasAndProviderIDs.
  const vmssState = String((rec.body.properties as Record<string, unknown>).provisioningState);
  const prevReplicas = typeof amp.status?.replicas === 'number' ? amp.status.replicas : 0;
  const prevConds = (amp.status?.conditions as CapzCondition[] | undefined) ?? [];
  // An unset spec.replicas (CAPI's webhook never leaves one) counts as 0 here.
  const s = capzProvisioningState(behaviour, {
    vmssState,
    specReplicas: replicas ?? 0,
    statusReplicas: prevReplicas,
    ready: amp.status?.ready === true,
    conditions: prevConds,
  });
  // Only what CAPZ marked is set (a condition it left alone comes back as the same object), then the summary.
  let conds = prevConds as unknown as Record<string, unknown>[];
  for (const c of s.conditions) if (!prevConds.includes(c)) conds = setCond(conds, c, now);
  const summary = capzReadySummary(conds as unknown as CapzCondition[]);
  if (summary) conds = setCond(conds, summary, now);
  // updateReplicasAndProviderIDs, over the machines as they are now, as CAPZ's cache lists them.
  const listed = capzReplicasAndProviderIds(
    behaviour,
    ref,
    current(store, R.ampm, ns, [...pool.ampms, ...created]),
    capzCacheOrder(w),
  );
  const ampStatus = {
    ...amp.status,
    ready: s.ready,
    provisioningState: s.provisioningState,
    replicas: listed.replicas,
    infrastructureMachineKind: 'AzureMachinePoolMachine',
    conditions: conds,
  };
  const list = listed.providerIDList;
  if (!same(ampStatus, amp.status))
    store.update(
      R.amp,
      ns,
      String(amp.metadata?.name),
      { ...amp, status: ampStatus },
      { subresource: 'status', force: true },
    );
  if (!same(list, amp.spec?.providerIDList ?? [])) {
    const cur = store.get(R.amp, ns, String(amp.metadata?.name));
    store.update(
      R.amp,
      ns,
      String(amp.metadata?.name),
      { ...cur, spec: { ...cur.spec, providerIDList: list } },
      { force: true },
    );
  }
}

/** Records a Kubernetes Event about an object, as CAPZ's recorder does (once per occurrence key). */
function event(
  w: WorldState,
  store: ClusterStore,
  obj: KubeObject,
  reason: string,
  message: string,
  component: string,
  once: string,
): void {
  if (w.emitted.has(once)) return;
  w.emitted.add(once);
  const ns = String(obj.metadata?.namespace ?? 'default');
  const now = w.iso();
  store.create(R.event, ns, {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: {
      name: `${obj.metadata?.name}.${Date.now().toString(16)}${Math.random().toString(16).slice(2, 6)}`,
      namespace: ns,
    },
    involvedObject: {
      apiVersion: obj.apiVersion,
      kind: obj.kind,
      name: obj.metadata?.name,
      namespace: ns,
      uid: obj.metadata?.uid,
      resourceVersion: obj.metadata?.resourceVersion,
    },
    reason,
    message,
    type: 'Warning',
    count: 1,
    firstTimestamp: now,
    lastTimestamp: now,
    source: { component },
    reportingComponent: component,
    reportingInstance: `${component}-0`,
  } as KubeObject);
}
