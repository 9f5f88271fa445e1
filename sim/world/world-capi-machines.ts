// The Machines of a MachinePool in the living world, one per AzureMachinePoolMachine: created and kept by CAPI's
// MachinePool controller, their status and conditions set as its Machine controller would (capi-behaviour.ts).

import type { KubeObject } from '../../lib/unstructured';
import { nodesByProviderId, type CapiNode } from './capi-behaviour';
import { type MachineView } from './capi-status';
import { machinePoolMachineConditions, type MachineCondition } from './capi-machine-conditions';
import { current, R } from './world-objects';
import type { Pool } from './world-pool';
import type { WorldState } from './world-state';

/**
 * The pool's Machines, one per AMPM: created and kept (spec.version from the Node's kubelet) by the MachinePool
 * controller while the workload cluster answers, their status and conditions set as CAPI's Machine
 * controller would. Returns them as the v1beta2 counters read them.
 */
export function capiMachines(w: WorldState, pool: Pool, nodes: readonly CapiNode[] | null): MachineView[] {
  const { store, ns } = pool;
  const byId = nodes ? nodesByProviderId(nodes) : null;
  const at = { ms: w.now(), iso: w.iso() };
  const out: MachineView[] = [];
  for (const a of current(store, R.ampm, ns, pool.ampms)) {
    const name = String(a.metadata?.name);
    const node = byId ? (byId.get(String(a.spec?.providerID ?? '')) ?? null) : undefined;
    if (byId) capiMachineSpec(pool, a, node ?? null);
    const m = store.peekOne(R.machine, ns, name);
    if (!m) continue;
    const { conditions, status } = capiMachineStatus(m, a, node, at);
    if (status) store.update(R.machine, ns, name, { ...m, status }, { subresource: 'status', force: true });
    out.push({
      name,
      creationTimestamp: m.metadata?.creationTimestamp,
      version: typeof m.spec?.version === 'string' ? m.spec.version : undefined,
      kubeletVersion: (m.status?.nodeInfo as { kubeletVersion?: string } | undefined)?.kubeletVersion,
      conditions,
    });
  }
  return out;
}

/** createOrUpdateMachines for one AMPM: the Machine named after it, owned by the pool; spec.version the Node's kubelet. */
function capiMachineSpec(pool: Pool, a: KubeObject, node: CapiNode | null): void {
  const { store, ns } = pool;
  const name = String(a.metadata?.name);
  const mpName = String(pool.mp.metadata?.name);
  const version = node?.kubeletVersion ? { version: node.kubeletVersion } : {};
  const existing = store.peekOne(R.machine, ns, name);
  if (existing) {
    // A version once set stays when the Node goes (the field may be another manager's).
    if (node?.kubeletVersion && existing.spec?.version !== node.kubeletVersion)
      store.update(R.machine, ns, name, { ...existing, spec: { ...existing.spec, ...version } }, { force: true });
    return;
  }
  store.create(R.machine, ns, {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: {
      name,
      labels: { 'cluster.x-k8s.io/cluster-name': pool.clusterName, 'cluster.x-k8s.io/pool-name': mpName },
      finalizers: ['machine.cluster.x-k8s.io'],
      ownerReferences: [
        {
          apiVersion: 'cluster.x-k8s.io/v1beta2',
          kind: 'MachinePool',
          name: mpName,
          uid: String(pool.mp.metadata?.uid),
          controller: true,
        },
      ],
    },
    spec: {
      clusterName: pool.clusterName,
      bootstrap: { dataSecretName: `${mpName}-bootstrap` },
      infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'AzureMachinePoolMachine', name },
      providerID: a.spec?.providerID,
      ...version,
    },
  });
  const cur = store.get(R.ampm, ns, name);
  store.update(
    R.ampm,
    ns,
    name,
    {
      ...cur,
      metadata: {
        ...cur.metadata,
        ownerReferences: [
          ...(cur.metadata?.ownerReferences ?? []),
          {
            apiVersion: 'cluster.x-k8s.io/v1beta2',
            kind: 'Machine',
            name,
            uid: String(store.get(R.machine, ns, name).metadata?.uid),
            controller: true,
          },
        ],
      },
    },
    { force: true },
  );
}

/**
 * A Machine's status as the Machine controller keeps it: phase, nodeRef (from the AMPM) and v1beta2 conditions;
 * `status` is null when nothing changed (compared field by field: a pass goes over every Machine).
 */
function capiMachineStatus(
  m: KubeObject,
  a: KubeObject,
  node: CapiNode | null | undefined,
  at: { ms: number; iso: string },
): { conditions: MachineCondition[]; status: Record<string, unknown> | null } {
  const nodeRef = (a.status?.nodeRef as { name?: string } | undefined)?.name;
  const previous = (m.status?.conditions as (MachineCondition & { lastTransitionTime?: string })[] | undefined) ?? [];
  const infraReady = (
    a.status?.conditions as { type: string; status: string; reason?: string; message?: string }[] | undefined
  )?.find((c) => c.type === 'Ready');
  const next = machinePoolMachineConditions({
    deleting: Boolean(m.metadata?.deletionTimestamp),
    infraReady,
    infrastructureProvisioned: true,
    infraKind: 'AzureMachinePoolMachine',
    node,
    hadNodeRef: Boolean(m.status?.nodeRef),
    providerID: String(m.spec?.providerID ?? ''),
    previous,
    minReadySeconds: typeof m.spec?.minReadySeconds === 'number' ? m.spec.minReadySeconds : 0,
    now: at.ms,
  });
  const phase = nodeRef ? 'Running' : 'Provisioned';
  const init = m.status?.initialization as Record<string, unknown> | undefined;
  const unchanged =
    m.status?.phase === phase &&
    (!nodeRef || (m.status?.nodeRef as { name?: string } | undefined)?.name === nodeRef) &&
    init?.bootstrapDataSecretCreated === true &&
    init.infrastructureProvisioned === true &&
    previous.length === next.length &&
    next.every(
      (c, i) =>
        previous[i]?.type === c.type &&
        previous[i]?.status === c.status &&
        previous[i]?.reason === c.reason &&
        previous[i]?.message === c.message,
    );
  if (unchanged) return { conditions: next, status: null };
  const conditions = next.map((c) => {
    const prev = previous.find((p) => p.type === c.type);
    return {
      ...c,
      lastTransitionTime:
        prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : at.iso,
    };
  });
  return {
    conditions: next,
    status: {
      ...m.status,
      phase,
      ...(nodeRef ? { nodeRef: { name: nodeRef } } : {}),
      initialization: { bootstrapDataSecretCreated: true, infrastructureProvisioned: true },
      conditions,
    },
  };
}
