// The types the HTTP API returns and the UI renders. Kind and code strings are API-visible: keep them stable.
// ~510 lines of types and their doc comments, which scripts/openapi.ts turns into the API's schemas: one file
// is one source for openapi.json.

export interface PoolRef {
  /** kubeconfig context of the management cluster. */
  context: string;
  namespace: string;
  /** MachinePool name. */
  name: string;
}

export function poolKey(ref: PoolRef): string {
  return `${ref.context}/${ref.namespace}/${ref.name}`;
}

export type Severity = 'info' | 'warning' | 'critical';

export const SEVERITY_RANK: Record<Severity, number> = { info: 0, warning: 1, critical: 2 };

/** Where a providerID can be seen. */
export type IdSource = 'azure' | 'amp' | 'mp' | 'ampm' | 'machine' | 'node';

export const ID_SOURCES: readonly IdSource[] = ['azure', 'amp', 'mp', 'ampm', 'machine', 'node'];

export const ID_SOURCE_LABELS: Record<IdSource, string> = {
  azure: 'Azure instances',
  amp: 'AzureMachinePool spec.providerIDList',
  mp: 'MachinePool spec.providerIDList',
  ampm: 'AzureMachinePoolMachines',
  machine: 'Machines',
  node: 'Nodes',
};

/** The infra kinds a MachinePool can name that poolscope reads. */
export type InfraKind = 'AzureMachinePool' | 'AzureManagedMachinePool' | 'AzureASOManagedMachinePool';

/** The infra kind behind each flavour, as CAPZ names it, and its short name. */
export const INFRA_KINDS: Record<PoolFlavour, { kind: InfraKind; short: string }> = {
  'self-managed': { kind: 'AzureMachinePool', short: 'AMP' },
  'aks-managed': { kind: 'AzureManagedMachinePool', short: 'AMMP' },
  'aks-aso': { kind: 'AzureASOManagedMachinePool', short: 'ASO-MP' },
};

/** The sources a pool of this flavour has: an AKS pool has no AzureMachinePoolMachines and no Machines. */
export function idSourcesOf(flavour: PoolFlavour = 'self-managed'): readonly IdSource[] {
  return flavour === 'self-managed' ? ID_SOURCES : ID_SOURCES.filter((s) => s !== 'ampm' && s !== 'machine');
}

/** A source's label for a pool of this flavour (the `amp` source is its infra object's list). */
export function idSourceLabel(source: IdSource, flavour: PoolFlavour = 'self-managed'): string {
  return source === 'amp' ? `${INFRA_KINDS[flavour].kind} spec.providerIDList` : ID_SOURCE_LABELS[source];
}

export type DriftKind =
  | 'missing-from-machinepool'
  | 'ghost-in-machinepool'
  | 'missing-from-azuremachinepool'
  | 'ghost-in-azuremachinepool'
  | 'instance-without-node'
  | 'node-without-instance'
  | 'case-mismatch'
  | 'other-scale-set'
  | 'order-only';

export const DRIFT_KINDS: readonly DriftKind[] = [
  'case-mismatch',
  'other-scale-set',
  'missing-from-machinepool',
  'ghost-in-machinepool',
  'missing-from-azuremachinepool',
  'ghost-in-azuremachinepool',
  'instance-without-node',
  'node-without-instance',
  'order-only',
];

/** Each drift kind in a few words, for badges (the kind's code stays in `data-drift-kind` and the title). */
export const DRIFT_KIND_LABELS: Record<DriftKind, string> = {
  'case-mismatch': 'case differs',
  'other-scale-set': 'other scale set',
  'missing-from-machinepool': 'missing from MP',
  'ghost-in-machinepool': 'ghost in MP',
  'missing-from-azuremachinepool': 'missing from AMP',
  'ghost-in-azuremachinepool': 'ghost in AMP',
  'instance-without-node': 'no Node',
  'node-without-instance': 'Node without VM',
  'order-only': 'list order only',
};

/** A drift kind's badge for a pool of this flavour (`missing from AMMP` for an AzureManagedMachinePool's). */
export function driftKindLabel(kind: DriftKind, flavour: PoolFlavour = 'self-managed'): string {
  return DRIFT_KIND_LABELS[kind].replace(/\bAMP$/, INFRA_KINDS[flavour].short);
}

export interface DriftItem {
  /** Stable identity across analyses: `<kind>:<join key>` (or `order-only:` for the list-level item). */
  key: string;
  kind: DriftKind;
  severity: Severity;
  /** The providerID as one source spells it; null only for `order-only`, which is about a whole list. */
  providerID: string | null;
  /** The exact string each source holds for this ID, or null where the source lacks it. */
  sources: Record<IdSource, string | null>;
  /** One line for an operator. */
  summary: string;
  /** When poolscope first saw this item (RFC 3339), or null if it was already there when watching began. */
  since: string | null;
}

export type FindingCode =
  | 'readiness-gate-frozen'
  | 'case-mismatch'
  | 'management-cluster-unreachable'
  | 'workload-cluster-unreachable'
  | 'other-scale-set-ids'
  | 'paused'
  | 'vmss-failed'
  | 'instance-failed'
  | 'node-not-joined'
  | 'instances-gone-from-azure'
  | 'azure-unread'
  | 'scaling'
  | 'model-rollout'
  | 'order-only'
  | 'empty-infra-list'
  | 'externally-managed-replicas'
  | 'vmss-not-found'
  | 'replicas-unknown'
  | 'sources-disagree'
  | 'gate-closed'
  | 'aks-pool-failed'
  | 'aks-operation'
  | 'aks-replicas-cached'
  | 'aks-nodes-unmapped'
  | 'aks-update-loop'
  | 'healthy';

export interface Finding {
  code: FindingCode;
  severity: Severity;
  /** One sentence, in plain words. */
  summary: string;
  /** Why, with the evidence (fields, states, counts). */
  detail: string;
  /** When the condition began (RFC 3339), when known. */
  since?: string;
  suggestedAction: string;
  /**
   * The finding this one follows from, when the diagnosis knows: the list is frozen because the scale set is
   * Failed, which it is because an instance failed. The page shows such a chain as one headline.
   */
  cause?: FindingCode;
  /**
   * Set on a warning that becomes critical if it lasts until this instant (RFC 3339): a frozen list while the pool
   * scales on CAPZ before v1.20, which is normal for a while (POOLSCOPE_FROZEN_CRITICAL_AFTER_SECONDS).
   */
  criticalFrom?: string;
}

export type ResyncMode = 'reconcile' | 'sync-provider-ids';

export interface ResyncOption {
  /** Whether poolscope will perform it at all (false = refused, see `reason`). */
  allowed: boolean;
  /** Whether doing it is expected to change anything. */
  canHelp: boolean;
  reason: string;
}

export interface ResyncVerdict {
  recommended: ResyncMode | null;
  reconcile: ResyncOption;
  syncProviderIds: ResyncOption & {
    /** IDs the MachinePool list would gain (from the AzureMachinePool list). */
    wouldAdd: string[];
    /** IDs the MachinePool list would lose. */
    wouldRemove: string[];
    /**
     * IDs of `wouldAdd` whose instance has no Node (failed, or not joined yet): cluster-autoscaler counts each as
     * a node still registering and removes it after its max-node-provision-time (15 min by default). Absent from
     * states stored by poolscope before it said so.
     */
    wouldAddWithoutNode?: string[];
  };
}

/** Who asked for a resync, as the management cluster knows them. */
export interface ResyncIdentity {
  user: string;
  groups: string[];
  uid?: string;
  extra?: Record<string, string[]>;
  /** How poolscope learned it: `bearer-token` (TokenReview) or `proxy:<name>` (trusted auth proxy headers). */
  via: string;
}

/** What a step of a resync was: the pool read afresh, an object annotated or written, a controller answering. */
export type ResyncStepCode =
  | 'checked'
  | 'amp-annotated'
  | 'mp-annotated'
  | 'mp-annotate-failed'
  | 'watching'
  | 'capz-reconciled'
  | 'amp-ready'
  | 'mp-list-changed'
  | 'list-written'
  | 'finished';

/** One step of a resync, recorded as it happened. */
export interface ResyncStep {
  at: string;
  code: ResyncStepCode;
  /** The step in words, with resourceVersions and counts. */
  text: string;
}

/** A resync under way on a pool (one at a time). */
export interface ResyncRunning {
  mode: ResyncMode;
  user: string;
  startedAt: string;
  /** Its steps so far, oldest first: a reconcile's annotations, then what CAPZ and CAPI did. */
  steps: ResyncStep[];
}

/** `GET …/resync`: what this caller may do to this pool, and what poolscope thinks would help. */
export interface ResyncStatus {
  /** POOLSCOPE_READ_ONLY: every write is off for everyone. */
  readOnly: boolean;
  identity: ResyncIdentity | null;
  /** Why there is no identity (not signed in, token rejected, …); null when there is one. */
  identityProblem: string | null;
  /** The cluster's RBAC answer (SubjectAccessReview) per mode; `permitted` false with the reason otherwise. */
  modes: Record<ResyncMode, { permitted: boolean; reason: string | null }>;
  /**
   * The verdict: from the latest collected state, or with `?fresh=1` (for a caller the cluster permits a mode)
   * from fresh reads of the cluster and Azure, as a POST decides. The POST re-checks it either way.
   */
  verdict: ResyncVerdict | null;
  /** Where `verdict` comes from: `collected` (the store) or `fresh` (read just now). */
  verdictSource: 'collected' | 'fresh';
  /** Names a fresh verdict: send it back as the POST's `verdictDigest`. Null for a collected one. */
  verdictDigest: string | null;
  running: ResyncRunning | null;
}

export interface ResyncRequest {
  mode: ResyncMode;
  dryRun?: boolean;
  /** The `verdictDigest` of the preview being confirmed: if the verdict changed since, nothing is done (409). */
  verdictDigest?: string;
}

/** What happened to one object. */
export interface ResyncObjectResult {
  kind: 'MachinePool' | InfraKind;
  namespace: string;
  name: string;
  action: 'patched' | 'dry-run' | 'not-patched' | 'failed';
  /** resourceVersion read before the patch, and the one the patch produced (null when it did not happen). */
  resourceVersionBefore: string | null;
  resourceVersionAfter: string | null;
  /** What was (or would be) written, in words. */
  change: string;
  error?: string;
}

/** What a reconcile trigger led to, watched until the controllers answered or the deadline passed. */
export interface ResyncObservation {
  waitedSeconds: number;
  /** Whether CAPZ wrote the AzureMachinePool after the trigger (its resourceVersion moved past ours). */
  capzReconciled: boolean;
  ampReady: boolean | null;
  ampListLength: number;
  mpListLength: number;
  mpListChanged: boolean;
  /** The two lists hold the same IDs. */
  listsAgree: boolean;
  summary: string;
}

export interface ResyncResult {
  mode: ResyncMode;
  dryRun: boolean;
  /** done: every write succeeded; dry-run: nothing written; partial: some writes happened and some did not. */
  outcome: 'done' | 'dry-run' | 'partial';
  message: string;
  user: string;
  pool: PoolRef;
  startedAt: string;
  finishedAt: string;
  objects: ResyncObjectResult[];
  /** IDs the MachinePool list gained (or would gain), and lost (or would lose). */
  added: string[];
  removed: string[];
  observed: ResyncObservation | null;
  /** The audit trail: the Kubernetes Event's name, whether the timeline marker was stored, and what failed. */
  audit: { event: string | null; marker: boolean; problems: string[] };
  /** True when this answer is the stored result of an earlier request with the same Idempotency-Key. */
  replayed: boolean;
  /** Names the verdict this request was decided on; a confirm sends it back as `verdictDigest`. */
  verdictDigest: string;
  /** What was done, step by step (empty for a dry run). */
  steps: ResyncStep[];
}

/**
 * 409 `verdict-changed`: the verdict is no longer the one the request's `verdictDigest` names, so nothing was done.
 * `preview` is what the request would do now, to show and confirm again.
 */
export interface ResyncVerdictChanged extends ApiError {
  preview: {
    verdict: ResyncVerdict;
    verdictDigest: string;
    /** The dry run of the requested mode on the current state; null when that mode is now refused (see `verdict`). */
    dryRun: ResyncResult | null;
  };
}

/** Which infra kind backs a MachinePool (lib/aks-model's flavourOf). */
export type PoolFlavour = 'self-managed' | 'aks-managed' | 'aks-aso';

export type SourceState =
  | { state: 'ok' }
  | { state: 'unknown'; reason: string }
  | { state: 'unreachable'; error: string }
  | { state: 'throttled'; error: string; retryAfterSeconds: number | null }
  | { state: 'not-found'; error: string };

/** One row per providerID (join key), lining up every source. */
export interface InstanceRow {
  providerID: string;
  sources: Record<IdSource, string | null>;
  azure: {
    name: string;
    instanceId: string | null;
    provisioningState: string | null;
    powerState: string | null;
    latestModelApplied: boolean | null;
    errorCode: string | null;
    errorMessage: string | null;
    computerName: string | null;
  } | null;
  ampm: { name: string; ready: boolean | null; provisioningState: string | null; nodeRef: string | null } | null;
  machine: { name: string; phase: string | null; nodeRef: string | null; deleting: boolean } | null;
  /** The Node with this providerID; `agentPool`: an AKS Node's agent pool label, when it has one. */
  node: { name: string; ready: boolean | null; uninitializedTaint: boolean; agentPool?: string } | null;
  /** The string cluster-autoscaler keys this instance by, and whether the MachinePool list lets it see it. */
  autoscaler: { key: string; visible: boolean };
  driftKinds: DriftKind[];
  /**
   * Set (true) when Azure's last read predates what Kubernetes shows of this instance, so it is not compared with
   * Azure (no drift on Azure's account) until the next read: either the read does not list it and its
   * AzureMachinePoolMachine is as new as the read (the VM may have been created since: `azure` is null), or the
   * read lists it and its AzureMachinePoolMachine was deleted after the read (the VM most likely went since:
   * `azure` holds what the read said).
   */
  awaitingAzureRead?: boolean;
}

/** Replica counters from every source; null = unknown (source not read or field absent). */
export interface ReplicaCounts {
  /** MachinePool spec.replicas. */
  desired: number | null;
  /** VMSS sku.capacity. */
  vmssCapacity: number | null;
  /** Azure instances listed (all states). */
  azureInstances: number | null;
  /** Azure instances whose provisioningState is Succeeded. */
  azureSucceeded: number | null;
  /** Azure instances whose provisioningState is Failed. */
  azureFailed: number | null;
  /** AzureMachinePool status.replicas (= ready AMPMs). */
  capz: number | null;
  /** MachinePool status.replicas. */
  capi: number | null;
  /** Nodes of this pool that are Ready. */
  readyNodes: number | null;
}

/** One fleet-table row. */
export interface PoolSummary {
  ref: PoolRef;
  key: string;
  /**
   * The infra kind behind the pool (by the MachinePool's infrastructureRef): `self-managed` (AzureMachinePool),
   * `aks-managed` (AzureManagedMachinePool) or `aks-aso` (AzureASOManagedMachinePool). Absent in summaries stored
   * before it, which were all self-managed.
   */
  flavour?: PoolFlavour;
  clusterName: string | null;
  orchestrationMode: 'Uniform' | 'Flexible' | null;
  replicas: ReplicaCounts;
  provisioningState: string | null;
  ampReady: boolean | null;
  mpInfrastructureReady: boolean | null;
  phase: string | null;
  paused: boolean;
  /** The CAPZ controller's image tag (e.g. "v1.26.0"), when the management cluster lets it be read. */
  capzVersion: string | null;
  driftCounts: Partial<Record<DriftKind, number>>;
  worstFinding: Pick<Finding, 'code' | 'severity' | 'summary'> | null;
  /** Every active finding but `healthy`, in short (for metrics and alerts); absent in summaries stored before it. */
  activeFindings?: { code: FindingCode; severity: Severity; since: string | null }[];
  /** Last time anything about this pool changed (RFC 3339), when known. */
  /**
   * When the infra object went from ready to not ready within the hour before the analysis, oldest first (at most
   * 30; lib/flapping). Absent when none did.
   */
  readyDrops?: string[];
  lastChange: string | null;
  /**
   * When poolscope saw the MachinePool gone from its management cluster (RFC 3339); absent while it exists. A deleted
   * pool keeps its last state (and its history, as of any earlier moment) until retention passes its deletion.
   */
  deletedAt?: string;
  /**
   * When poolscope stopped watching the pool's context (no longer in POOLSCOPE_CONTEXTS or the kubeconfig; RFC 3339);
   * absent while it is watched. Kept, like a deleted pool, until retention passes that time.
   */
  unwatchedSince?: string;
}

/** Since when a pool is gone from poolscope's view: its MachinePool deleted, or its context no longer watched. */
export function goneSince(s: Pick<PoolSummary, 'deletedAt' | 'unwatchedSince'>): string | undefined {
  return s.deletedAt ?? s.unwatchedSince;
}

/** A pool's presence, as its `pool` timeline entries say it. */
export function presence(s: Pick<PoolSummary, 'deletedAt' | 'unwatchedSince'>): 'present' | 'deleted' | 'unwatched' {
  return s.deletedAt ? 'deleted' : s.unwatchedSince ? 'unwatched' : 'present';
}

/**
 * A condition for the timeline lanes: of the infra pool (`amp`: the AzureMachinePool, or an AKS pool's
 * AzureManagedMachinePool), of ASO's agent pool (`aso`, its Ready) or, v1beta1-style, of the MachinePool.
 */
export interface PoolCondition {
  source: 'amp' | 'aso' | 'mp';
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string | null;
  message: string | null;
  lastTransitionTime: string | null;
}

/** A providerID list in short: how many IDs, and a hash that changes with any change, order included. */
export interface ListDigest {
  count: number;
  hash: string;
}

export interface PoolDetail {
  summary: PoolSummary;
  conditions: PoolCondition[];
  lists: { mp: ListDigest; amp: ListDigest | null };
  findings: Finding[];
  verdict: ResyncVerdict;
  drift: DriftItem[];
  instances: InstanceRow[];
  sources: { kube: SourceState; workload: SourceState; azure: SourceState };
  /** Oddities tolerated while reading the objects (unknown phase, duplicate IDs, …). */
  notes: string[];
  /** The instant this state describes (RFC 3339). */
  at: string;
}

/** One stored change to one field of a pool. */
export interface TimelineEntry {
  at: string;
  poolKey: string;
  /**
   * e.g. `amp.provisioningState`, `condition.amp.Ready`, `list.mp`, `replicas.capz`, `drift`, `finding.<code>`,
   * `event.<reason>`, `resync`. A `drift` entry's value is `<kind>:<providerID>`, the ID as a source spells it.
   */
  field: string;
  from: string | null;
  to: string | null;
  detail?: string;
}

/** One Kubernetes source: a management cluster (a kubeconfig context) or a workload cluster read through it. */
export interface SourceHealth {
  name: string;
  /** The management cluster's context (for a workload cluster, the context it is read through). */
  context: string;
  kind: 'management' | 'workload';
  state: 'live' | 'stale' | 'error' | 'starting';
  since: string;
  error?: string;
}

/** One Azure subscription as poolscope reads it. */
export interface AzureHealth {
  subscription: string;
  state: 'live' | 'throttled' | 'unreachable';
  since: string;
  error?: string;
  /** The workload clusters whose pools' scale sets are in it (by their Cluster's name), for people to know it by. */
  usedBy?: string[];
}

/**
 * Whether the collector can write its timeline store. While the store refuses its writes (a full disk, a database
 * down or read-only) nothing new is recorded: what is shown is as last stored, and the changes wait.
 */
export interface StoreHealth {
  state: 'ok' | 'failing';
  /** When the writes refused in a row began (null when `ok`). */
  since: string | null;
  /** Writes refused in a row (0 when `ok`). */
  failingWrites: number;
  /** Why the last write was refused. */
  error?: string;
}

export interface SourcesReport {
  /** Whether this server process runs the collector (false on a follower replica or with POOLSCOPE_COLLECTOR=false). */
  collecting: boolean;
  lastCycle: { id: string; at: string } | null;
  kube: SourceHealth[];
  azure: AzureHealth[];
  /** The collector's writes to the store (null where this process does not collect). */
  store: StoreHealth | null;
}

/** `GET /api/pools`. */
export interface FleetResponse {
  pools: PoolSummary[];
  /** Pools before filtering (deleted or unwatched pools counted only when the filters show them). */
  total: number;
  /** Pools the store still keeps that left poolscope's view: deleted, or their context not watched (hidden unless asked for). */
  deleted: number;
  sources: SourcesReport;
  at: string;
}

/** `GET /api/pools/{context}/{namespace}/{name}` (and with `?at=`: the state at that instant). */
export interface PoolResponse {
  pool: PoolDetail;
  /** The instant asked for with `?at=`, or null for the current state. */
  asOf: string | null;
  /**
   * When poolscope last read the pool's scale set from Azure (Azure's time of the answer, RFC 3339): what the Azure
   * figures of the current state are as of. Null for a past instant (`?at=`), and until a first read is recorded.
   */
  azureReadAt: string | null;
  /**
   * When poolscope plans to read the pool's scale set next, and what that waits for: `interval` (its lane: ~15 s while
   * the pool moves, ~2 min when steady), `budget` (its turn at its subscription and region's share of the Compute
   * read budget, spent evenly), `throttled` (Azure's Retry-After). Null for `?at=`, and where this server process does
   * not collect (a follower replica, POOLSCOPE_COLLECTOR=false).
   */
  azureNextRead: {
    at: string;
    waitingFor: 'interval' | 'budget' | 'throttled';
    /** What is read: the pool's scale set (Compute's budget per subscription and region), or an AKS pool's agent pool (AKS's per subscription). */
    of?: 'scale-set' | 'agent-pool';
  } | null;
}

/** `GET /api/error` shape of every 4xx/5xx answer. */
export interface ApiError {
  error: { code: string; message: string };
}
