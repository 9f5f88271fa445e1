// One cluster's objects: a generic store and watch hub driven by the resource table, with the semantics of
// a real API server — resourceVersions from one counter, generation bumps on spec changes only, the status
// subresource, optimistic concurrency, finalizers, dry runs, and a bounded watch history (410 Gone past it).
// ~550 lines, one class: every write shares the one resourceVersion counter, the watch history and the
// validation of one cluster, as a real API server's storage does.

import { randomUUID } from 'node:crypto';
import type { KubeObject } from '../../lib/unstructured';
import { ApiError, badRequest, conflict, invalid, notFound, qualified } from './errors';
import { applyPatch, type PatchType } from './patch';
import { apiVersionOf, RESOURCES, storageVersion, type ResourceDef } from './resources';
import { scaleProblems } from './scale';
import { matchFields, matchLabels, type FieldRequirement, type LabelRequirement } from './selectors';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoredEvent {
  type: WatchEventType;
  resource: ResourceDef;
  /** In the storage version. */
  object: KubeObject;
  rv: number;
}

export interface Watcher {
  resource: ResourceDef;
  namespace: string | null;
  labels: LabelRequirement[];
  fields: FieldRequirement[];
  send: (e: StoredEvent) => void;
}

/** Validates an object in the version it was written in; returns problems (empty when valid), or null when no schema applies. */
export type Validator = (obj: KubeObject) => { field: string; message: string; unknownField?: boolean }[] | null;

export interface WriteOptions {
  dryRun?: boolean;
  /** Version the caller speaks (for conversion and validation). Defaults to the storage version. */
  version?: string;
  /** `Strict` rejects unknown fields (400); otherwise they are dropped with a warning, as a real server does. */
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
  warnings?: string[];
}

export interface ListOptions {
  namespace?: string | null;
  labels?: LabelRequirement[];
  fields?: FieldRequirement[];
  limit?: number;
  continueToken?: string | null;
}

export interface StoreOptions {
  /** How many watch events are kept for resuming watches; older resourceVersions get 410 Gone. */
  historyWindow?: number;
  validate?: Validator;
  now?: () => Date;
}

const resourceKey = (r: ResourceDef) => `${r.group}/${r.plural}`;
const objKey = (ns: string | undefined, name: string) => `${ns ?? ''}/${name}`;

function clone<T>(v: T): T {
  return structuredClone(v);
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Everything but metadata and status: what bumps `generation` when it changes. */
function specOf(o: KubeObject): string {
  const { metadata: _m, status: _s, ...rest } = o as Record<string, unknown>;
  return JSON.stringify(rest);
}

function deleteAtPath(o: unknown, path: string): void {
  const keys = path.split('.').filter(Boolean);
  let cur: unknown = o;
  for (const k of keys.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(k)];
    else if (isObj(cur)) cur = cur[k];
    else return;
  }
  const last = keys[keys.length - 1];
  if (last !== undefined && isObj(cur)) delete cur[last];
}

export class ClusterStore {
  private rv = 0;
  private readonly objects = new Map<string, Map<string, KubeObject>>();
  /** Sorted keys per resource, rebuilt lazily after an object is added or removed. */
  private readonly sortedKeys = new Map<string, string[]>();
  private history: StoredEvent[] = [];
  private readonly watchers = new Set<Watcher>();
  private readonly historyWindow: number;
  private readonly validator?: Validator;
  private readonly now: () => Date;

  constructor(opts: StoreOptions = {}) {
    this.historyWindow = opts.historyWindow ?? 1000;
    this.validator = opts.validate;
    this.now = opts.now ?? (() => new Date());
    for (const r of RESOURCES) this.objects.set(resourceKey(r), new Map());
  }

  get resourceVersion(): string {
    return String(this.rv);
  }

  /** The oldest resourceVersion a watch can still resume from. */
  get oldestResumableVersion(): number {
    const first = this.history[0];
    return first ? first.rv - 1 : this.rv;
  }

  /** Drops the watch history, so any watch resuming from an older resourceVersion gets 410 Gone. */
  compact(): void {
    this.history = [];
  }

  private bucket(r: ResourceDef): Map<string, KubeObject> {
    return this.objects.get(resourceKey(r)) as Map<string, KubeObject>;
  }

  private keysOf(r: ResourceDef): string[] {
    let keys = this.sortedKeys.get(resourceKey(r));
    if (!keys) {
      keys = [...this.bucket(r).keys()].sort();
      this.sortedKeys.set(resourceKey(r), keys);
    }
    return keys;
  }

  private setObject(r: ResourceDef, key: string, obj: KubeObject): void {
    const b = this.bucket(r);
    if (!b.has(key)) this.sortedKeys.delete(resourceKey(r));
    b.set(key, obj);
  }

  private deleteObject(r: ResourceDef, key: string): void {
    if (this.bucket(r).delete(key)) this.sortedKeys.delete(resourceKey(r));
  }

  private toVersion(r: ResourceDef, obj: KubeObject, version: string): KubeObject {
    const sv = storageVersion(r);
    if (version === sv || !r.convert) return clone(obj);
    return r.convert(obj, version);
  }

  private toStorage(r: ResourceDef, obj: KubeObject): KubeObject {
    const sv = storageVersion(r);
    const v = (obj.apiVersion ?? '').split('/').pop();
    if (v === sv || !r.convert) return obj;
    return r.convert(obj, sv);
  }

  /** Reads one object in `version`. */
  get(r: ResourceDef, namespace: string | undefined, name: string, version = storageVersion(r)): KubeObject {
    const o = this.bucket(r).get(objKey(namespace, name));
    if (!o) throw notFound(r.plural, r.group, name);
    return this.toVersion(r, o, version);
  }

  /**
   * The stored objects themselves, in the storage version, not copied: for the in-process controllers of a
   * large fleet, which only read them (every write goes through create/update/delete). A list copies each one.
   */
  peek(r: ResourceDef): KubeObject[] {
    return [...this.bucket(r).values()];
  }

  /** One stored object itself, not copied (see peek), or undefined: for readers that never change it. */
  peekOne(r: ResourceDef, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.bucket(r).get(objKey(namespace, name));
  }

  has(r: ResourceDef, namespace: string | undefined, name: string): boolean {
    return this.bucket(r).has(objKey(namespace, name));
  }

  list(
    r: ResourceDef,
    opts: ListOptions = {},
    version = storageVersion(r),
  ): { items: KubeObject[]; resourceVersion: string; continueToken?: string; remaining?: number } {
    let after = '';
    // A paginated list is one list as of its first page's resourceVersion, as the API server's is: later pages
    // report that version (a client watches from it and replays what changed meanwhile), and a token whose
    // version has left the watch history has expired (410, as after etcd compaction).
    let snapshotRv = this.rv;
    if (opts.continueToken) {
      try {
        const t = JSON.parse(Buffer.from(opts.continueToken, 'base64url').toString()) as {
          after?: unknown;
          rv?: unknown;
        };
        if (typeof t.after !== 'string' || typeof t.rv !== 'number') throw new Error('bad token');
        after = t.after;
        snapshotRv = t.rv;
      } catch {
        throw badRequest('invalid continue token');
      }
      if (snapshotRv < this.oldestResumableVersion) {
        throw new ApiError(
          410,
          'Expired',
          'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
        );
      }
    }
    const keys = this.keysOf(r);
    const matches: KubeObject[] = [];
    let lastKey = '';
    let more = 0;
    // Keys are "<namespace>/<name>", sorted: start at the namespace (or after the continue key) by binary search.
    const from = after || (opts.namespace ? `${opts.namespace}/` : '');
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((keys[mid] as string) < from || (after && keys[mid] === after)) lo = mid + 1;
      else hi = mid;
    }
    for (let idx = lo; idx < keys.length; idx++) {
      const k = keys[idx] as string;
      if (after && k <= after) continue;
      if (opts.namespace && !k.startsWith(`${opts.namespace}/`)) break;
      const o = this.bucket(r).get(k) as KubeObject;
      if (opts.namespace && o.metadata?.namespace !== opts.namespace) continue;
      if (opts.labels && !matchLabels(opts.labels, o.metadata?.labels)) continue;
      if (opts.fields && !matchFields(opts.fields, o.metadata)) continue;
      if (opts.limit && matches.length >= opts.limit) {
        more++;
        continue;
      }
      matches.push(this.toVersion(r, o, version));
      lastKey = k;
    }
    const out: { items: KubeObject[]; resourceVersion: string; continueToken?: string; remaining?: number } = {
      items: matches,
      resourceVersion: String(snapshotRv),
    };
    if (more > 0) {
      out.continueToken = Buffer.from(JSON.stringify({ after: lastKey, rv: snapshotRv })).toString('base64url');
      out.remaining = more;
    }
    return out;
  }

  /**
   * Registers a watcher; replays history after `sinceRv`, or sends ADDED for current objects when none is given.
   * Events carry storage-version objects; the server converts them to the version the client asked for.
   */
  watch(w: Watcher, sinceRv: string | null): () => void {
    const matches = (e: { resource: ResourceDef; object: KubeObject }) =>
      e.resource === w.resource &&
      (!w.namespace || e.object.metadata?.namespace === w.namespace) &&
      matchLabels(w.labels, e.object.metadata?.labels) &&
      matchFields(w.fields, e.object.metadata);
    if (sinceRv === null || sinceRv === '' || sinceRv === '0') {
      for (const o of this.bucket(w.resource).values()) {
        const e: StoredEvent = {
          type: 'ADDED',
          resource: w.resource,
          object: o,
          rv: Number(o.metadata?.resourceVersion ?? 0),
        };
        if (matches(e)) w.send(e);
      }
    } else {
      const since = Number(sinceRv);
      if (!Number.isInteger(since) || since < 0) throw badRequest(`invalid resourceVersion "${sinceRv}"`);
      if (since < this.oldestResumableVersion) {
        throw new ApiError(410, 'Expired', `too old resource version: ${since} (${this.oldestResumableVersion})`);
      }
      for (const e of this.history) if (e.rv > since && matches(e)) w.send(e);
    }
    const filtered: Watcher = {
      ...w,
      send: (e) => {
        if (matches(e)) w.send(e);
      },
    };
    this.watchers.add(filtered);
    return () => this.watchers.delete(filtered);
  }

  get watcherCount(): number {
    return this.watchers.size;
  }

  private emit(type: WatchEventType, r: ResourceDef, object: KubeObject): void {
    const e: StoredEvent = { type, resource: r, object, rv: this.rv };
    this.history.push(e);
    if (this.history.length > this.historyWindow) this.history.splice(0, this.history.length - this.historyWindow);
    for (const w of this.watchers) w.send(e);
  }

  private nextRv(): string {
    this.rv += 1;
    return String(this.rv);
  }

  private checkNamespace(r: ResourceDef, namespace: string | undefined): void {
    if (!r.namespaced) return;
    if (!namespace)
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    const nsDef = RESOURCES.find((x) => x.group === '' && x.plural === 'namespaces') as ResourceDef;
    if (!this.has(nsDef, undefined, namespace)) throw notFound('namespaces', '', namespace);
  }

  /**
   * Validates in the caller's version: the replicas at the scale paths of a kind with /scale (as a CRD's are),
   * then the schema; unknown fields are rejected (Strict) or dropped with a warning.
   */
  private validate(r: ResourceDef, obj: KubeObject, opts: WriteOptions): KubeObject {
    const scale = r.scale ? scaleProblems(obj, r.scale) : [];
    if (scale.length) throw invalid(r.kind, r.group, obj.metadata?.name ?? '', scale);
    if (!this.validator) return obj;
    const problems = this.validator(obj);
    if (!problems || problems.length === 0) return obj;
    const unknown = problems.filter((p) => p.unknownField);
    const other = problems.filter((p) => !p.unknownField);
    if (unknown.length && opts.fieldValidation === 'Strict') {
      throw badRequest(
        `strict decoding error: ${unknown.map((p) => `unknown field "${p.field.replace(/^\./, '')}"`).join(', ')}`,
      );
    }
    if (other.length) throw invalid(r.kind, r.group, obj.metadata?.name ?? '', other);
    const pruned = clone(obj);
    for (const p of unknown) deleteAtPath(pruned, p.field);
    if (opts.fieldValidation !== 'Ignore')
      for (const p of unknown) opts.warnings?.push(`unknown field "${p.field.replace(/^\./, '')}"`);
    return pruned;
  }

  private checkTypeMeta(r: ResourceDef, obj: KubeObject, version: string): void {
    if (!isObj(obj)) throw badRequest('the body of the request was not a JSON object');
    const want = apiVersionOf(r.group, version);
    if (obj.apiVersion !== undefined && obj.apiVersion !== want) {
      throw badRequest(
        `the API version in the data (${obj.apiVersion}) does not match the expected API version (${want})`,
      );
    }
    if (obj.kind !== undefined && obj.kind !== r.kind) {
      throw badRequest(`the kind in the data (${obj.kind}) does not match the expected kind (${r.kind})`);
    }
  }

  create(r: ResourceDef, namespace: string | undefined, body: KubeObject, opts: WriteOptions = {}): KubeObject {
    const version = opts.version ?? storageVersion(r);
    this.checkTypeMeta(r, body, version);
    const obj = clone(body);
    obj.apiVersion = apiVersionOf(r.group, version);
    obj.kind = r.kind;
    obj.metadata = { ...(obj.metadata ?? {}) };
    if (!obj.metadata.name && typeof obj.metadata.generateName === 'string') {
      obj.metadata.name = `${obj.metadata.generateName}${Math.random().toString(36).slice(2, 7)}`;
    }
    const name = obj.metadata.name;
    if (!name)
      throw invalid(r.kind, r.group, '', [
        { field: 'metadata.name', message: 'Required value: name or generateName is required' },
      ]);
    if (r.namespaced) {
      if (obj.metadata.namespace && namespace && obj.metadata.namespace !== namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      obj.metadata.namespace = namespace ?? obj.metadata.namespace;
    } else {
      delete obj.metadata.namespace;
    }
    this.checkNamespace(r, obj.metadata.namespace);
    if (this.has(r, obj.metadata.namespace, name)) {
      throw new ApiError(409, 'AlreadyExists', `${qualified(r.plural, r.group, name)} already exists`, {
        name,
        group: r.group,
        kind: r.plural,
      });
    }
    // Objects with a status subresource start with no status from a create, like on a real server.
    if (r.statusSubresource) delete obj.status;
    return this.commitCreate(r, this.validate(r, obj, opts), opts);
  }

  /** Stores an object as given, status included (loading a world; not reachable over the API). */
  load(r: ResourceDef, obj: KubeObject): KubeObject {
    const o = clone(obj);
    o.metadata = { ...(o.metadata ?? {}) };
    const version = (o.apiVersion ?? '').split('/').pop() ?? storageVersion(r);
    if (r.namespaced && !o.metadata.namespace) o.metadata.namespace = 'default';
    if (this.has(r, o.metadata.namespace, o.metadata.name ?? '')) {
      return this.update(
        r,
        o.metadata.namespace,
        o.metadata.name ?? '',
        { ...o, metadata: { ...o.metadata, resourceVersion: undefined } },
        { version, keepStatus: false, force: true },
      );
    }
    return this.commitCreate(r, this.validate(r, o, { version }), { version });
  }

  private commitCreate(r: ResourceDef, obj: KubeObject, opts: WriteOptions): KubeObject {
    const meta = obj.metadata as NonNullable<KubeObject['metadata']>;
    meta.uid = meta.uid ?? randomUUID();
    meta.creationTimestamp =
      meta.creationTimestamp ??
      this.now()
        .toISOString()
        .replace(/\.\d{3}Z$/, 'Z');
    meta.generation = 1;
    delete meta.deletionTimestamp;
    const stored = this.toStorage(r, obj);
    if (opts.dryRun) {
      delete (stored.metadata as Record<string, unknown>).resourceVersion;
      return this.toVersion(r, stored, opts.version ?? storageVersion(r));
    }
    (stored.metadata as Record<string, unknown>).resourceVersion = this.nextRv();
    this.setObject(r, objKey(meta.namespace, meta.name as string), stored);
    this.emit('ADDED', r, stored);
    return this.toVersion(r, stored, opts.version ?? storageVersion(r));
  }

  /**
   * Replaces an object (PUT). `subresource: 'status'` replaces only status; otherwise status is kept for
   * kinds with a status subresource. A stale metadata.resourceVersion is a 409 Conflict.
   */
  update(
    r: ResourceDef,
    namespace: string | undefined,
    name: string,
    body: KubeObject,
    opts: WriteOptions & { subresource?: 'status'; keepStatus?: boolean; force?: boolean } = {},
  ): KubeObject {
    const version = opts.version ?? storageVersion(r);
    this.checkTypeMeta(r, body, version);
    const current = this.bucket(r).get(objKey(namespace, name));
    if (!current) throw notFound(r.plural, r.group, name);
    if (body.metadata?.name !== undefined && body.metadata.name !== name) {
      throw badRequest(`the name of the object (${body.metadata.name}) does not match the name on the URL (${name})`);
    }
    const sentRv = body.metadata?.resourceVersion;
    if (!opts.force) {
      if (!sentRv) {
        throw invalid(r.kind, r.group, name, [
          { field: 'metadata.resourceVersion', message: 'Invalid value: 0x0: must be specified for an update' },
        ]);
      }
      if (sentRv !== current.metadata?.resourceVersion) throw conflict(r.plural, r.group, name);
    }
    const currentInVersion = this.toVersion(r, current, version);
    let next = clone(body);
    next.apiVersion = apiVersionOf(r.group, version);
    next.kind = r.kind;
    if (opts.subresource === 'status') {
      next = { ...currentInVersion, status: next.status };
    } else if (r.statusSubresource && opts.keepStatus !== false) {
      next = { ...next, status: currentInVersion.status };
      if (next.status === undefined) delete next.status;
    }
    // Server-owned metadata cannot be changed by the client.
    next.metadata = {
      ...(opts.subresource === 'status' ? currentInVersion.metadata : next.metadata),
      name,
      namespace: current.metadata?.namespace,
      uid: current.metadata?.uid,
      creationTimestamp: current.metadata?.creationTimestamp,
      generation: current.metadata?.generation,
      deletionTimestamp: current.metadata?.deletionTimestamp,
    };
    if (!r.namespaced) delete next.metadata.namespace;
    if (next.metadata.deletionTimestamp === undefined) delete next.metadata.deletionTimestamp;
    next = this.validate(r, next, opts);
    const stored = this.toStorage(r, next);
    const meta = stored.metadata as NonNullable<KubeObject['metadata']>;
    if (specOf(stored) !== specOf(current)) meta.generation = (current.metadata?.generation ?? 1) + 1;
    if (
      JSON.stringify({ ...stored, metadata: { ...meta, resourceVersion: undefined } }) ===
      JSON.stringify({ ...current, metadata: { ...current.metadata, resourceVersion: undefined } })
    ) {
      // A no-op write changes nothing, not even the resourceVersion, as on a real server.
      return this.toVersion(r, current, version);
    }
    if (opts.dryRun) {
      meta.resourceVersion = current.metadata?.resourceVersion;
      return this.toVersion(r, stored, version);
    }
    // Removing the last finalizer of an object being deleted completes the deletion.
    if (meta.deletionTimestamp && (meta.finalizers ?? []).length === 0) {
      meta.resourceVersion = this.nextRv();
      this.deleteObject(r, objKey(current.metadata?.namespace, name));
      this.emit('DELETED', r, stored);
      return this.toVersion(r, stored, version);
    }
    meta.resourceVersion = this.nextRv();
    this.setObject(r, objKey(current.metadata?.namespace, name), stored);
    this.emit('MODIFIED', r, stored);
    return this.toVersion(r, stored, version);
  }

  patch(
    r: ResourceDef,
    namespace: string | undefined,
    name: string,
    type: PatchType,
    patch: unknown,
    opts: WriteOptions & { subresource?: 'status' } = {},
  ): KubeObject {
    const version = opts.version ?? storageVersion(r);
    const current = this.get(r, namespace, name, version);
    const patched = applyPatch(type, current, patch);
    if (!isObj(patched)) throw badRequest('the patch produced something that is not an object');
    const next = patched as KubeObject;
    // A patch is checked against the resourceVersion only if it carries one itself.
    const patchRv = isObj(patch) && isObj(patch.metadata) ? patch.metadata.resourceVersion : undefined;
    next.metadata = {
      ...(next.metadata ?? {}),
      resourceVersion: typeof patchRv === 'string' ? patchRv : current.metadata?.resourceVersion,
    };
    return this.update(r, namespace, name, next, opts);
  }

  delete(
    r: ResourceDef,
    namespace: string | undefined,
    name: string,
    opts: WriteOptions & { preconditionRv?: string } = {},
  ): KubeObject {
    const current = this.bucket(r).get(objKey(namespace, name));
    if (!current) throw notFound(r.plural, r.group, name);
    if (opts.preconditionRv && opts.preconditionRv !== current.metadata?.resourceVersion)
      throw conflict(r.plural, r.group, name);
    const version = opts.version ?? storageVersion(r);
    if ((current.metadata?.finalizers ?? []).length > 0) {
      if (current.metadata?.deletionTimestamp) return this.toVersion(r, current, version);
      const next = clone(current);
      (next.metadata as Record<string, unknown>).deletionTimestamp = this.now()
        .toISOString()
        .replace(/\.\d{3}Z$/, 'Z');
      (next.metadata as Record<string, unknown>).deletionGracePeriodSeconds = 0;
      if (opts.dryRun) return this.toVersion(r, next, version);
      (next.metadata as Record<string, unknown>).resourceVersion = this.nextRv();
      this.setObject(r, objKey(namespace, name), next);
      this.emit('MODIFIED', r, next);
      return this.toVersion(r, next, version);
    }
    if (opts.dryRun) return this.toVersion(r, current, version);
    const gone = clone(current);
    (gone.metadata as Record<string, unknown>).resourceVersion = this.nextRv();
    this.deleteObject(r, objKey(namespace, name));
    this.emit('DELETED', r, gone);
    return this.toVersion(r, gone, version);
  }
}
