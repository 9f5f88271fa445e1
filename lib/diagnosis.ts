// The diagnosis: ordered findings in plain words for one pool, from its model and drift
// (docs/domain.md, "Operator scenarios").
// Each finding says what is wrong, the evidence, since when (when known) and what an operator can do.

import { CAPZ_READINESS_TEXT, capzReadiness, capzSortsList } from './capz-version';
import type { DriftItem, DriftKind, Finding, FindingCode, IdSource, SourceState } from './api-types';
import { SEVERITY_RANK } from './api-types';
import { awaitsAzureRead, isRunning, otherScaleSetOf } from './drift';
import { formatDuration, listSome, plural } from './format';
import { spellings, type JoinedId } from './join';
import { findCondition, isPaused, type Condition, type PoolModel } from './pool-model';
import { toMs } from './unstructured';

const NODE_JOIN_GRACE_MS = 10 * 60 * 1000;

/** Azure provisioning states of an instance on its way into the pool (not failed, not leaving). */
const ARRIVING_STATES: ReadonlySet<string> = new Set(['Creating', 'Updating', 'Succeeded']);

/** Tie-break order among findings of equal severity. */
export const FINDING_ORDER: readonly FindingCode[] = [
  'vmss-not-found',
  'management-cluster-unreachable',
  'workload-cluster-unreachable',
  'readiness-gate-frozen',
  'case-mismatch',
  'other-scale-set-ids',
  'paused',
  'vmss-failed',
  'instance-failed',
  'node-not-joined',
  'instances-gone-from-azure',
  'azure-unread',
  'empty-infra-list',
  'replicas-unknown',
  'sources-disagree',
  'externally-managed-replicas',
  'scaling',
  'model-rollout',
  'order-only',
  'gate-closed',
  'healthy',
];

/** How long a frozen list while the pool scales on CAPZ before v1.20 stays a warning (see frozenWhileScaling). */
const FROZEN_CRITICAL_AFTER_MS = 10 * 60 * 1000;

export interface DiagnosisOptions {
  now: string;
  /** How long a frozen list while the pool scales on CAPZ before v1.20 is a warning (FROZEN_CRITICAL_AFTER_MS). */
  frozenCriticalAfterMs?: number;
  /** The previous analysis' findings, to carry `since` forward. */
  previous?: readonly Finding[] | null;
  /** How poolscope reads the management cluster (ok when not given). */
  kube?: SourceState;
}

/**
 * A finding's summary as of `now`: the stored summary has no duration (it would change every second), so the
 * freeze's length is put in when it is shown — "frozen for 14 min: …".
 */
export function headline(f: Pick<Finding, 'code' | 'summary' | 'since'>, now: string): string {
  const since = toMs(f.since ?? null);
  const nowMs = toMs(now);
  if (f.code !== 'readiness-gate-frozen' || since === null || nowMs === null) return f.summary;
  return f.summary.replace(
    /^MachinePool providerIDList frozen:/,
    `MachinePool providerIDList frozen for ${formatDuration(nowMs - since)}:`,
  );
}

/** A pool summary's worst finding as {@link headline} says it, with its `since` from the summary's active findings. */
export function worstHeadline(
  worst: Pick<Finding, 'code' | 'summary'>,
  active: readonly { code: string; since: string | null }[] | undefined,
  now: string,
): string {
  const since = active?.find((f) => f.code === worst.code)?.since ?? undefined;
  return headline({ ...worst, ...(since ? { since } : {}) }, now);
}

/**
 * Whether CAPI's readiness gate is closed: `external.IsReady` reads only `status.ready`
 * (docs/domain.md, "The readiness gate").
 */
export function gateClosed(model: PoolModel): boolean {
  return model.amp !== null && model.amp.ready !== true;
}

/** What copying the AzureMachinePool list into the MachinePool would add and remove (exact strings). */
/** The IDs `to` has and `from` lacks (`add`), and the reverse (`remove`), each once, in list order. */
export function idDiff(from: readonly string[], to: readonly string[]): { add: string[]; remove: string[] } {
  const inFrom = new Set(from);
  const inTo = new Set(to);
  return {
    add: [...new Set(to.filter((id) => !inFrom.has(id)))],
    remove: [...new Set(from.filter((id) => !inTo.has(id)))],
  };
}

/**
 * The last diff per MachinePool list, with the AzureMachinePool list it was taken against: an analysis asks up to
 * three times, and the collector's next analyses of the pool mostly see the same two lists (lib/pool-model reads
 * an object's list once). Lists are not changed once read.
 */
const listDiffs = new WeakMap<
  readonly string[],
  { to: readonly string[]; diff: { add: string[]; remove: string[] } }
>();

/** What copying the AzureMachinePool list into the MachinePool would add and remove. */
export function listDiff(model: PoolModel): { add: string[]; remove: string[] } {
  const from = model.mp.providerIDList;
  const to = model.amp?.providerIDList ?? [];
  const hit = listDiffs.get(from);
  if (hit?.to === to) return hit.diff;
  const diff = idDiff(from, to);
  listDiffs.set(from, { to, diff });
  return diff;
}

/** Whether the two lists differ as sets (CAPI would change the MachinePool list if it could). */
function listsDiffer(model: PoolModel): boolean {
  if (model.amp === null) return false;
  const { add, remove } = listDiff(model);
  return add.length > 0 || remove.length > 0;
}

interface FailedInstance {
  name: string;
  code: string | null;
}

/**
 * The failed instances of the pool. Not one whose AMPM went after Azure's last read (the read lists it as Failed,
 * but CAPZ has been deleting it since: see awaitsAzureRead): it is on its way out, as the next read will show.
 */
function failedInstances(model: PoolModel, joined: readonly JoinedId[]): FailedInstance[] {
  if (model.azure.state === 'ok') {
    const leaving = new Set(
      joined
        .filter((j) => j.instance?.provisioningState === 'Failed' && awaitsAzureRead(j, model))
        .map((j) => j.instance),
    );
    return model.azure.instances
      .filter((i) => i.provisioningState === 'Failed' && !leaving.has(i))
      .map((i) => ({ name: i.name, code: i.errorCode }));
  }
  // Without Azure, the AMPMs mirror the VM state.
  return model.ampms.filter((m) => m.provisioningState === 'Failed').map((m) => ({ name: m.name, code: null }));
}

function describeFailures(failed: readonly FailedInstance[]): string {
  const codes = [...new Set(failed.map((f) => f.code).filter((c): c is string => c !== null))];
  return `${plural(failed.length, 'instance')} failed${codes.length ? `: ${codes.join(', ')}` : ''}`;
}

/**
 * The scaling finding's headline says what still differs: the ready count on its way to the desired one; else
 * Azure's counts; else (the counts match) the signals that still say it is scaling, e.g. CAPZ before v1.20 keeps
 * ScaleSetDesiredReplicas False for a reconcile after the last instance is ready.
 */
function scalingSummary(
  desired: number,
  current: number | null,
  capacity: number | null,
  active: number | null,
  desiredCondition: Condition | null,
  phase: string | null,
  joining: number,
): string {
  if (current !== null && current !== desired) return `Scaling from ${current} to ${desired} replicas.`;
  if ((capacity !== null && capacity !== desired) || (active !== null && active !== desired)) {
    return `Scaling to ${desired} replicas: scale set capacity ${capacity ?? 'unknown'}, ${active ?? 'unknown'} instances in Azure.`;
  }
  const signals = [
    desiredCondition?.status === 'False'
      ? `the AzureMachinePool's ScaleSetDesiredReplicas is False${desiredCondition.reason ? ` (${desiredCondition.reason})` : ''}`
      : null,
    phase ? `the MachinePool phase is ${phase}` : null,
    joining
      ? `${plural(joining, 'new instance')} ${joining === 1 ? 'is' : 'are'} not yet a ready AMPM in the AzureMachinePool list`
      : null,
  ].filter((x): x is string => x !== null);
  const still = signals.join(' and ');
  return capacity !== null && active !== null
    ? `Finishing a scale to ${desired} replicas: the scale set has all ${desired}, but ${still}.`
    : `Scaling to ${desired} replicas: ${still}.`;
}

/** The reasons the AzureMachinePool gives for not being ready: state, failed instances, False conditions. */
function notReadyCause(model: PoolModel, failed: readonly FailedInstance[]): string {
  const parts: string[] = [];
  const amp = model.amp;
  if (amp?.provisioningState) parts.push(`provisioningState ${amp.provisioningState}`);
  if (failed.length) parts.push(describeFailures(failed));
  for (const c of amp?.conditions ?? []) {
    if (c.type !== 'Ready' && c.status === 'False') parts.push(`${c.type}=False${c.reason ? `/${c.reason}` : ''}`);
  }
  if (amp && amp.replicas !== null && model.mp.replicas !== null && amp.replicas !== model.mp.replicas) {
    parts.push(`${amp.replicas} AMPMs ready for ${model.mp.replicas} desired`);
  }
  return parts.length ? parts.join(', ') : 'no reason given';
}

function sinceOfCondition(model: PoolModel, type: string, status: 'True' | 'False'): string | undefined {
  const c = model.amp ? findCondition(model.amp.conditions, type) : null;
  return c && c.status === status && c.lastTransitionTime ? c.lastTransitionTime : undefined;
}

const SOURCE_WORDS: Record<IdSource, string> = {
  azure: 'Azure',
  amp: 'the AzureMachinePool list',
  mp: 'the MachinePool list',
  ampm: 'the AMPMs',
  machine: 'the Machines',
  node: 'the Nodes',
};

/** An error message as a sentence: with one full stop at its end, however it came. */
function asSentence(text: string): string {
  return /[.!?]$/.test(text.trimEnd()) ? text.trimEnd() : `${text.trimEnd()}.`;
}

/** "a", "a and b", "a, b and c". */
function joinWords(words: readonly string[]): string {
  return words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
}

/** Where two spellings of one ID part: the first path segment that differs, with the one before it (`resourceGroups/MyRG`). */
function differingPart(a: string, b: string): string {
  const sa = a.split('/');
  const sb = b.split('/');
  for (let i = 0; i < sa.length; i++) {
    if (sa[i] !== sb[i]) return i > 0 ? `${sa[i - 1]}/${sa[i]}` : (sa[i] ?? a);
  }
  return a;
}

/**
 * How the sources spell one case-drifting ID: each spelling's differing part, with the sources that hold it
 * ("resourceGroups/MyRG in Azure and the AMPMs; resourceGroups/myrg in the Nodes"), and which sources disagree.
 */
function caseSpellings(j: JoinedId): { text: string; differ: (a: IdSource, b: IdSource) => boolean } {
  const all = spellings(j);
  const text = all
    .map((sp, i) => {
      const sources = (Object.keys(j.raw) as IdSource[])
        .filter((src) => j.raw[src] === sp)
        .map((src) => SOURCE_WORDS[src]);
      return `${differingPart(sp, all[i === 0 ? 1 : 0] ?? sp)} in ${joinWords(sources)}`;
    })
    .join('; ');
  return { text, differ: (a, b) => j.raw[a] !== null && j.raw[b] !== null && j.raw[a] !== j.raw[b] };
}

/** What the fallback finding says of each drift kind, counting instances (case and order drift have findings of their own). */
type CountedKind = Exclude<DriftKind, 'case-mismatch' | 'order-only' | 'other-scale-set'>;
const counted = (kind: DriftKind): kind is CountedKind =>
  kind !== 'case-mismatch' && kind !== 'order-only' && kind !== 'other-scale-set';
const DRIFT_WORDS: Record<CountedKind, (n: number) => string> = {
  'missing-from-machinepool': (n) =>
    `${plural(n, 'instance')} not in the MachinePool list (the autoscaler cannot see ${n === 1 ? 'it' : 'them'})`,
  'ghost-in-machinepool': (n) => `${plural(n, 'ID')} in the MachinePool list of instances gone from Azure`,
  'missing-from-azuremachinepool': (n) => `${plural(n, 'instance')} in Azure not in the AzureMachinePool list`,
  'ghost-in-azuremachinepool': (n) => `${plural(n, 'ID')} in the AzureMachinePool list of instances gone from Azure`,
  'instance-without-node': (n) => `${plural(n, 'instance')} running without a Node`,
  'node-without-instance': (n) => `${plural(n, 'Node')} without an instance in Azure`,
};

/** Findings that explain drift; the others (configuration, the list's order, healthy) do not. */
const EXPLAINS_DRIFT: ReadonlySet<FindingCode> = new Set<FindingCode>([
  'vmss-not-found',
  'instances-gone-from-azure',
  'management-cluster-unreachable',
  'workload-cluster-unreachable',
  'readiness-gate-frozen',
  'paused',
  'vmss-failed',
  'instance-failed',
  'node-not-joined',
  'instances-gone-from-azure',
  'azure-unread',
  'empty-infra-list',
  'scaling',
  'model-rollout',
]);

/** A finding before its `since` is settled; `warnFor`: a warning for that long from its start, then critical. */
type Draft = Omit<Finding, 'since' | 'criticalFrom'> & { derivedSince?: string; warnFor?: number };

/**
 * IDs of another scale set in this pool's lists (lib/drift's other-scale-set): their own problem, whichever pool they
 * belong to, which is not affected otherwise. What CAPI and cluster-autoscaler do with them: docs/domain.md,
 * "Node references and retired Nodes" and "cluster-autoscaler and the MachinePool list".
 */
function otherScaleSetFinding(model: PoolModel, drift: readonly DriftItem[]): Draft | null {
  const items = drift.filter((d) => d.kind === 'other-scale-set');
  if (!items.length) return null;
  const inMp = items.some((d) => d.sources.mp !== null);
  const inAmp = items.some((d) => d.sources.amp !== null);
  const where =
    inMp && inAmp
      ? 'The MachinePool and AzureMachinePool lists hold'
      : inMp
        ? 'The MachinePool list holds'
        : 'The AzureMachinePool list holds';
  const named = [
    ...new Map(
      items.map((d) => {
        const o = otherScaleSetOf(d.providerID ?? '', model);
        return [
          o.scaleSet,
          o.pool
            ? `scale set ${o.scaleSet} (pool ${o.pool}'s)`
            : `scale set ${o.scaleSet}, which no pool of ${model.ref.context} uses`,
        ];
      }),
    ).values(),
  ];
  const them = items.length === 1 ? 'it' : 'them';
  const own = model.scaleSet?.scaleSet ?? model.amp?.name ?? "this pool's";
  return {
    code: 'other-scale-set-ids',
    severity: 'warning',
    summary: `${where} ${plural(items.length, 'ID')} of another scale set (${listSome(named, 2)}): CAPI treats ${them} as this pool's.`,
    detail: `An ID is its whole path: subscription, resource group, scale set and instance. ${items.length === 1 ? 'This one names' : 'These name'} ${named.join('; ')}, not ${own}. CAPI takes every ID in the MachinePool's spec.providerIDList as this pool's: it gives this MachinePool a nodeRef to that Node and patches the Node's owner annotations with this pool's name (the other pool's reconcile writes its own back); cluster-autoscaler counts the instance in this pool's node group too; and once the ID leaves the list, CAPI may delete that Node from the workload cluster as retired (deleteRetiredNodes), and its kubelet registers it again.${inAmp ? " CAPZ builds the AzureMachinePool list from its own scale set's instances, so an ID of another one there was written by something else; CAPI copies it into the MachinePool list while the AzureMachinePool is ready." : ''} The other pool is not affected otherwise: its own page is unchanged.`,
    suggestedAction: `Find what wrote ${them} (kubectl get machinepool ${model.mp.name} -n ${model.mp.namespace} --show-managed-fields${inAmp ? '; the same for the AzureMachinePool' : ''}). ${inAmp ? 'Remove it from the AzureMachinePool list first; CAPI then copies the corrected list.' : "CAPI replaces the list with the AzureMachinePool's at its next copy (or poolscope's sync-provider-ids does now):"} expect the other pool's Node to be deleted once and to register again.`,
  };
}

/**
 * What poolscope cannot read, said as what it is: poolscope's own connection, unless the Cluster says CAPI cannot
 * reach the workload cluster either. With the management cluster out of reach, the workload cluster failing too
 * is most likely poolscope's link, and nothing can be said of CAPI's (it runs in that cluster).
 */
function unreachableFinding(model: PoolModel, kube: SourceState | undefined): Draft | null {
  const { mp } = model;
  const context = model.ref.context;
  const workloadDown = model.workload.state === 'unreachable';
  if (kube?.state === 'unreachable') {
    return {
      code: 'management-cluster-unreachable',
      severity: 'warning',
      summary: `poolscope cannot reach management cluster ${context}: this pool is shown as last seen.`,
      detail: `Reading ${context} failed: ${asSentence(kube.error)} This is poolscope's own connection: CAPI and CAPZ run inside that cluster and may be working normally, but nothing shown here is updated until poolscope reads it again.${workloadDown ? " poolscope cannot read the workload cluster's Nodes either, which points at poolscope's own network rather than at the clusters." : ''}`,
      suggestedAction: `Check poolscope's connection to ${context}: its kubeconfig context or ServiceAccount token, the network path from poolscope's pod, and whether the API server answers (kubectl --context ${context} get --raw /readyz). The source bar shows since when it fails.`,
    };
  }
  if (model.workload.state !== 'unreachable') return null;
  const cluster = mp.clusterName ?? '<cluster>';
  const probe = model.cluster?.remoteConnection ?? null;
  const secret = `the ${cluster}-kubeconfig Secret (key "value") in namespace ${mp.namespace}`;
  const frozen = listsDiffer(model)
    ? ' The MachinePool list differs from the AzureMachinePool list and stays frozen until then.'
    : '';
  const capiStops = `Since CAPI v1.8 the MachinePool controller lists the workload cluster's Nodes before its readiness gate, so while CAPI cannot reach it, spec.providerIDList, status.replicas and nodeRefs are not updated, even with the AzureMachinePool ready.${frozen}`;
  const read = `poolscope could not read its Nodes: ${asSentence(model.workload.error)}`;
  if (probe?.status === 'True') {
    return {
      code: 'workload-cluster-unreachable',
      severity: 'warning',
      summary: `poolscope cannot read workload cluster ${cluster}'s Nodes; CAPI still reaches it.`,
      detail: `${read} The Cluster's RemoteConnectionProbe condition is True, so CAPI's own connection works and it keeps updating this pool; what is missing is poolscope's view of the Nodes (the Node column, Ready Nodes, and drift against Nodes).`,
      suggestedAction: `Check poolscope's path to the workload API server: ${secret}, as poolscope reads it, and the network from poolscope's pod to the server it names.`,
    };
  }
  const capiToo = probe?.status === 'False';
  const probeText = capiToo
    ? ` The Cluster's RemoteConnectionProbe condition is False${probe.reason ? ` (${probe.reason}${probe.message ? `: ${probe.message}` : ''})` : ''}: CAPI cannot reach it either.`
    : ' Whether CAPI reaches it is not known (the Cluster has no RemoteConnectionProbe condition before CAPI v1.9).';
  return {
    code: 'workload-cluster-unreachable',
    severity: 'critical',
    summary: capiToo
      ? `Workload cluster ${cluster} is unreachable, for CAPI too: CAPI cannot update this pool.`
      : `poolscope cannot read workload cluster ${cluster}'s Nodes; CAPI may not reach it either.`,
    detail: `${read}${probeText} ${capiStops}`,
    suggestedAction: `Check ${secret} and whether the workload API server answers.${capiToo ? '' : " If CAPI reaches it, only poolscope's path is broken."}`,
    ...(capiToo && probe.lastTransitionTime ? { derivedSince: probe.lastTransitionTime } : {}),
  };
}

/**
 * Running instances whose Node has not come within NODE_JOIN_GRACE_MS: a Node that never came has an AMPM
 * waiting for it (NodeProvisioning). Not one leaving (its Machine deleted, drained before the VM goes; or its
 * AMPM already gone while Azure's last read still lists the VM), nor one that joined once (its AMPM has had a
 * nodeRef). Unknown while the workload cluster cannot be read.
 */
function unjoined(model: PoolModel, joined: readonly JoinedId[], nowMs: number): { j: JoinedId; created: number }[] {
  if (model.workload.state !== 'ok') return [];
  return joined.flatMap((j) => {
    if (!isRunning(j) || j.raw.node !== null || j.instance?.provisioningState === 'Failed') return [];
    if (!j.ampm || j.machine?.deleting || j.ampm.nodeRef !== null) return [];
    const created = j.instance?.createdAt ?? j.ampm.createdAt;
    return created !== null && nowMs - created > NODE_JOIN_GRACE_MS ? [{ j, created }] : [];
  });
}

/**
 * Whether the pool is moving towards its replica count: ready AMPMs short of or above it, the scale set updating,
 * CAPZ's ScaleSetDesiredReplicas False (it stays so for a reconcile after the last instance is ready) or CAPI's
 * phase a scaling one. Before CAPZ v1.20 that alone keeps the AzureMachinePool not ready, so a frozen list is
 * normal for a while (docs/domain.md, "When CAPZ marks an AzureMachinePool ready").
 */
function scalingNow(model: PoolModel): boolean {
  const amp = model.amp;
  if (!amp) return false;
  const state = model.azure.state === 'ok' ? model.azure.vmss.provisioningState : amp.provisioningState;
  const phase = model.mp.phase;
  return (
    (amp.replicas !== null && model.mp.replicas !== null && amp.replicas !== model.mp.replicas) ||
    state === 'Updating' ||
    state === 'Creating' ||
    findCondition(amp.conditions, 'ScaleSetDesiredReplicas')?.status === 'False' ||
    phase === 'ScalingUp' ||
    phase === 'ScalingDown' ||
    phase === 'Scaling'
  );
}

/** How a listed instance's Machine stands, in a few words: not deleted yet, or deleting (for how long, at what). */
function machineState(j: JoinedId, nowMs: number): string {
  const name = j.instance?.name ?? j.ampm?.name ?? j.key.split('/').at(-1) ?? j.key;
  const m = j.machine;
  if (!m) return `${name}: no Machine`;
  if (!m.deleting) return `${name}: Machine ${m.name} not deleted yet`;
  const age = m.deletingSince !== null ? ` for ${formatDuration(nowMs - m.deletingSince)}` : '';
  return `${name}: Machine ${m.name} deleting${age}${m.deletingStage ? ` (${m.deletingStage})` : ''}`;
}

/**
 * Instances gone from Azure while the AzureMachinePool list still holds them: deleted out of band (the portal,
 * `az vmss delete-instances`, a Spot eviction with the Delete policy). CAPZ deletes each one's Machine on its next
 * reconcile, and CAPI drains the Node first, which can hang (docs/domain.md, "S7. VM deleted out of band").
 */
function goneFromAzureFinding(
  model: PoolModel,
  joined: readonly JoinedId[],
  drift: readonly DriftItem[],
  nowMs: number,
): Draft | null {
  if (model.azure.state !== 'ok') return null;
  const items = drift.filter((d) => d.kind === 'ghost-in-azuremachinepool');
  if (!items.length) return null;
  const keys = new Set(items.map((d) => d.key.slice(d.key.indexOf(':') + 1)));
  const listed = joined.filter((j) => keys.has(j.key));
  const draining = listed.filter((j) => j.machine?.deleting).length;
  const sinces = items.flatMap((d) => (d.since ? [d.since] : []));
  return {
    code: 'instances-gone-from-azure',
    severity: 'warning',
    summary: `${plural(items.length, 'instance')} gone from Azure but still in the AzureMachinePool list${draining ? `; ${draining} of their Machines deleting` : ''}.`,
    detail: `Azure's scale set no longer has ${listSome(
      listed.map((j) => machineState(j, nowMs)),
      10,
    )}. CAPZ deletes the Machine of each on its next reconcile; CAPI drains the Node first, which can hang on an unreachable Node until the Machine's nodeDrainTimeout. Until the AMPMs go, the IDs stay in both lists and cluster-autoscaler may count them as nodes still registering.`,
    suggestedAction:
      "Find out who deleted them (the scale set's activity log). A reconcile trigger makes CAPZ notice sooner. If a Machine stays deleting, look at its Deleting condition; a drain that cannot finish waits for nodeDrainTimeout.",
    ...(sinces.length ? { derivedSince: sinces.reduce((a, b) => (a < b ? a : b)) } : {}),
  };
}

/**
 * A finding that is a warning for `warnFor` from its start, then critical. Without a known start it counts from
 * now: the next analysis that knows one decides.
 */
function escalated(f: Finding, warnFor: number, nowMs: number): Finding {
  const start = toMs(f.since ?? null) ?? nowMs;
  if (nowMs - start >= warnFor) return { ...f, severity: 'critical' };
  return { ...f, severity: 'warning', criticalFrom: new Date(start + warnFor).toISOString() };
}

export function diagnose(
  model: PoolModel,
  joined: readonly JoinedId[],
  drift: readonly DriftItem[],
  opts: DiagnosisOptions,
): Finding[] {
  const nowMs = toMs(opts.now) ?? 0;
  const readiness = capzReadiness(model.capzVersion);
  const versionText = readiness ? ` ${CAPZ_READINESS_TEXT[readiness]}` : '';
  const failed = failedInstances(model, joined);
  const invisible = drift.filter((d) => d.kind === 'missing-from-machinepool').length;
  const drafts: Draft[] = [];
  const { mp, amp } = model;
  const vmssName = model.azure.state === 'ok' ? model.azure.vmss.name : (model.scaleSet?.scaleSet ?? amp?.name ?? '?');

  if (model.azure.state === 'not-found') {
    drafts.push({
      code: 'vmss-not-found',
      severity: 'critical',
      summary: `Scale set ${vmssName} does not exist in Azure.`,
      detail: `Azure answered: ${asSentence(model.azure.error)} Every ID in the lists points at an instance that is gone. CAPZ recreates a missing scale set from the AzureMachinePool spec on its next reconcile, after which the old AMPMs' Machines are deleted.`,
      suggestedAction:
        'Find out who deleted the scale set (Azure activity log). If CAPZ does not recreate it within a few minutes, check the CAPZ controller logs and escalate.',
    });
  }

  const unreachable = unreachableFinding(model, opts.kube);
  if (unreachable) drafts.push(unreachable);
  const others = otherScaleSetFinding(model, drift);
  if (others) drafts.push(others);

  if (isPaused(model) || amp?.pausedAnnotation) {
    const by: string[] = [];
    if (model.cluster?.paused) by.push(`Cluster ${model.cluster.name} is paused`);
    if (mp.pausedAnnotation) by.push('the MachinePool has the cluster.x-k8s.io/paused annotation');
    if (amp?.pausedAnnotation)
      by.push(
        'the AzureMachinePool has the cluster.x-k8s.io/paused annotation (CAPZ skips it; since CAPI v1.9 this alone does not stop the CAPI MachinePool controller)',
      );
    drafts.push({
      code: 'paused',
      severity: 'warning',
      summary: 'Reconciliation is paused: drift is expected and will grow until it is unpaused.',
      detail: `${by.join('; ')}. Paused controllers do nothing, so Azure changes (evictions, VMSS autoscale) are not reflected. cluster-autoscaler does not scale down a MachinePool with the paused annotation.`,
      suggestedAction:
        'Unpause when the operation that paused it (e.g. clusterctl move) is over. poolscope never unpauses as a side effect.',
    });
  }

  const vmssFailed =
    model.azure.state === 'ok' ? model.azure.vmss.provisioningState === 'Failed' : amp?.provisioningState === 'Failed';
  const stuck = unjoined(model, joined, nowMs);
  if (amp && gateClosed(model) && listsDiffer(model)) {
    const cause = notReadyCause(model, failed);
    const { add, remove } = listDiff(model);
    const missing = add.length;
    const extra = remove.length;
    const diff = [missing ? `${missing} to add` : '', extra ? `${extra} to remove` : ''].filter(Boolean).join(', ');
    const sentence2 = invisible ? ` The autoscaler cannot see ${plural(invisible, 'instance')}.` : '';
    const action =
      readiness === 'pre-1.20'
        ? 'Upgrade CAPZ to v1.20 or later (#5537). Until then the list unfreezes only when every AMPM is Ready.'
        : failed.length
          ? 'Replace the failed instances (delete their Machines, or let a MachineHealthCheck do it); the gate reopens when the scale set leaves Failed.'
          : 'Wait for the scale set to settle; if it does not, look at the AzureMachinePool conditions and CAPZ logs.';
    drafts.push({
      code: 'readiness-gate-frozen',
      severity: 'critical',
      summary: `MachinePool providerIDList frozen: AzureMachinePool not ready (${cause}).${sentence2}`,
      detail: `CAPI copies the AzureMachinePool's spec.providerIDList into the MachinePool only while the AzureMachinePool's status.ready is true; it is ${amp.ready === null ? 'unset' : 'false'}, and the lists differ (${diff}). Until it copies, cluster-autoscaler and the MachinePool's nodeRefs work from the stale list (the uninitialized taint still comes off: with MachinePool Machines, CAPI's Machine controller removes it).${versionText}`,
      suggestedAction: `${action} A reconcile trigger cannot get past the gate; poolscope's Copy providerIDs can, when its safety checks pass.`,
      derivedSince: sinceOfCondition(model, 'Ready', 'False'),
      ...(vmssFailed ? { cause: 'vmss-failed' } : failed.length ? { cause: 'instance-failed' } : {}),
      ...(!vmssFailed && !failed.length && stuck.length ? { cause: 'node-not-joined' } : {}),
      ...(readiness === 'pre-1.20' && !vmssFailed && !failed.length && !stuck.length && scalingNow(model)
        ? { warnFor: opts.frozenCriticalAfterMs ?? FROZEN_CRITICAL_AFTER_MS }
        : {}),
    });
  }

  const caseDrift = joined.filter((j) => j.caseVariants);
  const first = caseDrift[0];
  if (first) {
    const { text, differ } = caseSpellings(first);
    const spelt = caseDrift.map(caseSpellings);
    const anyDiffer = (a: IdSource, b: IdSource) => spelt.some((c) => c.differ(a, b));
    const effects: string[] = [];
    if (anyDiffer('ampm', 'node')) {
      effects.push(
        `CAPZ finds no Node for an AMPM whose providerID the Node spells otherwise, so the AMPM never becomes Ready and the AzureMachinePool's status.replicas stays short${readiness === 'pre-1.20' ? ', which keeps the AzureMachinePool not ready on this CAPZ and the MachinePool list frozen' : ' (before CAPZ v1.20 that keeps it not ready and the MachinePool list frozen)'}.`,
      );
    }
    if (anyDiffer('mp', 'node')) {
      effects.push(
        'CAPI sets no nodeRef for a Node whose providerID the MachinePool list spells otherwise, and cluster-autoscaler, which compares scale set IDs in full, cannot map that Node to this pool.',
      );
    }
    if (anyDiffer('amp', 'mp')) {
      effects.push(
        'The two lists spell it differently: when CAPI copies the list, its deleteRetiredNodes deletes Nodes whose providerID is not exactly in the new one, so it may delete Nodes it takes for retired (kubelet re-registers them).',
      );
    }
    if (effects.length === 0)
      effects.push(
        'Any component that matches these IDs exactly (CAPI, CAPZ, cluster-autoscaler) treats them as different instances.',
      );
    const more =
      caseDrift.length > 1 ? ` (the first of ${caseDrift.length}: ${first.instance?.name ?? first.key})` : '';
    drafts.push({
      code: 'case-mismatch',
      severity: 'critical',
      summary: `providerIDs of ${plural(caseDrift.length, 'instance')} differ only in case between sources: ${text}.`,
      detail: `CAPI and CAPZ compare providerIDs exactly, so these do not match${more}. ${effects.join(' ')} cloud-provider-azure lower-cases the resource group in the IDs it gives Nodes (kubernetes #74882); CAPZ does the same since v1.7 (#2817).${differ('azure', 'ampm') ? ' Here the AMPMs differ from what current CAPZ derives from Azure (the Azure column).' : ''}`,
      suggestedAction:
        "Make the spellings agree at the source: upgrade CAPZ to v1.7 or later, or find what writes the other spelling. Do not rewrite the lists by hand (CAPI overwrites them, and deleteRetiredNodes acts on them meanwhile); poolscope's resync refuses to.",
    });
  }

  if (vmssFailed) {
    const frozen = gateClosed(model);
    drafts.push({
      code: 'vmss-failed',
      severity: frozen ? 'critical' : 'warning',
      summary: `Scale set ${vmssName} is in provisioningState Failed${failed.length ? ` (${describeFailures(failed)})` : ''}.`,
      detail: frozen
        ? `The AzureMachinePool is not ready because of it, which closes CAPI's readiness gate.${versionText}`
        : `The AzureMachinePool stays ready, so cluster-autoscaler gets no signal that the scale-up failed and may keep retrying (CAPZ #5860).${versionText}`,
      suggestedAction:
        'Read the instance error codes below. For capacity or quota errors lower replicas or max size, or change zones or VM size; otherwise replace the failed instances.',
      derivedSince: sinceOfCondition(model, 'ScaleSetRunning', 'False'),
      ...(failed.length ? { cause: 'instance-failed' } : {}),
    });
  }

  if (failed.length) {
    drafts.push({
      code: 'instance-failed',
      severity: 'warning',
      summary: `${describeFailures(failed)}.`,
      detail: `Failed: ${listSome(
        failed.map((f) => (f.code ? `${f.name} (${f.code})` : f.name)),
        10,
      )}. Their AMPMs never become Ready, so the AzureMachinePool's status.replicas stays below spec.replicas.`,
      suggestedAction:
        'Delete the Machine of each failed instance (or let a MachineHealthCheck do it); CAPZ deletes the VM and the scale set replaces it. A resync cannot repair a failed VM.',
    });
  }

  if (stuck.length) {
    const oldest = Math.min(...stuck.map((x) => x.created));
    drafts.push({
      code: 'node-not-joined',
      severity: 'warning',
      summary: `${plural(stuck.length, 'instance')} running for over 10 min without a Node.`,
      detail: `No Node has the providerID of ${listSome(
        stuck.map((x) => x.j.instance?.name ?? x.j.key),
        10,
      )}. The oldest was created at ${new Date(oldest).toISOString()}. Their AMPMs stay NodeProvisioning and never Ready; cluster-autoscaler treats them as unregistered and removes them after max-node-provision-time (15 min by default).`,
      suggestedAction:
        'Look at the VM boot diagnostics and cloud-init/kubeadm logs. Delete the Machine (or use a MachineHealthCheck) to replace it. A resync cannot help.',
      derivedSince: new Date(oldest + NODE_JOIN_GRACE_MS).toISOString(),
    });
  }

  const gone = goneFromAzureFinding(model, joined, drift, nowMs);
  if (gone) drafts.push(gone);

  if (model.azure.state === 'throttled' || model.azure.state === 'unreachable') {
    const throttled = model.azure.state === 'throttled';
    const retry =
      model.azure.state === 'throttled' && model.azure.retryAfterSeconds !== null
        ? ` (it asked to wait ${model.azure.retryAfterSeconds} s)`
        : '';
    drafts.push({
      code: 'azure-unread',
      severity: 'warning',
      summary: throttled
        ? `Azure is throttling reads of scale set ${vmssName}${retry}: its instances and capacity are not known now.`
        : `Scale set ${vmssName} could not be read from Azure: its instances and capacity are not known now.`,
      detail: `Azure answered: ${asSentence(model.azure.error)} Without the scale set poolscope cannot see failed instances, ghosts or the capacity, so the drift shown compares the Kubernetes sources only.${throttled ? " Compute's limits count per subscription and region, shared with CAPZ and cluster-autoscaler: CAPZ's own reconciles fail meanwhile too, which delays the lists." : ''}`,
      suggestedAction: throttled
        ? 'poolscope waits out Retry-After for the whole subscription and region, and keeps to its share of the budget (POOLSCOPE_AZURE_BUDGET_SHARE). If it lasts, look for other heavy callers of the subscription.'
        : "Check poolscope's Azure credentials, its role on the subscription and its network reach; the fleet page's source bar has the subscription's error.",
    });
  }

  if (amp && amp.providerIDList.length === 0 && (mp.replicas ?? 0) > 0) {
    drafts.push({
      code: 'empty-infra-list',
      severity: 'warning',
      summary: `AzureMachinePool providerIDList is empty while the pool wants ${mp.replicas} replicas.`,
      detail:
        'CAPI refuses to copy an empty list when replicas is not 0 ("Retrieved empty spec.providerIDList"), so the MachinePool keeps its old list. This is normal for a short while after a controller restart or clusterctl move, before CAPZ lists the AMPMs again.',
      suggestedAction:
        'Usually transient. If it persists, check the CAPZ controller; a reconcile trigger is harmless here.',
    });
  }

  if (mp.replicas === null) {
    drafts.push({
      code: 'replicas-unknown',
      severity: 'warning',
      summary: 'MachinePool spec.replicas is not set, so the desired size is unknown.',
      detail:
        'The CAPI webhook normally defaults it; with it unset CAPI never reports Running or Scaling, and CAPZ may fail while comparing replica counts.',
      suggestedAction:
        'Set spec.replicas explicitly (kubectl scale machinepool …), and check that the CAPI webhooks are running.',
    });
  }

  if (mp.replicasManagedBy !== null && mp.replicasManagedBy !== 'false') {
    drafts.push({
      code: 'externally-managed-replicas',
      severity: mp.autoscalerAnnotations ? 'warning' : 'info',
      summary: `Replicas are managed externally (${mp.replicasManagedBy}): desired = VMSS capacity.`,
      detail: `With cluster.x-k8s.io/replicas-managed-by, CAPZ copies the scale set's sku.capacity into MachinePool spec.replicas and skips its own scale-down; the phase reads Scaling instead of ScalingUp/ScalingDown.${mp.autoscalerAnnotations ? ' This pool also has cluster-autoscaler node-group annotations; cluster-autoscaler scales spec.replicas itself and does not need the annotation, so the two fight.' : ''}`,
      suggestedAction: mp.autoscalerAnnotations
        ? 'Remove cluster.x-k8s.io/replicas-managed-by when cluster-autoscaler manages this pool.'
        : 'None, if an external autoscaler scales the scale set directly.',
    });
  }

  const capacity = model.azure.state === 'ok' ? model.azure.vmss.capacity : null;
  const activeInstances =
    model.azure.state === 'ok'
      ? model.azure.instances.filter((i) => i.provisioningState !== 'Deleting' && i.provisioningState !== 'Deleted')
          .length
      : null;
  const outdated =
    model.azure.state === 'ok'
      ? model.azure.instances.filter((i) => i.latestModelApplied === false).length
      : model.ampms.filter((m) => m.latestModelApplied === false).length;
  const modelCondition = sinceOfCondition(model, 'ScaleSetModelUpdated', 'False');
  // Instances not on the latest model are the rollout. The condition alone is not: before v1.20 CAPZ sets it
  // False whenever the scale set is Updating, a plain scale-up included
  // (docs/domain.md, "When CAPZ marks an AzureMachinePool ready").
  const rollingOut = outdated > 0;
  const surge = rollingOut && capacity !== null && mp.replicas !== null && capacity > mp.replicas;
  const desiredCondition = amp ? findCondition(amp.conditions, 'ScaleSetDesiredReplicas') : null;
  const scalingPhase = mp.phase === 'ScalingUp' || mp.phase === 'ScalingDown' || mp.phase === 'Scaling';
  // New instances on their way in, not yet a ready AMPM in the AzureMachinePool list: in Azure, not failed, younger
  // than the Node's grace (or still Creating); or newer than Azure's last read (lib/drift's awaitsAzureRead). CAPZ
  // pre-v1.20 has the counts equal and the conditions True for a while after the scale set's update, before it
  // lists them.
  const joining = joined.filter((j) => {
    if (j.caseVariants || j.machine?.deleting || (j.raw.amp !== null && j.ampm?.ready === true)) return false;
    const inst = j.instance;
    const awaiting = awaitsAzureRead(j, model);
    // Not in the read and newer than it: arriving. In the read but its AMPM deleted since: leaving.
    if (!inst || awaiting) return !inst && awaiting;
    if (!ARRIVING_STATES.has(inst.provisioningState ?? '')) return false;
    const created = inst.createdAt ?? j.ampm?.createdAt ?? null;
    return inst.provisioningState === 'Creating' || (created !== null && nowMs - created <= NODE_JOIN_GRACE_MS);
  }).length;
  const scaling =
    mp.replicas !== null &&
    !surge &&
    ((capacity !== null && capacity !== mp.replicas) ||
      (activeInstances !== null && activeInstances !== mp.replicas) ||
      desiredCondition?.status === 'False' ||
      scalingPhase ||
      joining > 0);
  if (scaling && mp.replicas !== null) {
    // Ready AMPMs is what the pool really has; Azure's count includes instances still booting.
    const current = amp?.replicas ?? activeInstances ?? mp.statusReplicas;
    const benign = amp?.ready === true && amp ? findCondition(amp.conditions, 'Ready')?.status === 'False' : false;
    drafts.push({
      code: 'scaling',
      severity: 'info',
      summary: scalingSummary(
        mp.replicas,
        current,
        capacity,
        activeInstances,
        desiredCondition,
        scalingPhase ? mp.phase : null,
        joining,
      ),
      detail: `Desired ${mp.replicas}, VMSS capacity ${capacity ?? 'unknown'}, Azure instances ${activeInstances ?? 'unknown'}, ready AMPMs ${amp?.replicas ?? 'unknown'}, MachinePool phase ${mp.phase ?? 'unset'}${joining ? `, ${plural(joining, 'new instance')} not yet a ready AMPM in the AzureMachinePool list` : ''}.${benign ? ' The AzureMachinePool Ready condition is False while status.ready is true: expected while scaling on CAPZ ≥ v1.20, and harmless (the gate reads status.ready).' : ''}`,
      suggestedAction:
        'None while it converges. If it does not within a few minutes, look for failed instances or quota errors.',
      derivedSince:
        desiredCondition?.status === 'False' ? (desiredCondition.lastTransitionTime ?? undefined) : undefined,
    });
  }

  if (rollingOut) {
    const total = model.azure.state === 'ok' ? model.azure.instances.length : model.ampms.length;
    drafts.push({
      code: 'model-rollout',
      severity: 'info',
      summary: `Rolling model update: ${total - outdated} of ${total} instances on the latest model.`,
      detail: `${outdated ? `${plural(outdated, 'instance')} not on the latest scale set model. ` : ''}CAPZ surges capacity above replicas (maxSurge) and then deletes old AMPMs by its delete policy${surge ? `; capacity ${capacity} > replicas ${mp.replicas} is that surge` : ''}.`,
      suggestedAction: 'None while it progresses.',
      derivedSince: modelCondition,
    });
  }

  if (drift.some((d) => d.kind === 'order-only')) {
    const sorts = capzSortsList(model.capzVersion) === true;
    drafts.push({
      code: 'order-only',
      severity: 'info',
      summary:
        "The AzureMachinePool list holds the MachinePool list's IDs in another order: CAPI rewrites its list and resets its counts on every reorder.",
      detail: `CAPI compares the two lists in order, so it copies a reordered list as a change and sets the MachinePool's v1beta1 ready and available replicas to 0 until its next reconcile: the phase and the replica metrics flap. No instance is missing. CAPZ sorts the list since v1.23.0 (#6011); before, its order followed the controller's cache.${sorts ? ` This pool's CAPZ (${model.capzVersion}) sorts it already, so something else reorders the list.` : ''}`,
      suggestedAction: sorts
        ? 'Find what rewrites the AzureMachinePool spec.providerIDList (kubectl get azuremachinepool --show-managed-fields). No resync is needed.'
        : 'Upgrade CAPZ to v1.23 or later. No resync is needed.',
    });
  }

  // Drift that no other finding explains still gets a sentence: an empty diagnosis would rank the pool below healthy ones.
  if (!drafts.some((d) => EXPLAINS_DRIFT.has(d.code))) {
    const unexplained = drift.filter((d) => counted(d.kind));
    if (unexplained.length) {
      const ids = new Set(unexplained.map((d) => d.providerID)).size;
      // In DRIFT_WORDS' order: what the autoscaler sees first.
      const parts = (Object.keys(DRIFT_WORDS) as CountedKind[]).flatMap((kind) => {
        const n = unexplained.filter((d) => d.kind === kind).length;
        return n ? [DRIFT_WORDS[kind](n)] : [];
      });
      const worst = unexplained.reduce(
        (w, d) => (SEVERITY_RANK[d.severity] > SEVERITY_RANK[w] ? d.severity : w),
        unexplained[0]?.severity ?? 'info',
      );
      drafts.push({
        code: 'sources-disagree',
        severity: worst,
        summary: `Sources disagree on ${plural(ids, 'instance')}: ${parts.join('; ')}.`,
        detail: `poolscope found no cause it knows of for this: the AzureMachinePool is ${amp?.ready === true ? 'ready' : amp ? 'not ready' : 'missing'}, nothing failed, the pool is not scaling, paused or rolling out. Differences like these normally close within a reconcile (CAPZ requeues every 30 s; CAPI copies the list while the AzureMachinePool is ready). The ProviderID drift table shows each instance.`,
        suggestedAction:
          'Wait a few minutes. If it does not clear, look at the CAPZ and CAPI controller logs for this pool; a reconcile trigger is safe while the AzureMachinePool is ready.',
        derivedSince: unexplained.reduce<string | undefined>(
          (min, d) => (d.since !== null && (min === undefined || d.since < min) ? d.since : min),
          undefined,
        ),
      });
    }
  }

  // CAPI's gate closed while the lists still agree: nothing waits behind it yet, but the badge says "not ready" and
  // the diagnosis should say why, not "healthy".
  if (
    amp &&
    gateClosed(model) &&
    !drafts.some((d) => EXPLAINS_DRIFT.has(d.code) || d.code === 'case-mismatch' || d.code === 'sources-disagree')
  ) {
    drafts.push({
      code: 'gate-closed',
      severity: 'info',
      summary: `AzureMachinePool not ready (${notReadyCause(model, failed)}): CAPI copies no list until it is; the lists agree, so nothing waits yet.`,
      detail: `CAPI copies the AzureMachinePool's spec.providerIDList into the MachinePool only while its status.ready is true; it is ${amp.ready === null ? 'unset' : 'false'}. Both lists hold the same IDs now. An instance that comes or goes meanwhile stays out of (or in) the MachinePool list until the AzureMachinePool is ready again.${versionText}`,
      suggestedAction:
        'None while nothing waits. If it stays not ready, look at the AzureMachinePool conditions and the CAPZ controller logs.',
      derivedSince: sinceOfCondition(model, 'Ready', 'False'),
    });
  }

  const allRead = model.azure.state === 'ok' && model.workload.state === 'ok';
  if (drafts.length === 0 && drift.length === 0 && allRead) {
    // Instances that came or went since Azure's last read agree with it only once it is read again.
    const unconfirmed = joined.filter((j) => awaitsAzureRead(j, model)).length;
    drafts.push({
      code: 'healthy',
      severity: 'info',
      summary: unconfirmed
        ? `Healthy: every source agrees, Azure up to its last read; ${plural(unconfirmed, 'instance')} came or went since.`
        : 'Healthy: every source agrees.',
      detail: `Azure, the AzureMachinePool, the MachinePool, the AMPMs, the Machines and the Nodes list the same instances.${unconfirmed ? ` Azure's last read predates ${unconfirmed === 1 ? 'the AMPM of 1 instance, made or deleted' : `the AMPMs of ${unconfirmed} instances, made or deleted`} since; its next read confirms ${unconfirmed === 1 ? 'it' : 'them'}.` : ''}`,
      suggestedAction: 'None.',
    });
  }

  const prev = opts.previous ? new Map(opts.previous.map((f) => [f.code, f.since])) : null;
  const findings = drafts.map(({ derivedSince: told, warnFor, ...f }): Finding => {
    // A condition's time comes from the API server's clock: one ahead of poolscope's would date the finding in the
    // future ("frozen for 0 s" while it counts up to it); it started no later than now, when it was seen.
    const derivedSince = told !== undefined && (toMs(told) ?? -Infinity) > nowMs ? opts.now : told;
    let since: string | undefined;
    if (prev?.has(f.code)) since = prev.get(f.code) ?? derivedSince;
    else since = derivedSince ?? (prev ? opts.now : undefined);
    const found = since ? { ...f, since } : f;
    return warnFor === undefined ? found : escalated(found, warnFor, nowMs);
  });
  return findings.sort(
    (a, b) =>
      SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] ||
      FINDING_ORDER.indexOf(a.code) - FINDING_ORDER.indexOf(b.code),
  );
}
