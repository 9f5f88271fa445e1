// The Kubernetes kinds the living world's controllers read and write, and the small helpers they share for
// stored objects: comparing, setting a condition, re-reading a list as stored now, deleting despite finalizers.

import type { KubeObject } from '../../lib/unstructured';
import { findByKind, type ResourceDef } from '../kube/resources';
import type { ClusterStore } from '../kube/store';

export const R = {
  mp: findByKind('cluster.x-k8s.io/v1beta2', 'MachinePool') as ResourceDef,
  machine: findByKind('cluster.x-k8s.io/v1beta2', 'Machine') as ResourceDef,
  cluster: findByKind('cluster.x-k8s.io/v1beta2', 'Cluster') as ResourceDef,
  amp: findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureMachinePool') as ResourceDef,
  ammp: findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureManagedMachinePool') as ResourceDef,
  asomp: findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureASOManagedMachinePool') as ResourceDef,
  asoap: findByKind('containerservice.azure.com/v1api20250801', 'ManagedClustersAgentPool') as ResourceDef,
  ampm: findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureMachinePoolMachine') as ResourceDef,
  node: findByKind('v1', 'Node') as ResourceDef,
  event: findByKind('v1', 'Event') as ResourceDef,
};

export const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export function setCond(
  conds: Record<string, unknown>[],
  c: { type: string; status: string; reason?: string; severity?: string },
  now: string,
): Record<string, unknown>[] {
  const prev = conds.find((x) => x.type === c.type);
  const keepTime = prev && prev.status === c.status && prev.reason === c.reason;
  const next: Record<string, unknown> = {
    type: c.type,
    status: c.status,
    lastTransitionTime: keepTime ? prev.lastTransitionTime : now,
  };
  if (c.reason) next.reason = c.reason;
  if (c.status === 'False' && c.severity) next.severity = c.severity;
  return [...conds.filter((x) => x.type !== c.type), next].sort((a, b) => String(a.type).localeCompare(String(b.type)));
}

/** These objects as stored now (not copies: the world only reads them), those deleted meanwhile left out. */
export function current(store: ClusterStore, r: ResourceDef, ns: string, objs: readonly KubeObject[]): KubeObject[] {
  const out: KubeObject[] = [];
  for (const o of objs) {
    const now = store.peekOne(r, ns, String(o.metadata?.name));
    if (now) out.push(now);
  }
  return out;
}

/** Deletes an object at once: its finalizers are cleared first. */
export function remove(store: ClusterStore, r: ResourceDef, ns: string | undefined, name: string): void {
  const o = store.get(r, ns, name);
  if ((o.metadata?.finalizers ?? []).length)
    store.update(r, ns, name, { ...o, metadata: { ...o.metadata, finalizers: [] } }, { force: true });
  if (store.has(r, ns, name)) store.delete(r, ns, name);
}
