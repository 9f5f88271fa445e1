// Safe readers for objects as the Kubernetes API and ARM return them (JSON, possibly partial).
// Every reader tolerates a missing or wrongly typed field and returns null instead of throwing.

/** Any Kubernetes object, as `kubectl get -o json` prints it. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { apiVersion?: string; kind?: string; name?: string; uid?: string; controller?: boolean }[];
    finalizers?: string[];
    [key: string]: unknown;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  [key: string]: unknown;
}

export function get(obj: unknown, path: readonly string[]): unknown {
  let cur: unknown = obj;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

export function str(obj: unknown, ...path: string[]): string | null {
  const v = get(obj, path);
  return typeof v === 'string' ? v : null;
}

export function num(obj: unknown, ...path: string[]): number | null {
  const v = get(obj, path);
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

export function bool(obj: unknown, ...path: string[]): boolean | null {
  const v = get(obj, path);
  return typeof v === 'boolean' ? v : null;
}

export function arr(obj: unknown, ...path: string[]): unknown[] {
  const v = get(obj, path);
  return Array.isArray(v) ? v : [];
}

export function strings(obj: unknown, ...path: string[]): string[] {
  return arr(obj, ...path).filter((x): x is string => typeof x === 'string');
}

/** Parses an RFC 3339 timestamp to epoch milliseconds, or null. */
export function toMs(ts: string | null | undefined): number | null {
  if (!ts) return null;
  const ms = Date.parse(ts);
  return Number.isNaN(ms) ? null : ms;
}

/**
 * Where a deleting Machine's deletion stands: the reason of CAPI's `Deleting` condition (v1beta2 conditions:
 * `status.conditions` of a v1beta2 object, `status.v1beta2.conditions` of a v1beta1 one), e.g. `DrainingNode`,
 * `WaitingForVolumeDetach`, `WaitingForPreTerminateHook`; else a v1beta1 `DrainingSucceeded=False` reason
 * (`Draining`, `DrainingFailed`). Null when the Machine says neither. A reason is a short CamelCase word, so any
 * other text is dropped.
 */
export function machineDeletingStage(obj: unknown): string | null {
  const v1beta2 = (str(obj, 'apiVersion') ?? '').endsWith('/v1beta2');
  const conditions = v1beta2 ? arr(obj, 'status', 'conditions') : arr(obj, 'status', 'v1beta2', 'conditions');
  const deleting = conditions.find((c) => str(c, 'type') === 'Deleting' && str(c, 'status') === 'True');
  const draining = arr(obj, 'status', 'conditions').find(
    (c) => str(c, 'type') === 'DrainingSucceeded' && str(c, 'status') === 'False',
  );
  const reason = str(deleting, 'reason') ?? str(draining, 'reason');
  return reason !== null && /^[A-Za-z]{1,64}$/.test(reason) ? reason : null;
}
