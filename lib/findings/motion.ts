// Rules of a pool in motion: scaling towards its replica count, or rolling a new scale set model out.

import { findCondition, type Condition } from '../capi-model';
import { awaitsAzureRead } from '../drift';
import { plural } from '../format';
import { NODE_JOIN_GRACE_MS, sinceOfCondition, type Context, type Draft } from './context';

/** Azure provisioning states of an instance on its way into the pool (not failed, not leaving). */
const ARRIVING_STATES: ReadonlySet<string> = new Set(['Creating', 'Updating', 'Succeeded']);

/** The counts and signals of a pool's motion, which both rules read: computed once per analysis. */
interface Motion {
  capacity: number | null;
  activeInstances: number | null;
  outdated: number;
  modelCondition: string | undefined;
  rollingOut: boolean;
  surge: boolean;
  desiredCondition: Condition | null;
  scalingPhase: boolean;
  joining: number;
  scaling: boolean;
}

const motions = new WeakMap<Context, Motion>();

function motionOf(c: Context): Motion {
  const hit = motions.get(c);
  if (hit) return hit;
  const { model, joined, nowMs, mp, amp } = c;
  const capacity = (model.azure.state === 'ok' ? model.azure.vmss?.capacity : null) ?? null;
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
  const m = {
    capacity,
    activeInstances,
    outdated,
    modelCondition,
    rollingOut,
    surge,
    desiredCondition,
    scalingPhase,
    joining,
    scaling,
  };
  motions.set(c, m);
  return m;
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

/** Scaling towards the desired count, and what still differs. */
export function scalingFinding(c: Context): Draft | null {
  const { mp, amp } = c;
  const { scaling, capacity, activeInstances, desiredCondition, scalingPhase, joining } = motionOf(c);
  if (!scaling || mp.replicas === null) return null;
  // Ready AMPMs is what the pool really has; Azure's count includes instances still booting.
  const current = amp?.replicas ?? activeInstances ?? mp.statusReplicas;
  const benign = amp?.ready === true && amp ? findCondition(amp.conditions, 'Ready')?.status === 'False' : false;
  return {
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
    derivedSince: desiredCondition?.status === 'False' ? (desiredCondition.lastTransitionTime ?? undefined) : undefined,
  };
}

/** Instances not on the latest scale set model: a rolling update. */
export function modelRollout(c: Context): Draft | null {
  const { model, mp } = c;
  const { rollingOut, outdated, surge, capacity, modelCondition } = motionOf(c);
  if (!rollingOut) return null;
  const total = model.azure.state === 'ok' ? model.azure.instances.length : model.ampms.length;
  return {
    code: 'model-rollout',
    severity: 'info',
    summary: `Rolling model update: ${total - outdated} of ${total} instances on the latest model.`,
    detail: `${outdated ? `${plural(outdated, 'instance')} not on the latest scale set model. ` : ''}CAPZ surges capacity above replicas (maxSurge) and then deletes old AMPMs by its delete policy${surge ? `; capacity ${capacity} > replicas ${mp.replicas} is that surge` : ''}.`,
    suggestedAction: 'None while it progresses.',
    derivedSince: modelCondition,
  };
}
