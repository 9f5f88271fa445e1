// The diagnosis: ordered findings in plain words for one pool, from its model and drift (domain.md §7).
// Each finding says what is wrong, the evidence, since when (when known) and what an operator can do.

import { CAPZ_READINESS_TEXT, capzReadiness } from './capz-version';
import type { DriftItem, Finding, FindingCode } from './api-types';
import { SEVERITY_RANK } from './api-types';
import { isRunning } from './drift';
import { formatDuration, listSome, plural } from './format';
import type { JoinedId } from './join';
import { findCondition, isPaused, type Condition, type PoolModel } from './pool-model';
import { toMs } from './unstructured';

export const NODE_JOIN_GRACE_MS = 10 * 60 * 1000;

/** Tie-break order among findings of equal severity. */
export const FINDING_ORDER: readonly FindingCode[] = [
  'vmss-not-found',
  'workload-cluster-unreachable',
  'readiness-gate-frozen',
  'paused',
  'vmss-failed',
  'instance-failed',
  'node-not-joined',
  'empty-infra-list',
  'replicas-unknown',
  'externally-managed-replicas',
  'scaling',
  'model-rollout',
  'healthy',
];

export interface DiagnosisOptions {
  now: string;
  /** The previous analysis' findings, to carry `since` forward. */
  previous?: readonly Finding[] | null;
}

/**
 * A finding's summary as of `now`: the stored summary has no duration (it would change every second), so the
 * freeze's length is put in when it is shown — "frozen for 14 min: …".
 */
export function headline(f: Pick<Finding, 'code' | 'summary' | 'since'>, now: string): string {
  const since = toMs(f.since ?? null);
  const nowMs = toMs(now);
  if (f.code !== 'readiness-gate-frozen' || since === null || nowMs === null) return f.summary;
  return f.summary.replace(/^MachinePool providerIDList frozen:/, `MachinePool providerIDList frozen for ${formatDuration(nowMs - since)}:`);
}

/** A pool summary's worst finding as {@link headline} says it, with its `since` from the summary's active findings. */
export function worstHeadline(worst: Pick<Finding, 'code' | 'summary'>, active: readonly { code: string; since: string | null }[] | undefined, now: string): string {
  const since = active?.find((f) => f.code === worst.code)?.since ?? undefined;
  return headline({ ...worst, ...(since ? { since } : {}) }, now);
}

/** Whether CAPI's readiness gate is closed: `external.IsReady` reads only `status.ready` (domain.md §1.2). */
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
const listDiffs = new WeakMap<readonly string[], { to: readonly string[]; diff: { add: string[]; remove: string[] } }>();

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
export function listsDiffer(model: PoolModel): boolean {
  if (model.amp === null) return false;
  const { add, remove } = listDiff(model);
  return add.length > 0 || remove.length > 0;
}

interface FailedInstance {
  name: string;
  code: string | null;
}

function failedInstances(model: PoolModel): FailedInstance[] {
  if (model.azure.state === 'ok') {
    return model.azure.instances
      .filter((i) => i.provisioningState === 'Failed')
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
  desired: number, current: number | null, capacity: number | null, active: number | null,
  desiredCondition: Condition | null, phase: string | null,
): string {
  if (current !== null && current !== desired) return `Scaling from ${current} to ${desired} replicas.`;
  if ((capacity !== null && capacity !== desired) || (active !== null && active !== desired)) {
    return `Scaling to ${desired} replicas: scale set capacity ${capacity ?? 'unknown'}, ${active ?? 'unknown'} instances in Azure.`;
  }
  const signals = [
    desiredCondition?.status === 'False' ? `the AzureMachinePool's ScaleSetDesiredReplicas is False${desiredCondition.reason ? ` (${desiredCondition.reason})` : ''}` : null,
    phase ? `the MachinePool phase is ${phase}` : null,
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

type Draft = Omit<Finding, 'since'> & { derivedSince?: string };

export function diagnose(
  model: PoolModel,
  joined: readonly JoinedId[],
  drift: readonly DriftItem[],
  opts: DiagnosisOptions,
): Finding[] {
  const nowMs = toMs(opts.now) ?? 0;
  const readiness = capzReadiness(model.capzVersion);
  const versionText = readiness ? ` ${CAPZ_READINESS_TEXT[readiness]}` : '';
  const failed = failedInstances(model);
  const invisible = drift.filter((d) => d.kind === 'missing-from-machinepool').length;
  const drafts: Draft[] = [];
  const { mp, amp } = model;
  const vmssName = model.azure.state === 'ok' ? model.azure.vmss.name : (model.scaleSet?.scaleSet ?? amp?.name ?? '?');

  if (model.azure.state === 'not-found') {
    drafts.push({
      code: 'vmss-not-found',
      severity: 'critical',
      summary: `Scale set ${vmssName} does not exist in Azure.`,
      detail: `Azure answered: ${model.azure.error}. Every ID in the lists points at an instance that is gone. CAPZ recreates a missing scale set from the AzureMachinePool spec on its next reconcile, after which the old AMPMs' Machines are deleted.`,
      suggestedAction: 'Find out who deleted the scale set (Azure activity log). If CAPZ does not recreate it within a few minutes, check the CAPZ controller logs and escalate.',
    });
  }

  if (model.workload.state === 'unreachable') {
    const frozen = listsDiffer(model) ? ' The MachinePool list differs from the AzureMachinePool list and stays frozen until then.' : '';
    drafts.push({
      code: 'workload-cluster-unreachable',
      severity: 'critical',
      summary: `Workload cluster ${mp.clusterName ?? ''} is unreachable: CAPI cannot update this pool.`.replace('  ', ' '),
      detail: `Reading Nodes failed: ${model.workload.error}. Since CAPI v1.8 the MachinePool controller lists the workload cluster's Nodes before its readiness gate, so it stops there: spec.providerIDList, status.replicas and nodeRefs are not updated, even with the AzureMachinePool ready.${frozen}`,
      suggestedAction: `Check the ${mp.clusterName ?? '<cluster>'}-kubeconfig Secret (key "value") in namespace ${mp.namespace} and whether the workload API server answers.`,
    });
  }

  if (isPaused(model) || amp?.pausedAnnotation) {
    const by: string[] = [];
    if (model.cluster?.paused) by.push(`Cluster ${model.cluster.name} is paused`);
    if (mp.pausedAnnotation) by.push('the MachinePool has the cluster.x-k8s.io/paused annotation');
    if (amp?.pausedAnnotation) by.push('the AzureMachinePool has the cluster.x-k8s.io/paused annotation (CAPZ skips it; since CAPI v1.9 this alone does not stop the CAPI MachinePool controller)');
    drafts.push({
      code: 'paused',
      severity: 'warning',
      summary: 'Reconciliation is paused: drift is expected and will grow until it is unpaused.',
      detail: `${by.join('; ')}. Paused controllers do nothing, so Azure changes (evictions, VMSS autoscale) are not reflected. cluster-autoscaler does not scale down a MachinePool with the paused annotation.`,
      suggestedAction: 'Unpause when the operation that paused it (e.g. clusterctl move) is over. poolscope never unpauses as a side effect.',
    });
  }

  if (amp && gateClosed(model) && listsDiffer(model)) {
    const cause = notReadyCause(model, failed);
    const { add, remove } = listDiff(model);
    const missing = add.length;
    const extra = remove.length;
    const diff = [missing ? `${missing} to add` : '', extra ? `${extra} to remove` : ''].filter(Boolean).join(', ');
    const sentence2 = invisible ? ` The autoscaler cannot see ${plural(invisible, 'instance')}.` : '';
    const action = readiness === 'pre-1.20'
      ? 'Upgrade CAPZ to v1.20 or later (#5537). Until then the list unfreezes only when every AMPM is Ready.'
      : failed.length
        ? 'Replace the failed instances (delete their Machines, or let a MachineHealthCheck do it); the gate reopens when the scale set leaves Failed.'
        : 'Wait for the scale set to settle; if it does not, look at the AzureMachinePool conditions and CAPZ logs.';
    drafts.push({
      code: 'readiness-gate-frozen',
      severity: 'critical',
      summary: `MachinePool providerIDList frozen: AzureMachinePool not ready (${cause}).${sentence2}`,
      detail: `CAPI copies the AzureMachinePool's spec.providerIDList into the MachinePool only while the AzureMachinePool's status.ready is true; it is ${amp.ready === null ? 'unset' : 'false'}, and the lists differ (${diff}). Until it copies, cluster-autoscaler, nodeRefs and the uninitialized taint removal work from the stale list.${versionText}`,
      suggestedAction: `${action} A reconcile trigger cannot get past the gate; copying the list with poolscope's sync-provider-ids can, when its safety checks pass.`,
      derivedSince: sinceOfCondition(model, 'Ready', 'False'),
    });
  }

  const vmssFailed = model.azure.state === 'ok'
    ? model.azure.vmss.provisioningState === 'Failed'
    : amp?.provisioningState === 'Failed';
  if (vmssFailed) {
    const frozen = gateClosed(model);
    drafts.push({
      code: 'vmss-failed',
      severity: frozen ? 'critical' : 'warning',
      summary: `Scale set ${vmssName} is in provisioningState Failed${failed.length ? ` (${describeFailures(failed)})` : ''}.`,
      detail: frozen
        ? `The AzureMachinePool is not ready because of it, which closes CAPI's readiness gate.${versionText}`
        : `The AzureMachinePool stays ready, so cluster-autoscaler gets no signal that the scale-up failed and may keep retrying (CAPZ #5860).${versionText}`,
      suggestedAction: 'Read the instance error codes below. For capacity or quota errors lower replicas or max size, or change zones or VM size; otherwise replace the failed instances.',
      derivedSince: sinceOfCondition(model, 'ScaleSetRunning', 'False'),
    });
  }

  if (failed.length) {
    drafts.push({
      code: 'instance-failed',
      severity: 'warning',
      summary: `${describeFailures(failed)}.`,
      detail: `Failed: ${listSome(failed.map((f) => (f.code ? `${f.name} (${f.code})` : f.name)), 10)}. Their AMPMs never become Ready, so the AzureMachinePool's status.replicas stays below spec.replicas.`,
      suggestedAction: 'Delete the Machine of each failed instance (or let a MachineHealthCheck do it); CAPZ deletes the VM and the scale set replaces it. A resync cannot repair a failed VM.',
    });
  }

  if (model.workload.state === 'ok') {
    const stuck = joined.flatMap((j) => {
      if (!isRunning(j) || j.raw.node !== null || j.instance?.provisioningState === 'Failed') return [];
      const created = j.instance?.createdAt ?? j.ampm?.createdAt ?? null;
      return created !== null && nowMs - created > NODE_JOIN_GRACE_MS ? [{ j, created }] : [];
    });
    if (stuck.length) {
      const oldest = Math.min(...stuck.map((s) => s.created));
      drafts.push({
        code: 'node-not-joined',
        severity: 'warning',
        summary: `${plural(stuck.length, 'instance')} running for over 10 min without a Node.`,
        detail: `No Node has the providerID of ${listSome(stuck.map((s) => s.j.instance?.name ?? s.j.key), 10)}. The oldest was created at ${new Date(oldest).toISOString()}. Their AMPMs stay NodeProvisioning and never Ready; cluster-autoscaler treats them as unregistered and removes them after max-node-provision-time (15 min by default).`,
        suggestedAction: 'Look at the VM boot diagnostics and cloud-init/kubeadm logs. Delete the Machine (or use a MachineHealthCheck) to replace it. A resync cannot help.',
        derivedSince: new Date(oldest + NODE_JOIN_GRACE_MS).toISOString(),
      });
    }
  }

  if (amp && amp.providerIDList.length === 0 && (mp.replicas ?? 0) > 0) {
    drafts.push({
      code: 'empty-infra-list',
      severity: 'warning',
      summary: `AzureMachinePool providerIDList is empty while the pool wants ${mp.replicas} replicas.`,
      detail: 'CAPI refuses to copy an empty list when replicas is not 0 ("Retrieved empty spec.providerIDList"), so the MachinePool keeps its old list. This is normal for a short while after a controller restart or clusterctl move, before CAPZ lists the AMPMs again.',
      suggestedAction: 'Usually transient. If it persists, check the CAPZ controller; a reconcile trigger is harmless here.',
    });
  }

  if (mp.replicas === null) {
    drafts.push({
      code: 'replicas-unknown',
      severity: 'warning',
      summary: 'MachinePool spec.replicas is not set, so the desired size is unknown.',
      detail: 'The CAPI webhook normally defaults it; with it unset CAPI never reports Running or Scaling, and CAPZ may fail while comparing replica counts.',
      suggestedAction: 'Set spec.replicas explicitly (kubectl scale machinepool …), and check that the CAPI webhooks are running.',
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
  const activeInstances = model.azure.state === 'ok'
    ? model.azure.instances.filter((i) => i.provisioningState !== 'Deleting' && i.provisioningState !== 'Deleted').length
    : null;
  const outdated = model.azure.state === 'ok'
    ? model.azure.instances.filter((i) => i.latestModelApplied === false).length
    : model.ampms.filter((m) => m.latestModelApplied === false).length;
  const modelCondition = sinceOfCondition(model, 'ScaleSetModelUpdated', 'False');
  // Instances not on the latest model are the rollout. The condition alone is not: before v1.20 CAPZ sets it
  // False whenever the scale set is Updating, a plain scale-up included (domain.md §2.3).
  const rollingOut = outdated > 0;
  const surge = rollingOut && capacity !== null && mp.replicas !== null && capacity > mp.replicas;
  const desiredCondition = amp ? findCondition(amp.conditions, 'ScaleSetDesiredReplicas') : null;
  const scalingPhase = mp.phase === 'ScalingUp' || mp.phase === 'ScalingDown' || mp.phase === 'Scaling';
  const scaling = mp.replicas !== null && !surge && (
    (capacity !== null && capacity !== mp.replicas) ||
    (activeInstances !== null && activeInstances !== mp.replicas) ||
    desiredCondition?.status === 'False' || scalingPhase
  );
  if (scaling && mp.replicas !== null) {
    // Ready AMPMs is what the pool really has; Azure's count includes instances still booting.
    const current = amp?.replicas ?? activeInstances ?? mp.statusReplicas;
    const benign = amp?.ready === true && amp ? findCondition(amp.conditions, 'Ready')?.status === 'False' : false;
    drafts.push({
      code: 'scaling',
      severity: 'info',
      summary: scalingSummary(mp.replicas, current, capacity, activeInstances, desiredCondition, scalingPhase ? mp.phase : null),
      detail: `Desired ${mp.replicas}, VMSS capacity ${capacity ?? 'unknown'}, Azure instances ${activeInstances ?? 'unknown'}, ready AMPMs ${amp?.replicas ?? 'unknown'}, MachinePool phase ${mp.phase ?? 'unset'}.${benign ? ' The AzureMachinePool Ready condition is False while status.ready is true: expected while scaling on CAPZ ≥ v1.20, and harmless (the gate reads status.ready).' : ''}`,
      suggestedAction: 'None while it converges. If it does not within a few minutes, look for failed instances or quota errors.',
      derivedSince: desiredCondition?.status === 'False' ? (desiredCondition.lastTransitionTime ?? undefined) : undefined,
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

  const allRead = model.azure.state === 'ok' && model.workload.state === 'ok';
  if (drafts.length === 0 && drift.length === 0 && allRead) {
    drafts.push({
      code: 'healthy',
      severity: 'info',
      summary: 'Healthy: every source agrees.',
      detail: 'Azure, the AzureMachinePool, the MachinePool, the AMPMs, the Machines and the Nodes list the same instances.',
      suggestedAction: 'None.',
    });
  }

  const prev = opts.previous ? new Map(opts.previous.map((f) => [f.code, f.since])) : null;
  const findings = drafts.map(({ derivedSince: told, ...f }): Finding => {
    // A condition's time comes from the API server's clock: one ahead of poolscope's would date the finding in the
    // future ("frozen for 0 s" while it counts up to it); it started no later than now, when it was seen.
    const derivedSince = told !== undefined && (toMs(told) ?? -Infinity) > nowMs ? opts.now : told;
    let since: string | undefined;
    if (prev?.has(f.code)) since = prev.get(f.code) ?? derivedSince;
    else since = derivedSince ?? (prev ? opts.now : undefined);
    return since ? { ...f, since } : f;
  });
  return findings.sort(
    (a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] || FINDING_ORDER.indexOf(a.code) - FINDING_ORDER.indexOf(b.code),
  );
}
