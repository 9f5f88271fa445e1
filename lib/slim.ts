// Keeps only what the pool model reads from the objects a collector holds by the hundred thousand
// (AzureMachinePoolMachines, Machines, Nodes, Events), so its caches cost bytes per object, not kilobytes.
// A slimmed object still reads as the API sends it (per-instance kinds through getters): the pool model reads
// it through the same paths.
// ~440 lines: the slim kinds share the string table and the key helpers, which apart would be exported for them
// alone.

import { machineDeletingStage, type KubeObject } from './unstructured';

export type SlimKind = 'mp' | 'amp' | 'ampm' | 'machine' | 'cluster' | 'node' | 'event' | 'ammp' | 'asomp' | 'asoap';

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

/** The shared table's size and bound, and a way to empty it (for benchmarks: how full it is, what it holds). */
export function internTable(): { size: number; limit: number; clear: () => void } {
  return { size: interned.size, limit: INTERN_LIMIT, clear: () => interned.clear() };
}

/** Takes strings out of the shared table (lib/forget: those of a deleted VM's objects). */
export function forgetInterned(...strings: (string | undefined)[]): void {
  for (const s of strings) if (s !== undefined) interned.delete(s);
}

/** Whether a string is in the shared table (for tests: string identity cannot be observed in JavaScript). */
export function isInterned(v: string): boolean {
  return interned.has(v);
}

/** An Event's metadata: what tells it apart (uid) and where it lives. */
function eventMeta(m: KubeObject['metadata']): KubeObject['metadata'] {
  if (!m) return {};
  return defined({ name: m.name, namespace: intern(m.namespace), uid: m.uid, resourceVersion: m.resourceVersion });
}

function rec(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** Labels the collector indexes by. */
export const AMPM_POOL_LABEL = 'azuremachinepool.infrastructure.cluster.x-k8s.io/machine-pool';
export const MACHINE_POOL_LABEL = 'cluster.x-k8s.io/pool-name';
/** The label AKS puts on each Node with its agent pool's name (CAPZ lists an ASO-MP's Nodes by it). */
export const AKS_AGENT_POOL_LABEL = 'kubernetes.azure.com/agentpool';

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const bool = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : undefined);

/*
 * The per-instance kinds (three objects per VM, a fleet's hundreds of thousands) are kept as one flat object
 * each: a class whose fields hold what is read and whose getters give it the API's shape (`metadata`, `spec`,
 * `status`), built when read. An API-shaped slim object was six or seven objects (metadata, labels, spec,
 * status, nodeRef…), most of its size. Getters are not own properties: `toJSON` gives the API shape.
 */

/** What the three per-instance classes share: the API shape through getters, and `toJSON` giving it. */
export abstract class SlimInstance implements KubeObject {
  [key: string]: unknown;
  abstract readonly name: string | undefined;
  abstract readonly providerID: string | undefined;
  abstract get metadata(): NonNullable<KubeObject['metadata']>;
  /** An AMPM's and a Machine's spec: the providerID (a Node adds its taints). */
  get spec(): Record<string, unknown> {
    return defined({ providerID: this.providerID });
  }

  abstract get status(): Record<string, unknown>;

  toJSON(): KubeObject {
    return { metadata: this.metadata, spec: this.spec, status: this.status };
  }
}

/**
 * What an informer keeps an object under: `namespace/name`, or the name of a cluster-scoped one (undefined without a
 * name). Joined, not concatenated: V8 makes `a + b` (13 characters or more) a cons string that stays one — 32 bytes
 * beside its flattened characters — once it is kept.
 */
function keyOf(namespace: string | undefined, name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  return namespace ? [namespace, name].join('/') : name;
}

/**
 * What an informer's cache keeps an object under (server/kube/informer): `namespace/name`, or the name of a
 * cluster-scoped one. A slimmed AMPM or Machine carries it: the cache's key is the object's own string.
 */
export function itemKey(o: KubeObject): string {
  if ((o instanceof SlimAmpm || o instanceof SlimMachine) && o.key !== undefined) return o.key;
  return keyOf(namespaceOf(o), nameOf(o) ?? '') ?? '';
}

/**
 * An AMPM's and a Machine's name within their key: the key is the one string kept of both (an informer's cache keys
 * the object by it, and the collector's indexes hold the same string), the name read as its slice. A name of its
 * own beside the key was a second string per object: ~10 MB at 100k VMs.
 */
function nameInKey(key: string | undefined, namespace: string | undefined): string | undefined {
  return key === undefined || !namespace ? key : key.slice(namespace.length + 1);
}

/**
 * A new object's key: the string of `previous` when equal — the object it replaces (a cache keeps that string as
 * its key) or an AMPM's Machine or a Machine's AMPM (of the same name: one string for the two).
 */
function sameKey(key: string | undefined, previous: KubeObject | undefined): string | undefined {
  const was = previous instanceof SlimAmpm || previous instanceof SlimMachine ? previous.key : undefined;
  return was !== undefined && was === key ? was : key;
}

/**
 * A creation time as whole seconds since the epoch when the text is what Kubernetes sends (`2026-11-29T10:00:00Z`:
 * metav1.Time has second precision) and formatting the seconds gives that text back; the text otherwise. A number
 * below 2^31 is kept inside its object by V8; the text was a 40-byte string per AMPM (~4 MB at 100k VMs).
 */
function compactTime(v: unknown): number | string | undefined {
  const s = iso(v);
  if (s === undefined) return undefined;
  const ms = Date.parse(s);
  return ms % 1000 === 0 && secondsText(ms / 1000) === s ? ms / 1000 : s;
}

/** Whole seconds since the epoch as Kubernetes writes a time. */
function secondsText(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}

/** A time kept by compactTime, as milliseconds since the epoch (null when absent or not a time). */
export function compactTimeMs(v: number | string | undefined): number | null {
  if (typeof v === 'number') return v * 1000;
  if (v === undefined) return null;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? null : ms;
}

export class SlimAmpm extends SlimInstance {
  constructor(
    /** See keyOf and nameInKey: the object's name is read from it. */
    readonly key: string | undefined,
    readonly namespace: string | undefined,
    /** creationTimestamp, see compactTime. */
    readonly created: number | string | undefined,
    readonly deleted: string | undefined,
    readonly pool: string | undefined,
    readonly providerID: string | undefined,
    readonly ready: boolean | undefined,
    readonly provisioningState: string | undefined,
    readonly latestModelApplied: boolean | undefined,
    readonly nodeRef: string | undefined,
  ) {
    super();
  }

  get name(): string | undefined {
    return nameInKey(this.key, this.namespace);
  }

  get metadata(): NonNullable<KubeObject['metadata']> {
    return defined({
      name: this.name,
      namespace: this.namespace,
      creationTimestamp: typeof this.created === 'number' ? secondsText(this.created) : this.created,
      deletionTimestamp: this.deleted,
      labels: this.pool === undefined ? undefined : { [AMPM_POOL_LABEL]: this.pool },
    });
  }

  get status(): Record<string, unknown> {
    return defined({
      ready: this.ready,
      provisioningState: this.provisioningState,
      latestModelApplied: this.latestModelApplied,
      nodeRef: this.nodeRef === undefined ? undefined : { name: this.nodeRef },
    });
  }
}

export class SlimMachine extends SlimInstance {
  constructor(
    /** See keyOf and nameInKey. */
    readonly key: string | undefined,
    readonly namespace: string | undefined,
    readonly deleted: string | undefined,
    readonly pool: string | undefined,
    readonly providerID: string | undefined,
    readonly phase: string | undefined,
    readonly nodeRef: string | undefined,
    /** Where a deleting Machine's deletion stands (see machineDeletingStage), kept only while it is deleted. */
    readonly deletingStage?: string,
  ) {
    super();
  }

  get name(): string | undefined {
    return nameInKey(this.key, this.namespace);
  }

  get metadata(): NonNullable<KubeObject['metadata']> {
    return defined({
      name: this.name,
      namespace: this.namespace,
      deletionTimestamp: this.deleted,
      labels: this.pool === undefined ? undefined : { [MACHINE_POOL_LABEL]: this.pool },
    });
  }

  get status(): Record<string, unknown> {
    return defined({
      phase: this.phase,
      nodeRef: this.nodeRef === undefined ? undefined : { name: this.nodeRef },
      v1beta2:
        this.deletingStage === undefined
          ? undefined
          : { conditions: [{ type: 'Deleting', status: 'True', reason: this.deletingStage }] },
    });
  }
}

export class SlimNode extends SlimInstance {
  constructor(
    readonly name: string | undefined,
    readonly deleted: string | undefined,
    readonly providerID: string | undefined,
    readonly taints: { key?: string; effect?: string }[] | undefined,
    /** The Ready condition's status, when the Node has one. */
    readonly ready: string | undefined,
    /** An AKS Node's agent pool (label AKS_AGENT_POOL_LABEL), the one label the pool model reads. */
    readonly agentPool?: string,
    /** An AKS Node's kubelet version (kept for AKS Nodes only: an upgrade's progress is said for AKS pools). */
    readonly kubeletVersion?: string,
  ) {
    super();
  }

  get metadata(): NonNullable<KubeObject['metadata']> {
    const labels = this.agentPool === undefined ? undefined : { [AKS_AGENT_POOL_LABEL]: this.agentPool };
    return defined({ name: this.name, deletionTimestamp: this.deleted, labels });
  }

  override get spec(): Record<string, unknown> {
    return defined({ providerID: this.providerID, taints: this.taints });
  }

  get status(): Record<string, unknown> {
    return defined({
      conditions: this.ready === undefined ? undefined : [{ type: 'Ready', status: this.ready }],
      nodeInfo: this.kubeletVersion === undefined ? undefined : { kubeletVersion: this.kubeletVersion },
    });
  }
}

/** An object's name, read straight from a slimmed instance (its `metadata` getter builds an object per read). */
export function nameOf(o: KubeObject): string | undefined {
  return o instanceof SlimInstance ? o.name : o.metadata?.name;
}

/** An object's namespace (none for a Node), read straight from a slimmed instance. */
export function namespaceOf(o: KubeObject): string | undefined {
  return o instanceof SlimAmpm || o instanceof SlimMachine
    ? o.namespace
    : o instanceof SlimNode
      ? undefined
      : o.metadata?.namespace;
}

/** An object's label, read straight from a slimmed AMPM or Machine (the only label each keeps: its pool's). */
export function labelOf(o: KubeObject, label: string): string | undefined {
  if (o instanceof SlimAmpm) return label === AMPM_POOL_LABEL ? o.pool : undefined;
  if (o instanceof SlimMachine) return label === MACHINE_POOL_LABEL ? o.pool : undefined;
  return o instanceof SlimNode ? undefined : o.metadata?.labels?.[label];
}

/** An object's spec.providerID, read straight from a slimmed instance (no getter object). */
export function providerIdOf(o: KubeObject): unknown {
  return o instanceof SlimInstance ? o.providerID : o.spec?.providerID;
}

/** Whether two slimmed instances say the same (an update the model cannot see: only what slimming drops changed). */
export function sameContent(a: unknown, b: unknown): boolean {
  if (!(a instanceof SlimInstance) || a.constructor !== (b as object | null)?.constructor) return false;
  const x = a as unknown as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  for (const k of Object.keys(x)) {
    if (k === 'taints') {
      if (JSON.stringify(x[k]) !== JSON.stringify(y[k])) return false;
    } else if (x[k] !== y[k]) return false;
  }
  return true;
}

/**
 * A new providerIDList's IDs as shared strings: each taken from the list it replaces where it stands there at its
 * place, give or take the shift so far (an instance added or removed moves every ID after it by one), and from the
 * shared table otherwise. Comparing a new ID with the one before it at its place costs less than hashing the new
 * 150-character string for the table, which every ID after an addition or removal would otherwise need.
 */
function sharedIds(list: readonly unknown[], was: readonly unknown[]): unknown[] {
  const out: unknown[] = [];
  let shift = 0;
  for (let i = 0; i < list.length; i++) {
    const id = list[i];
    const j = i + shift;
    if (id === was[j]) out.push(was[j]);
    else if (id === was[j + 1]) {
      out.push(was[j + 1]);
      shift++;
    } else if (j > 0 && id === was[j - 1]) {
      out.push(was[j - 1]);
      shift--;
    } else out.push(intern(id));
  }
  return out;
}

/**
 * The parts of an object the pool model and the collector's indexes read. MachinePools, AzureMachinePools
 * and Clusters (one per pool) are kept whole but for `managedFields` (and a MachinePool's nodeRefs); the
 * per-instance kinds are cut down. `previous`: the slimmed object it replaces, whose strings it may share (for an
 * AMPM or a Machine, also the other of the two under the same key: see sameKey).
 */
export function slim(kind: SlimKind, obj: KubeObject, previous?: KubeObject): KubeObject {
  const spec = rec(obj.spec);
  const status = rec(obj.status);
  switch (kind) {
    case 'ampm': {
      // No conditions: the pool model reads an instance's state from `ready`, `provisioningState` and the
      // nodeRef (its conditions were most of a slimmed AMPM).
      const m = obj.metadata ?? {};
      const ns = intern(m.namespace);
      return new SlimAmpm(
        sameKey(keyOf(ns, m.name), previous),
        ns,
        compactTime(m.creationTimestamp),
        iso(m.deletionTimestamp),
        intern(m.labels?.[AMPM_POOL_LABEL]),
        intern(str(spec.providerID)),
        bool(status.ready),
        intern(str(status.provisioningState)),
        bool(status.latestModelApplied),
        intern(str(rec(status.nodeRef).name)),
      );
    }
    case 'machine': {
      const m = obj.metadata ?? {};
      const ns = intern(m.namespace);
      return new SlimMachine(
        sameKey(keyOf(ns, m.name), previous),
        ns,
        iso(m.deletionTimestamp),
        intern(m.labels?.[MACHINE_POOL_LABEL]),
        intern(str(spec.providerID)),
        intern(str(status.phase)),
        intern(str(rec(status.nodeRef).name)),
        m.deletionTimestamp ? intern(machineDeletingStage(obj) ?? undefined) : undefined,
      );
    }
    case 'node': {
      // The pool model reads a Node's providerID, its uninitialized taint, whether it is Ready, its AKS pool and (of
      // an AKS Node) its kubelet version.
      const m = obj.metadata ?? {};
      const ready = Array.isArray(status.conditions)
        ? status.conditions.find((c) => rec(c).type === 'Ready')
        : undefined;
      const taints = Array.isArray(spec.taints)
        ? spec.taints.map((t) => defined({ key: intern(str(rec(t).key)), effect: intern(str(rec(t).effect)) }))
        : undefined;
      return new SlimNode(
        intern(m.name),
        iso(m.deletionTimestamp),
        intern(str(spec.providerID)),
        taints,
        ready === undefined ? undefined : intern(str(rec(ready).status)),
        intern(m.labels?.[AKS_AGENT_POOL_LABEL]),
        m.labels?.[AKS_AGENT_POOL_LABEL] ? intern(str(rec(status.nodeInfo).kubeletVersion)) : undefined,
      );
    }
    case 'event': {
      const e = obj as Record<string, unknown>;
      const io = rec(e.involvedObject);
      return defined({
        metadata: eventMeta(obj.metadata),
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
      // An update's list is mostly the one before: an ID equal to the one at its place there takes that (shared)
      // copy without a lookup in the table (a hundred lookups a list, at every update of the pool). A list equal
      // to the one before is that list itself: what is worked out once per list (lib/pool-model's check, the
      // collector's lookups of its IDs, the list diff) is not worked out again for a status update (at 100k VMs,
      // about half of the MachinePools' and AzureMachinePools' ~90 updates a second leave their lists as they were).
      const list = spec.providerIDList;
      if (Array.isArray(list)) {
        const before = previous?.spec?.providerIDList;
        const was: unknown[] = Array.isArray(before) ? before : [];
        const same = was.length === list.length && list.every((id: unknown, i: number) => id === was[i]);
        out = { ...out, spec: { ...spec, providerIDList: same ? was : sharedIds(list, was) } };
      }
      // A MachinePool's status.nodeRefs (an object per Node, most of a slimmed MachinePool after its list) is
      // read by nothing, and a new copy came with every status update.
      if (kind === 'mp' && Array.isArray(status.nodeRefs)) {
        const { nodeRefs: _dropped, ...rest } = status;
        out = { ...out, status: rest };
      }
      return out;
    }
  }
}
