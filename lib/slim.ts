// Keeps only what the pool model reads from the objects a collector holds by the hundred thousand
// (AzureMachinePoolMachines, Machines, Nodes, Events), so its caches cost bytes per object, not kilobytes.
// A slimmed object is still shaped as the API sends it: the pool model reads it through the same paths.

import type { KubeObject } from './unstructured';

export type SlimKind = 'mp' | 'amp' | 'ampm' | 'machine' | 'cluster' | 'node' | 'event';

/** Typed client lists hand back Dates; the model reads RFC 3339 strings, as the API sends them. */
function iso(v: unknown): string | undefined {
  if (v instanceof Date) return v.toISOString();
  return typeof v === 'string' ? v : undefined;
}

/**
 * A copy without the undefined entries. Built key by key rather than by deleting from the literal: `delete`
 * turns a V8 object into a dictionary, which made a slimmed object larger than the original one.
 */
function defined<T extends Record<string, unknown>>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const k in o) if (o[k] !== undefined) out[k] = o[k];
  return out as T;
}

function meta(m: KubeObject['metadata'], labels?: readonly string[]): KubeObject['metadata'] {
  if (!m) return {};
  const kept = labels && m.labels ? Object.fromEntries(labels.filter((l) => m.labels?.[l] !== undefined).map((l) => [l, m.labels?.[l] as string])) : undefined;
  return defined({
    name: m.name,
    namespace: m.namespace,
    uid: m.uid,
    resourceVersion: m.resourceVersion,
    creationTimestamp: iso(m.creationTimestamp),
    deletionTimestamp: iso(m.deletionTimestamp),
    labels: kept && Object.keys(kept).length ? kept : undefined,
    ownerReferences: m.ownerReferences?.map((o) => defined({ kind: o.kind, name: o.name })),
  });
}

function rec(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function conditions(v: unknown): Record<string, unknown>[] | undefined {
  if (!Array.isArray(v)) return undefined;
  return v.map((c) => {
    const r = rec(c);
    return defined({ type: r.type, status: r.status, reason: r.reason, message: r.message, severity: r.severity, lastTransitionTime: iso(r.lastTransitionTime) });
  });
}

/** Labels the collector indexes by. */
export const AMPM_POOL_LABEL = 'azuremachinepool.infrastructure.cluster.x-k8s.io/machine-pool';
export const MACHINE_POOL_LABEL = 'cluster.x-k8s.io/pool-name';

/**
 * The parts of an object the pool model and the collector's indexes read. MachinePools, AzureMachinePools
 * and Clusters (one per pool) are kept whole but for `managedFields`; the per-instance kinds are cut down.
 */
export function slim(kind: SlimKind, obj: KubeObject): KubeObject {
  const spec = rec(obj.spec);
  const status = rec(obj.status);
  switch (kind) {
    case 'ampm':
      return {
        metadata: meta(obj.metadata, [AMPM_POOL_LABEL]),
        spec: defined({ providerID: spec.providerID, instanceID: spec.instanceID }),
        status: defined({
          ready: status.ready,
          provisioningState: status.provisioningState,
          latestModelApplied: status.latestModelApplied,
          nodeRef: status.nodeRef ? defined({ name: rec(status.nodeRef).name }) : undefined,
          conditions: conditions(status.conditions),
        }),
      };
    case 'machine':
      return {
        metadata: meta(obj.metadata, [MACHINE_POOL_LABEL]),
        spec: defined({ providerID: spec.providerID }),
        status: defined({ phase: status.phase, nodeRef: status.nodeRef ? defined({ name: rec(status.nodeRef).name }) : undefined }),
      };
    case 'node': {
      const ready = Array.isArray(status.conditions) ? status.conditions.filter((c) => rec(c).type === 'Ready') : undefined;
      return {
        metadata: meta(obj.metadata),
        spec: defined({
          providerID: spec.providerID,
          taints: Array.isArray(spec.taints) ? spec.taints.map((t) => defined({ key: rec(t).key, effect: rec(t).effect })) : undefined,
        }),
        status: defined({ conditions: ready && conditions(ready) }),
      };
    }
    case 'event': {
      const e = obj as Record<string, unknown>;
      const io = rec(e.involvedObject);
      return defined({
        metadata: meta(obj.metadata),
        involvedObject: defined({ kind: io.kind, name: io.name }),
        reason: e.reason,
        message: e.message,
        type: e.type,
        count: e.count,
        lastTimestamp: iso(e.lastTimestamp),
        eventTime: iso(e.eventTime),
        firstTimestamp: iso(e.firstTimestamp),
      }) as KubeObject;
    }
    default: {
      if (!obj.metadata?.managedFields) return obj;
      const { managedFields: _dropped, ...rest } = obj.metadata;
      return { ...obj, metadata: rest };
    }
  }
}
