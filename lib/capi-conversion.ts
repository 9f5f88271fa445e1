// Conversion of CAPI objects (Cluster, MachinePool, Machine) between cluster.x-k8s.io v1beta2 (storage
// since CAPI v1.11) and v1beta1, per the migration guide's field map
// (docs/domain.md, "The v1beta1 and v1beta2 field map"). One table of field moves per kind drives both
// directions; fields it does not know are carried over unchanged.

import type { KubeObject } from './unstructured';

type Obj = Record<string, unknown>;

const GROUP = 'cluster.x-k8s.io';
export type CapiVersion = 'v1beta1' | 'v1beta2';

/** Which version to write into a v1beta1 `apiVersion` for a referenced group (CRD contract lookup). */
export type RefVersionResolver = (apiGroup: string, kind: string) => string;

const defaultRefVersion: RefVersionResolver = (apiGroup) =>
  apiGroup === 'infrastructure.cluster.x-k8s.io' ? 'v1beta1' : 'v1beta2';

interface KindRules {
  /** [v1beta1 path, v1beta2 path]: the same value at two places. */
  moves: [string, string][];
  /** Object references: `{apiVersion, kind, name, namespace}` in v1beta1, `{apiGroup, kind, name}` in v1beta2. */
  refs: string[];
  /** Durations: a Go duration string in v1beta1, whole seconds in v1beta2. */
  durations?: [string, string][];
  /** Kind-specific shape changes. */
  toV1beta2?: (o: Obj) => void;
  toV1beta1?: (o: Obj) => void;
}

const STATUS_COMMON: [string, string][] = [
  ['status.conditions', 'status.deprecated.v1beta1.conditions'],
  ['status.v1beta2.conditions', 'status.conditions'],
  ['status.failureReason', 'status.deprecated.v1beta1.failureReason'],
  ['status.failureMessage', 'status.deprecated.v1beta1.failureMessage'],
];

const RULES: Record<string, KindRules> = {
  MachinePool: {
    moves: [
      ...STATUS_COMMON,
      ['status.bootstrapReady', 'status.initialization.bootstrapDataSecretCreated'],
      ['status.infrastructureReady', 'status.initialization.infrastructureProvisioned'],
      ['status.readyReplicas', 'status.deprecated.v1beta1.readyReplicas'],
      ['status.availableReplicas', 'status.deprecated.v1beta1.availableReplicas'],
      ['status.unavailableReplicas', 'status.deprecated.v1beta1.unavailableReplicas'],
      ['status.v1beta2.readyReplicas', 'status.readyReplicas'],
      ['status.v1beta2.availableReplicas', 'status.availableReplicas'],
      ['status.v1beta2.upToDateReplicas', 'status.upToDateReplicas'],
      ['spec.minReadySeconds', 'spec.template.spec.minReadySeconds'],
    ],
    refs: ['spec.template.spec.infrastructureRef', 'spec.template.spec.bootstrap.configRef'],
    durations: [
      ['spec.template.spec.nodeDrainTimeout', 'spec.template.spec.deletion.nodeDrainTimeoutSeconds'],
      ['spec.template.spec.nodeVolumeDetachTimeout', 'spec.template.spec.deletion.nodeVolumeDetachTimeoutSeconds'],
      ['spec.template.spec.nodeDeletionTimeout', 'spec.template.spec.deletion.nodeDeletionTimeoutSeconds'],
    ],
  },
  Machine: {
    moves: [
      ...STATUS_COMMON,
      ['status.bootstrapReady', 'status.initialization.bootstrapDataSecretCreated'],
      ['status.infrastructureReady', 'status.initialization.infrastructureProvisioned'],
    ],
    refs: ['spec.infrastructureRef', 'spec.bootstrap.configRef'],
    durations: [
      ['spec.nodeDrainTimeout', 'spec.deletion.nodeDrainTimeoutSeconds'],
      ['spec.nodeVolumeDetachTimeout', 'spec.deletion.nodeVolumeDetachTimeoutSeconds'],
      ['spec.nodeDeletionTimeout', 'spec.deletion.nodeDeletionTimeoutSeconds'],
    ],
    // v1beta2 nodeRef is `{name}`; v1beta1 is a full ObjectReference.
    toV1beta2: (o) => {
      const ref = getPath(o, 'status.nodeRef');
      if (isObj(ref)) setPath(o, 'status.nodeRef', { name: ref.name });
    },
    toV1beta1: (o) => {
      const ref = getPath(o, 'status.nodeRef');
      if (isObj(ref)) setPath(o, 'status.nodeRef', { apiVersion: 'v1', kind: 'Node', ...ref });
    },
  },
  Cluster: {
    moves: [
      ...STATUS_COMMON,
      ['status.infrastructureReady', 'status.initialization.infrastructureProvisioned'],
      ['status.controlPlaneReady', 'status.initialization.controlPlaneInitialized'],
      ['status.v1beta2.controlPlane', 'status.controlPlane'],
      ['status.v1beta2.workers', 'status.workers'],
    ],
    refs: ['spec.infrastructureRef', 'spec.controlPlaneRef'],
    // failureDomains: a map keyed by name in v1beta1, a list of {name, …} in v1beta2.
    toV1beta2: (o) => {
      const fd = getPath(o, 'status.failureDomains');
      if (isObj(fd))
        setPath(
          o,
          'status.failureDomains',
          Object.entries(fd).map(([name, v]) => ({ name, ...(isObj(v) ? v : {}) })),
        );
    },
    toV1beta1: (o) => {
      const fd = getPath(o, 'status.failureDomains');
      if (Array.isArray(fd)) {
        setPath(
          o,
          'status.failureDomains',
          Object.fromEntries(fd.filter(isObj).map(({ name, ...rest }) => [String(name), rest])),
        );
      }
    },
  },
};

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function getPath(o: Obj, path: string): unknown {
  let cur: unknown = o;
  for (const k of path.split('.')) {
    if (!isObj(cur)) return undefined;
    cur = cur[k];
  }
  return cur;
}

/** Removes the value at `path` and returns it, dropping parent objects the removal leaves empty. */
function takePath(o: Obj, path: string): unknown {
  const keys = path.split('.');
  const parents: Obj[] = [];
  let cur: unknown = o;
  for (const k of keys.slice(0, -1)) {
    if (!isObj(cur)) return undefined;
    parents.push(cur);
    cur = cur[k];
  }
  if (!isObj(cur)) return undefined;
  const last = keys[keys.length - 1] as string;
  const v = cur[last];
  delete cur[last];
  // Prune containers emptied by the move (e.g. status.v1beta2 after its fields left).
  let child = cur;
  for (let i = parents.length - 1; i >= 0; i--) {
    const key = keys[i] as string;
    if (Object.keys(child).length === 0 && i >= 1) delete (parents[i] as Obj)[key];
    else break;
    child = parents[i] as Obj;
  }
  return v;
}

function setPath(o: Obj, path: string, value: unknown): void {
  const keys = path.split('.');
  let cur = o;
  for (const k of keys.slice(0, -1)) {
    if (!isObj(cur[k])) cur[k] = {};
    cur = cur[k] as Obj;
  }
  cur[keys[keys.length - 1] as string] = value;
}

function refToV1beta1(ref: unknown, namespace: string | undefined, resolve: RefVersionResolver): unknown {
  if (!isObj(ref) || typeof ref.apiGroup !== 'string') return ref;
  const { apiGroup, ...rest } = ref;
  const out: Obj = { apiVersion: `${apiGroup}/${resolve(apiGroup, String(rest.kind ?? ''))}`, ...rest };
  if (namespace !== undefined) out.namespace = namespace;
  return out;
}

function refToV1beta2(ref: unknown): unknown {
  if (!isObj(ref) || typeof ref.apiVersion !== 'string') return ref;
  const { apiVersion, namespace: _ns, uid: _uid, resourceVersion: _rv, fieldPath: _fp, ...rest } = ref;
  return { apiGroup: apiVersion.includes('/') ? apiVersion.split('/')[0] : '', ...rest };
}

/** "1h2m3.5s" → 3723 (whole seconds); null when it is not a Go duration. */
function parseGoDuration(s: string): number | null {
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g;
  const unit: Record<string, number> = { ns: 1e-9, us: 1e-6, µs: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };
  let total = 0;
  let consumed = 0;
  for (const m of s.matchAll(re)) {
    total += Number(m[1]) * (unit[m[2] as string] as number);
    consumed += m[0].length;
  }
  return consumed === s.length && s.length > 0 ? Math.floor(total) : s === '0' ? 0 : null;
}

/** Converts a Cluster, MachinePool or Machine to `to`; other kinds and same-version input come back cloned. */
export function convertCapiObject(
  obj: KubeObject,
  to: CapiVersion,
  resolve: RefVersionResolver = defaultRefVersion,
): KubeObject {
  const out = structuredClone(obj) as KubeObject & Obj;
  const rules = RULES[obj.kind ?? ''];
  const from =
    obj.apiVersion === `${GROUP}/v1beta1` ? 'v1beta1' : obj.apiVersion === `${GROUP}/v1beta2` ? 'v1beta2' : null;
  if (!rules || !from || from === to) return out;
  out.apiVersion = `${GROUP}/${to}`;
  const toB2 = to === 'v1beta2';
  // Take every source value first, then write: moves may swap paths (status.conditions both ways).
  const taken = rules.moves.map(([b1, b2]) => [toB2 ? b2 : b1, takePath(out, toB2 ? b1 : b2)] as const);
  const durations = (rules.durations ?? []).map(([b1, b2]) => [toB2 ? b2 : b1, takePath(out, toB2 ? b1 : b2)] as const);
  for (const [dst, v] of taken) if (v !== undefined) setPath(out, dst, v);
  for (const [dst, v] of durations) {
    if (v === undefined) continue;
    if (toB2) setPath(out, dst, typeof v === 'string' ? (parseGoDuration(v) ?? v) : v);
    else setPath(out, dst, typeof v === 'number' ? `${v}s` : v);
  }
  const ns = obj.metadata?.namespace;
  for (const p of rules.refs) {
    const ref = getPath(out, p);
    if (ref !== undefined) setPath(out, p, toB2 ? refToV1beta2(ref) : refToV1beta1(ref, ns, resolve));
  }
  (toB2 ? rules.toV1beta2 : rules.toV1beta1)?.(out);
  return out;
}

export function machinePoolToV1beta1(mp: KubeObject, resolve: RefVersionResolver = defaultRefVersion): KubeObject {
  return convertCapiObject(mp, 'v1beta1', resolve);
}

export function machinePoolToV1beta2(mp: KubeObject): KubeObject {
  return convertCapiObject(mp, 'v1beta2');
}
