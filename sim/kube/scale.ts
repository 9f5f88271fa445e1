// The /scale subresource of a custom resource, as the API server serves it for a CRD with `subresources.scale`:
// an autoscaling/v1 Scale read from the paths the CRD declares, and a written Scale's replicas put back at
// specReplicasPath of the object (its resourceVersion, when given, is the write's precondition).

import type { KubeObject } from '../../lib/unstructured';
import { badRequest } from './errors';

/** A CRD's `subresources.scale`: JSON paths such as `.spec.replicas`. */
export interface ScalePaths {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface Scale {
  apiVersion: 'autoscaling/v1';
  kind: 'Scale';
  metadata: Record<string, unknown>;
  spec: { replicas?: number };
  status: { replicas: number; selector?: string };
}

const MAX_INT32 = 2 ** 31 - 1;
/** What the API server puts in a Scale read for writing when the object has no replicas yet (Go's smallest int32). */
const UNSET_REPLICAS = -(2 ** 31);

const keysOf = (path: string) => path.replace(/^\./, '').split('.');

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The value at a `.a.b` path, or undefined when any step is missing. */
function valueAt(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const k of keysOf(path)) {
    if (!isObj(cur)) return undefined;
    cur = cur[k];
  }
  return cur;
}

function setValueAt(obj: Record<string, unknown>, path: string, value: unknown): void {
  const keys = keysOf(path);
  let cur = obj;
  for (const k of keys.slice(0, -1)) {
    if (!isObj(cur[k])) cur[k] = {};
    cur = cur[k] as Record<string, unknown>;
  }
  cur[keys[keys.length - 1] as string] = value;
}

/** An integer at `path` (0 when absent), as apimachinery's NestedInt64 reads it; anything else is a 400. */
function intAt(obj: KubeObject, path: string): number | undefined {
  const v = valueAt(obj, path);
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v))
    throw badRequest(`${path} accessor error: ${JSON.stringify(v)} is of the type ${typeof v}, expected int64`);
  return v;
}

/** The Scale of an object; `forWrite` marks absent spec replicas so a write that sets none can be refused. */
export function scaleOf(obj: KubeObject, paths: ScalePaths, forWrite = false): Scale {
  const m = obj.metadata ?? {};
  const specReplicas = intAt(obj, paths.specReplicasPath) ?? (forWrite ? UNSET_REPLICAS : 0);
  const selector = paths.labelSelectorPath ? valueAt(obj, paths.labelSelectorPath) : undefined;
  return {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata: {
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
    },
    // int32 with omitempty in Go: 0 is not printed.
    spec: specReplicas === 0 ? {} : { replicas: specReplicas },
    status: {
      replicas: intAt(obj, paths.statusReplicasPath) ?? 0,
      ...(typeof selector === 'string' && selector ? { selector } : {}),
    },
  };
}

/**
 * The object with a written Scale applied: its spec replicas at specReplicasPath and, when the Scale carries a
 * resourceVersion, that as the precondition (a stale one is then a 409 from the store, as for the object itself).
 */
export function applyScale(current: KubeObject, written: unknown, paths: ScalePaths, name: string): KubeObject {
  if (!isObj(written)) throw badRequest('the body of the request was not a JSON object');
  if (written.apiVersion !== undefined && written.apiVersion !== 'autoscaling/v1') {
    throw badRequest(
      `the API version in the data (${String(written.apiVersion)}) does not match the expected API version (autoscaling/v1)`,
    );
  }
  if (written.kind !== undefined && written.kind !== 'Scale')
    throw badRequest(`the kind in the data (${String(written.kind)}) does not match the expected kind (Scale)`);
  const meta = isObj(written.metadata) ? written.metadata : {};
  if (meta.name !== undefined && meta.name !== name)
    throw badRequest(`the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`);
  const replicas = isObj(written.spec) ? written.spec.replicas : undefined;
  if (
    replicas !== undefined &&
    (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < UNSET_REPLICAS || replicas > MAX_INT32)
  ) {
    throw badRequest(
      `the request body could not be decoded: spec.replicas must be an int32, got ${JSON.stringify(replicas)}`,
    );
  }
  if (replicas === UNSET_REPLICAS)
    throw badRequest(`the spec replicas field "${paths.specReplicasPath}" cannot be empty`);
  const next = structuredClone(current) as KubeObject & Record<string, unknown>;
  // A Scale without spec.replicas decodes to 0 in Go, as the API server reads it.
  setValueAt(next, paths.specReplicasPath, replicas ?? 0);
  const rv =
    typeof meta.resourceVersion === 'string' && meta.resourceVersion
      ? meta.resourceVersion
      : current.metadata?.resourceVersion;
  next.metadata = { ...next.metadata, resourceVersion: rv };
  return next;
}

/** What the API server's CRD validation says about the scale paths of an object (negative or too many replicas). */
export function scaleProblems(obj: KubeObject, paths: ScalePaths): { field: string; message: string }[] {
  const out: { field: string; message: string }[] = [];
  for (const path of [paths.specReplicasPath, paths.statusReplicasPath]) {
    const v = valueAt(obj, path);
    if (typeof v !== 'number') continue;
    if (v < 0) out.push({ field: path, message: `Invalid value: ${v}: should be a non-negative integer` });
    else if (v > MAX_INT32)
      out.push({ field: path, message: `Invalid value: ${v}: should be less than or equal to ${MAX_INT32}` });
  }
  return out;
}
