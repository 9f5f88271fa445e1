// What every diagnosis rule reads, computed once per analysis: the pool's model, its joined IDs and drift, and
// the facts several findings share (the CAPZ version's readiness rule, failed instances, instances without a
// Node). A rule is one finding's test: it returns a draft of that finding, or null (./rules lists them all).

import { CAPZ_READINESS_TEXT, capzReadiness } from '../capz-version';
import type { DriftItem, Finding, FindingCode, SourceState } from '../api-types';
import { awaitsAzureRead, isRunning } from '../drift';
import { plural } from '../format';
import type { JoinedId } from '../join';
import { findCondition } from '../capi-model';
import type { PoolModel } from '../pool-model';
import { toMs } from '../unstructured';
import { aksFactsOf, type AksFacts } from './aks-context';

export const NODE_JOIN_GRACE_MS = 10 * 60 * 1000;

/** How long a frozen list while the pool scales on CAPZ before v1.20 stays a warning (see frozenWhileScaling). */
export const FROZEN_CRITICAL_AFTER_MS = 10 * 60 * 1000;

export interface DiagnosisOptions {
  now: string;
  /** How long a frozen list while the pool scales on CAPZ before v1.20 is a warning (FROZEN_CRITICAL_AFTER_MS). */
  frozenCriticalAfterMs?: number;
  /** The previous analysis' findings, to carry `since` forward. */
  previous?: readonly Finding[] | null;
  /** How poolscope reads the management cluster (ok when not given). */
  kube?: SourceState;
  /** When the infra object went not ready within the last hour (lib/flapping). */
  readyDrops?: readonly string[];
}

/** A finding before its `since` is settled; `warnFor`: a warning for that long from its start, then critical. */
export type Draft = Omit<Finding, 'since' | 'criticalFrom'> & { derivedSince?: string; warnFor?: number };

export interface FailedInstance {
  name: string;
  code: string | null;
}

export interface Context {
  model: PoolModel;
  mp: PoolModel['mp'];
  amp: PoolModel['amp'];
  joined: readonly JoinedId[];
  drift: readonly DriftItem[];
  opts: DiagnosisOptions;
  nowMs: number;
  /** The CAPZ version's readiness rule (capz-version's capzReadiness), and a sentence on it for details. */
  readiness: ReturnType<typeof capzReadiness>;
  versionText: string;
  failed: FailedInstance[];
  /** How many instances the autoscaler cannot see (not in the MachinePool list). */
  invisible: number;
  vmssName: string;
  vmssFailed: boolean;
  /** Running instances without a Node past the grace (unjoined). */
  stuck: { j: JoinedId; created: number }[];
  /** What an AKS pool's sources say (null for a self-managed pool). */
  aks: AksFacts | null;
}

/** One finding's rule. `afterOthers`: it reads which findings the others found, so it runs after them. */
export interface Rule {
  code: FindingCode;
  afterOthers?: true;
  find(c: Context, found: ReadonlySet<FindingCode>): Draft | null;
}

export function contextOf(
  model: PoolModel,
  joined: readonly JoinedId[],
  drift: readonly DriftItem[],
  opts: DiagnosisOptions,
): Context {
  const nowMs = toMs(opts.now) ?? 0;
  const readiness = capzReadiness(model.capzVersion);
  const { amp } = model;
  return {
    model,
    mp: model.mp,
    amp,
    joined,
    drift,
    opts,
    nowMs,
    readiness,
    versionText: readiness ? ` ${CAPZ_READINESS_TEXT[readiness]}` : '',
    failed: failedInstances(model, joined),
    invisible: drift.filter((d) => d.kind === 'missing-from-machinepool').length,
    vmssName:
      (model.azure.state === 'ok' ? model.azure.vmss?.name : null) ?? model.scaleSet?.scaleSet ?? amp?.name ?? '?',
    vmssFailed:
      model.azure.state === 'ok'
        ? model.azure.vmss?.provisioningState === 'Failed'
        : amp?.provisioningState === 'Failed',
    stuck: unjoined(model, joined, nowMs),
    aks: aksFactsOf(model),
  };
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

export function describeFailures(failed: readonly FailedInstance[]): string {
  const codes = [...new Set(failed.map((f) => f.code).filter((c): c is string => c !== null))];
  return `${plural(failed.length, 'instance')} failed${codes.length ? `: ${codes.join(', ')}` : ''}`;
}

/** The reasons the AzureMachinePool gives for not being ready: state, failed instances, False conditions. */
export function notReadyCause(model: PoolModel, failed: readonly FailedInstance[]): string {
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

export function sinceOfCondition(model: PoolModel, type: string, status: 'True' | 'False'): string | undefined {
  const c = model.amp ? findCondition(model.amp.conditions, type) : null;
  return c && c.status === status && c.lastTransitionTime ? c.lastTransitionTime : undefined;
}

/** An error message as a sentence: with one full stop at its end, however it came. */
export function asSentence(text: string): string {
  return /[.!?]$/.test(text.trimEnd()) ? text.trimEnd() : `${text.trimEnd()}.`;
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
export function scalingNow(model: PoolModel): boolean {
  const amp = model.amp;
  if (!amp) return false;
  const state = model.azure.state === 'ok' ? (model.azure.vmss?.provisioningState ?? null) : amp.provisioningState;
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
