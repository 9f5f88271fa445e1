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

/**
 * One copy of each repeated string: a providerID arrives in the pool's two lists, the AMPM, the Machine and the
 * Node, a Node's name in two nodeRefs (and namespaces, label values and states in every object), each parsed
 * into a string of its own. Bounded: past the limit the table starts afresh (strings already shared stay
 * shared). 500,000 holds the two per VM of a 100,000-VM fleet with room for churn; the table keeps strings of
 * objects that are gone until it starts afresh, at most about 60 MB.
 */
const interned = new Map<string, string>();
const INTERN_LIMIT = 500_000;

export function intern<T>(v: T): T {
  if (typeof v !== 'string') return v;
  const hit = interned.get(v);
  if (hit !== undefined) return hit as T;
  if (interned.size >= INTERN_LIMIT) interned.clear();
  interned.set(v, v);
  return v;
}

/** Whether a string is in the shared table (for tests: string identity cannot be observed in JavaScript). */
export function isInterned(v: string): boolean {
  return interned.has(v);
}

/** Which metadata a kind keeps beyond name, namespace, resourceVersion and deletionTimestamp. */
interface MetaKeep {
  labels?: readonly string[];
  uid?: boolean;
  created?: boolean;
  /** Owner references of these kinds only (all when true). */
  owners?: boolean | readonly string[];
  /** Share the name (a Node's: the AMPM's and the Machine's nodeRef hold the same string). */
  sharedName?: boolean;
}

function meta(m: KubeObject['metadata'], keep: MetaKeep = { uid: true, created: true, owners: true }): KubeObject['metadata'] {
  if (!m) return {};
  const labels = keep.labels;
  const kept = labels && m.labels ? Object.fromEntries(labels.filter((l) => m.labels?.[l] !== undefined).map((l) => [l, intern(m.labels?.[l] as string)])) : undefined;
  const owners = keep.owners === true ? m.ownerReferences : keep.owners ? m.ownerReferences?.filter((o) => (keep.owners as readonly string[]).includes(o.kind ?? '')) : undefined;
  return defined({
    name: keep.sharedName ? intern(m.name) : m.name,
    namespace: intern(m.namespace),
    uid: keep.uid ? m.uid : undefined,
    resourceVersion: m.resourceVersion,
    creationTimestamp: keep.created ? iso(m.creationTimestamp) : undefined,
    deletionTimestamp: iso(m.deletionTimestamp),
    labels: kept && Object.keys(kept).length ? kept : undefined,
    ownerReferences: owners?.length ? owners.map((o) => defined({ kind: intern(o.kind), name: o.name })) : undefined,
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
      // No conditions: the pool model reads an instance's state from `ready`, `provisioningState` and the
      // nodeRef (its conditions were most of a slimmed AMPM).
      return {
        metadata: meta(obj.metadata, { labels: [AMPM_POOL_LABEL], created: true }),
        spec: defined({ providerID: intern(spec.providerID) }),
        status: defined({
          ready: status.ready,
          provisioningState: intern(status.provisioningState),
          latestModelApplied: status.latestModelApplied,
          nodeRef: status.nodeRef ? defined({ name: intern(rec(status.nodeRef).name) }) : undefined,
        }),
      };
    case 'machine':
      return {
        metadata: meta(obj.metadata, { labels: [MACHINE_POOL_LABEL] }),
        spec: defined({ providerID: intern(spec.providerID) }),
        status: defined({ phase: intern(status.phase), nodeRef: status.nodeRef ? defined({ name: intern(rec(status.nodeRef).name) }) : undefined }),
      };
    case 'node': {
      const ready = Array.isArray(status.conditions) ? status.conditions.filter((c) => rec(c).type === 'Ready') : undefined;
      // The pool model reads a Node's providerID, its uninitialized taint and whether it is Ready.
      return {
        metadata: meta(obj.metadata, { sharedName: true }),
        spec: defined({
          providerID: intern(spec.providerID),
          taints: Array.isArray(spec.taints) ? spec.taints.map((t) => defined({ key: intern(rec(t).key), effect: intern(rec(t).effect) })) : undefined,
        }),
        status: defined({ conditions: ready?.map((c) => ({ type: 'Ready', status: intern(rec(c).status) })) }),
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
      let out = obj;
      if (obj.metadata?.managedFields) {
        const { managedFields: _dropped, ...rest } = obj.metadata;
        out = { ...obj, metadata: rest };
      }
      // A pool's providerIDList holds the same strings as its AMPMs, Machines and Nodes: share them (at 100
      // instances a pool, the MachinePool's and AzureMachinePool's lists were two more copies of every ID).
      if (Array.isArray(spec.providerIDList)) out = { ...out, spec: { ...spec, providerIDList: spec.providerIDList.map(intern) } };
      return out;
    }
  }
}
