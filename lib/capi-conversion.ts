// MachinePool conversion between cluster.x-k8s.io v1beta2 (storage since CAPI v1.11) and v1beta1, per the
// field map in domain.md §1.9. Used to produce the same state in both versions for tests, and by the
// simulated API server to serve either version. Fields it does not know are carried over unchanged.

import type { KubeObject } from './unstructured';

type Obj = Record<string, unknown>;

const GROUP = 'cluster.x-k8s.io';

/** Which version to write into a v1beta1 `apiVersion` for a referenced group (CRD contract lookup). */
export type RefVersionResolver = (apiGroup: string, kind: string) => string;

export const defaultRefVersion: RefVersionResolver = (apiGroup) =>
  apiGroup === 'infrastructure.cluster.x-k8s.io' ? 'v1beta1' : 'v1beta2';

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function clone<T>(v: T): T {
  return structuredClone(v);
}

/** Drops keys whose value is undefined, and empty objects left behind by moves (status only). */
function prune(o: Obj): Obj {
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined) delete o[k];
    else if (isObj(v)) {
      prune(v);
      if (Object.keys(v).length === 0) delete o[k];
    }
  }
  return o;
}

function refToV1beta1(ref: unknown, namespace: string | undefined, resolve: RefVersionResolver): unknown {
  if (!isObj(ref)) return ref;
  const { apiGroup, ...rest } = ref;
  if (typeof apiGroup !== 'string') return ref;
  const out: Obj = { apiVersion: `${apiGroup}/${resolve(apiGroup, String(rest.kind ?? ''))}`, ...rest };
  if (namespace !== undefined) out.namespace = namespace;
  return out;
}

function refToV1beta2(ref: unknown): unknown {
  if (!isObj(ref)) return ref;
  const { apiVersion, namespace: _ns, uid: _uid, resourceVersion: _rv, fieldPath: _fp, ...rest } = ref;
  if (typeof apiVersion !== 'string') return ref;
  return { apiGroup: apiVersion.includes('/') ? apiVersion.split('/')[0] : '', ...rest };
}

export function machinePoolToV1beta1(mp: KubeObject, resolve: RefVersionResolver = defaultRefVersion): KubeObject {
  const out = clone(mp) as KubeObject & Obj;
  if (mp.apiVersion === `${GROUP}/v1beta1`) return out;
  out.apiVersion = `${GROUP}/v1beta1`;
  const ns = mp.metadata?.namespace;
  const spec = (out.spec ?? {}) as Obj;
  const tspec = isObj(spec.template) && isObj(spec.template.spec) ? spec.template.spec : null;
  if (tspec) {
    if (tspec.minReadySeconds !== undefined) spec.minReadySeconds = tspec.minReadySeconds;
    delete tspec.minReadySeconds;
    tspec.infrastructureRef = refToV1beta1(tspec.infrastructureRef, ns, resolve);
    if (isObj(tspec.bootstrap)) tspec.bootstrap.configRef = refToV1beta1(tspec.bootstrap.configRef, ns, resolve);
  }
  const st = out.status as Obj | undefined;
  if (st) {
    const init = isObj(st.initialization) ? st.initialization : {};
    const dep = isObj(st.deprecated) && isObj(st.deprecated.v1beta1) ? st.deprecated.v1beta1 : {};
    const v1beta2 = prune({
      conditions: st.conditions,
      readyReplicas: st.readyReplicas,
      availableReplicas: st.availableReplicas,
      upToDateReplicas: st.upToDateReplicas,
    });
    const { initialization: _i, deprecated: _d, conditions: _c, readyReplicas: _r, availableReplicas: _a, upToDateReplicas: _u, ...rest } = st;
    out.status = prune({
      ...rest,
      bootstrapReady: init.bootstrapDataSecretCreated,
      infrastructureReady: init.infrastructureProvisioned,
      readyReplicas: dep.readyReplicas,
      availableReplicas: dep.availableReplicas,
      unavailableReplicas: dep.unavailableReplicas,
      conditions: dep.conditions,
      failureReason: dep.failureReason,
      failureMessage: dep.failureMessage,
      v1beta2: Object.keys(v1beta2).length ? v1beta2 : undefined,
    });
  }
  return out;
}

export function machinePoolToV1beta2(mp: KubeObject): KubeObject {
  const out = clone(mp) as KubeObject & Obj;
  if (mp.apiVersion === `${GROUP}/v1beta2`) return out;
  out.apiVersion = `${GROUP}/v1beta2`;
  const spec = (out.spec ?? {}) as Obj;
  const tspec = isObj(spec.template) && isObj(spec.template.spec) ? spec.template.spec : null;
  if (tspec) {
    if (spec.minReadySeconds !== undefined) tspec.minReadySeconds = spec.minReadySeconds;
    tspec.infrastructureRef = refToV1beta2(tspec.infrastructureRef);
    if (isObj(tspec.bootstrap)) tspec.bootstrap.configRef = refToV1beta2(tspec.bootstrap.configRef);
  }
  delete spec.minReadySeconds;
  const st = out.status as Obj | undefined;
  if (st) {
    const v1beta2 = isObj(st.v1beta2) ? st.v1beta2 : {};
    const {
      bootstrapReady, infrastructureReady, readyReplicas, availableReplicas, unavailableReplicas,
      conditions, failureReason, failureMessage, v1beta2: _v, ...rest
    } = st;
    out.status = prune({
      ...rest,
      initialization: { bootstrapDataSecretCreated: bootstrapReady, infrastructureProvisioned: infrastructureReady },
      conditions: v1beta2.conditions,
      readyReplicas: v1beta2.readyReplicas,
      availableReplicas: v1beta2.availableReplicas,
      upToDateReplicas: v1beta2.upToDateReplicas,
      deprecated: {
        v1beta1: {
          conditions, readyReplicas, availableReplicas, unavailableReplicas, failureReason, failureMessage,
        },
      },
    });
  }
  return out;
}
