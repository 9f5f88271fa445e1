// Rules of what Azure says of the scale set and its instances.

import type { DriftItem } from '../api-types';
import { formatDuration, listSome, plural } from '../format';
import type { JoinedId } from '../join';
import { gateClosed } from '../pool-lists';
import type { PoolModel } from '../pool-model';
import {
  asSentence,
  describeFailures,
  NODE_JOIN_GRACE_MS,
  sinceOfCondition,
  type Context,
  type Draft,
} from './context';

/** The scale set is gone from Azure: every ID in the lists points at nothing. */
export function vmssNotFound(c: Context): Draft | null {
  const { model, vmssName } = c;
  if (model.azure.state !== 'not-found') return null;
  return {
    code: 'vmss-not-found',
    severity: 'critical',
    summary: `Scale set ${vmssName} does not exist in Azure.`,
    detail: `Azure answered: ${asSentence(model.azure.error)} Every ID in the lists points at an instance that is gone. CAPZ recreates a missing scale set from the AzureMachinePool spec on its next reconcile, after which the old AMPMs' Machines are deleted.`,
    suggestedAction:
      'Find out who deleted the scale set (Azure activity log). If CAPZ does not recreate it within a few minutes, check the CAPZ controller logs and escalate.',
  };
}

/** The scale set in provisioningState Failed. */
export function vmssFailedFinding(c: Context): Draft | null {
  const { model, versionText, failed, vmssName, vmssFailed } = c;
  if (!vmssFailed) return null;
  const frozen = gateClosed(model);
  return {
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
  };
}

/** Failed instances: their AMPMs never become Ready. */
export function instanceFailed(c: Context): Draft | null {
  const { failed } = c;
  if (!failed.length) return null;
  return {
    code: 'instance-failed',
    severity: 'warning',
    summary: `${describeFailures(failed)}.`,
    detail: `Failed: ${listSome(
      failed.map((f) => (f.code ? `${f.name} (${f.code})` : f.name)),
      10,
    )}. Their AMPMs never become Ready, so the AzureMachinePool's status.replicas stays below spec.replicas.`,
    suggestedAction:
      'Delete the Machine of each failed instance (or let a MachineHealthCheck do it); CAPZ deletes the VM and the scale set replaces it. A resync cannot repair a failed VM.',
  };
}

/** Running instances whose Node never came. */
export function nodeNotJoined(c: Context): Draft | null {
  const { stuck } = c;
  if (!stuck.length) return null;
  const oldest = Math.min(...stuck.map((x) => x.created));
  return {
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
  };
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
export function goneFromAzureFinding(
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

/** Azure throttles or refuses the read of the scale set. */
export function azureUnread(c: Context): Draft | null {
  const { model, vmssName } = c;
  if (model.azure.state !== 'throttled' && model.azure.state !== 'unreachable') return null;
  const throttled = model.azure.state === 'throttled';
  const retry =
    model.azure.state === 'throttled' && model.azure.retryAfterSeconds !== null
      ? ` (it asked to wait ${model.azure.retryAfterSeconds} s)`
      : '';
  return {
    code: 'azure-unread',
    severity: 'warning',
    summary: throttled
      ? `Azure is throttling reads of scale set ${vmssName}${retry}: its instances and capacity are not known now.`
      : `Scale set ${vmssName} could not be read from Azure: its instances and capacity are not known now.`,
    detail: `Azure answered: ${asSentence(model.azure.error)} Without the scale set poolscope cannot see failed instances, ghosts or the capacity, so the drift shown compares the Kubernetes sources only.${throttled ? " Compute's limits count per subscription and region, shared with CAPZ and cluster-autoscaler: CAPZ's own reconciles fail meanwhile too, which delays the lists." : ''}`,
    suggestedAction: throttled
      ? 'poolscope waits out Retry-After for the whole subscription and region, and keeps to its share of the budget (POOLSCOPE_AZURE_BUDGET_SHARE). If it lasts, look for other heavy callers of the subscription.'
      : "Check poolscope's Azure credentials, its role on the subscription and its network reach; the fleet page's source bar has the subscription's error.",
  };
}
