// CAPZ's AzureMachinePool status in its three generations (docs/domain.md,
// "What the AzureMachinePool lists and counts" and "When CAPZ marks an AzureMachinePool ready"): what
// `setProvisioningStateAndConditions` makes of a VMSS state, the Ready summary CAPI's condition helpers write
// from it, and which AzureMachinePoolMachines `updateReplicasAndProviderIDs` counts and lists, in which order.
// Held to upstream's own test tables and code in sim/world/upstream/capz-cases.ts.

import type { KubeObject } from '../../lib/unstructured';

export type CapzBehaviour = 'pre-1.20' | '1.26' | 'main';

export const CAPZ_BEHAVIOURS: readonly CapzBehaviour[] = ['pre-1.20', '1.26', 'main'];

/** The controller image each behaviour runs as, as the CAPZ release manifests (and staging builds) name it. */
const CAPZ_IMAGES: Record<CapzBehaviour, string> = {
  'pre-1.20': 'registry.k8s.io/cluster-api-azure/cluster-api-azure-controller:v1.19.4',
  '1.26': 'registry.k8s.io/cluster-api-azure/cluster-api-azure-controller:v1.26.0',
  main: 'gcr.io/k8s-staging-cluster-api-azure/cluster-api-azure-controller:main',
};

/** The CAPZ controller Deployment, as `clusterctl init --infrastructure azure` creates it. */
export function capzDeployment(behaviour: CapzBehaviour): Record<string, unknown> {
  const labels = { 'cluster.x-k8s.io/provider': 'infrastructure-azure', 'control-plane': 'capz-controller-manager' };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'capz-controller-manager', namespace: 'capz-system', labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: 'manager', image: CAPZ_IMAGES[behaviour] }] } },
    },
    status: { replicas: 1, readyReplicas: 1, availableReplicas: 1 },
  };
}

/** A CAPI v1beta1 condition as CAPZ writes it on the AzureMachinePool (other fields pass through untouched). */
export interface CapzCondition {
  type: string;
  status: string;
  reason?: string;
  severity?: string;
  lastTransitionTime?: string;
  message?: string;
}

export interface CapzScaleSetInput {
  /** The VMSS `properties.provisioningState` as Azure returns it (compared case-sensitively, as CAPZ does). */
  vmssState: string;
  /** MachinePool spec.replicas; null when unset (CAPZ reads it only for a Succeeded scale set). */
  specReplicas: number | null;
  /** The AzureMachinePool status.replicas from the previous reconcile (CAPZ sets the state before the replicas). */
  statusReplicas: number;
  /** The AzureMachinePool status.ready before this reconcile. */
  ready: boolean;
  /** The AzureMachinePool status.conditions before this reconcile. */
  conditions: readonly CapzCondition[];
}

export interface CapzStatus {
  provisioningState: string;
  ready: boolean;
  /**
   * The conditions after the call: the ones CAPZ marked replace their type, every other one is returned as it
   * was (the same object), in the order CAPI's condition setter keeps them (Ready first, then by type).
   */
  conditions: CapzCondition[];
}

type Readiness = 'ready' | 'not-ready' | 'unchanged';

const RUNNING = 'ScaleSetRunning';
const DESIRED = 'ScaleSetDesiredReplicas';
const MODEL = 'ScaleSetModelUpdated';

// Every generation marks these conditions False with severity Info, whatever the state (even Failed).
const markFalse = (type: string, reason: string): CapzCondition => ({
  type,
  status: 'False',
  reason,
  severity: 'Info',
});
const markTrue = (type: string): CapzCondition => ({ type, status: 'True' });

/** ScaleSetRunning's reason and what becomes of readiness for a state other than Succeeded and Updating. */
function notRunning(behaviour: CapzBehaviour, state: string): { reason: string; readiness: Readiness } {
  if (state === 'Creating') return { reason: 'ScaleSetCreating', readiness: 'not-ready' };
  if (state === 'Deleting') return { reason: 'ScaleSetDeleting', readiness: 'not-ready' };
  // Before 1.20 every other state falls through to the raw state and not ready.
  if (behaviour === 'pre-1.20') return { reason: state, readiness: 'not-ready' };
  // 1.20+ names a failure and leaves readiness alone; #6488 (main only) marks Failed, Canceled and Deleted not ready.
  if (state === 'Failed')
    return { reason: 'ScaleSetProvisionFailed', readiness: behaviour === 'main' ? 'not-ready' : 'unchanged' };
  if (behaviour === 'main' && (state === 'Canceled' || state === 'Deleted'))
    return { reason: state, readiness: 'not-ready' };
  return { reason: state, readiness: 'unchanged' };
}

/** CAPI's condition order: Ready first, the rest by type. */
function byConditionType(a: CapzCondition, b: CapzCondition): number {
  if (a.type === b.type) return 0;
  if (a.type === 'Ready') return -1;
  if (b.type === 'Ready') return 1;
  return a.type < b.type ? -1 : 1;
}

/** `setProvisioningStateAndConditions`: one VMSS state in, the AzureMachinePool's state, readiness and conditions out. */
export function capzProvisioningState(behaviour: CapzBehaviour, input: CapzScaleSetInput): CapzStatus {
  const { vmssState: state, specReplicas, statusReplicas } = input;
  const pre = behaviour === 'pre-1.20';
  let provisioningState = state;
  let marks: CapzCondition[];
  let readiness: Readiness;
  if (state === 'Succeeded') {
    // Upstream dereferences spec.replicas here; CAPI's MachinePool webhook always defaults it.
    if (specReplicas === null) throw new Error('CAPZ needs MachinePool spec.replicas for a Succeeded scale set');
    if (specReplicas === statusReplicas) {
      marks = [markTrue(RUNNING), markTrue(MODEL), markTrue(DESIRED)];
      readiness = 'ready';
    } else {
      provisioningState = 'Updating';
      marks = [markFalse(DESIRED, specReplicas > statusReplicas ? 'ScaleSetScalingUp' : 'ScaleSetScalingDown')];
      readiness = pre ? 'not-ready' : 'ready';
    }
  } else if (state === 'Updating') {
    marks = [markFalse(MODEL, 'ScaleSetModelOutOfDate')];
    readiness = pre ? 'not-ready' : 'ready';
  } else {
    const r = notRunning(behaviour, state);
    marks = [markFalse(RUNNING, r.reason)];
    readiness = r.readiness;
  }
  const byType = new Map(input.conditions.map((c) => [c.type, c]));
  for (const m of marks) byType.set(m.type, m);
  return {
    provisioningState,
    ready: readiness === 'unchanged' ? input.ready : readiness === 'ready',
    conditions: [...byType.values()].sort(byConditionType),
  };
}

/** CAPI v1beta1 merge priority of a condition's (status, severity) group: lower wins. */
function mergePriority(c: CapzCondition): number {
  if (c.status === 'False')
    return ({ Error: 0, Warning: 1, Info: 2 } as Record<string, number>)[c.severity ?? ''] ?? 99;
  if (c.status === 'True') return 3;
  if (c.status === 'Unknown') return 4;
  return 99;
}

/**
 * The Ready condition CAPZ's patch writes with CAPI's `SetSummary` (v1beta1): of all other conditions, the group
 * (same status and severity) with the highest priority — False Error, Warning, Info, then True, then Unknown —
 * decides; its status and severity, and the reason of its first condition by type. null when there is none.
 */
export function capzReadySummary(conditions: readonly CapzCondition[]): CapzCondition | null {
  const scope = conditions.filter((c) => c.type !== 'Ready');
  if (!scope.length) return null;
  const best = Math.min(...scope.map(mergePriority));
  const top = scope.filter((c) => mergePriority(c) === best).sort(byConditionType);
  const first = top[0] as CapzCondition;
  if (first.status === 'True') return { type: 'Ready', status: 'True' };
  return {
    type: 'Ready',
    status: first.status,
    ...(first.reason ? { reason: first.reason } : {}),
    ...(first.status === 'False' && first.severity ? { severity: first.severity } : {}),
  };
}

// ---------------- updateReplicasAndProviderIDs ----------------

/** The pool an AzureMachinePool belongs to, as CAPZ's machine pool scope knows it. */
export interface CapzPoolRef {
  namespace: string;
  clusterName: string;
  ampName: string;
  mpName: string;
}

/** FNV-1a, 32 bits, over the UTF-8 bytes. */
function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(text)) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}

/**
 * A name as a label value, as CAPI's `format.MustFormatValue` makes it: the name itself when it is a valid label
 * value (at most 63 characters, alphanumerics with `-_.` inside), otherwise `hash_<FNV-1a 32 in base64url>_z`.
 */
export function capzLabelValue(name: string): string {
  if (name.length <= 63 && /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/.test(name)) return name;
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, fnv1a32(name));
  return `hash_${Buffer.from(bytes).toString('base64url')}_z`;
}

/** The four labels CAPZ puts on each AzureMachinePoolMachine it creates, and lists them by. */
export function capzAmpmLabels(ref: CapzPoolRef): Record<string, string> {
  return {
    'cluster.x-k8s.io/cluster-name': ref.clusterName,
    'azuremachinepool.infrastructure.cluster.x-k8s.io/machine-pool': ref.ampName,
    'cluster.x-k8s.io/pool-name': capzLabelValue(ref.mpName),
    [ref.clusterName]: 'owned',
  };
}

/**
 * The order a controller's informer cache lists objects in. Its index is a Go map, so each List may hand the
 * same objects back in another order.
 */
export type CacheOrder = <T>(items: readonly T[]) => T[];

/** The objects in the order given (for tables whose input order is the point). */
export const givenOrder: CacheOrder = (items) => [...items];

/** A fresh shuffle for each list, drawn from `random`. */
export function shuffledOrder(random: () => number): CacheOrder {
  return <T>(items: readonly T[]): T[] => {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      const t = out[i] as T;
      out[i] = out[j] as T;
      out[j] = t;
    }
    return out;
  };
}

/** A small seedable generator (mulberry32): the same seed, the same sequence in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Whether CAPZ sorts the list it writes: since v1.23 (#6011); before, it is in the cache's order. */
const SORTS_PROVIDER_IDS: Record<CapzBehaviour, boolean> = { 'pre-1.20': false, '1.26': true, main: true };

/**
 * `updateReplicasAndProviderIDs`: of the AzureMachinePoolMachines in the AzureMachinePool's namespace carrying
 * all four labels, status.replicas counts those with status.ready true, and spec.providerIDList names them all
 * (ready or not), in the cache's order or sorted (see {@link SORTS_PROVIDER_IDS}).
 */
export function capzReplicasAndProviderIds(
  behaviour: CapzBehaviour,
  ref: CapzPoolRef,
  ampms: readonly KubeObject[],
  cacheOrder: CacheOrder,
): { replicas: number; providerIDList: string[] } {
  const labels = Object.entries(capzAmpmLabels(ref));
  const listed = cacheOrder(
    ampms.filter(
      (a) => a.metadata?.namespace === ref.namespace && labels.every(([k, v]) => a.metadata?.labels?.[k] === v),
    ),
  );
  const providerIDList = listed.map((a) => (typeof a.spec?.providerID === 'string' ? a.spec.providerID : ''));
  // Go's byte-wise string order; for the ASCII of an ARM ID the same as JavaScript's code-unit order.
  if (SORTS_PROVIDER_IDS[behaviour]) providerIDList.sort();
  return { replicas: listed.filter((a) => a.status?.ready === true).length, providerIDList };
}
