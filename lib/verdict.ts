// The resync verdict: whether a reconcile trigger or a MachinePool-list repair can help this pool, and why
// not when it cannot (docs/domain.md, "Triggering a reconcile from outside" and "What a resync can and cannot do").

import { aksResyncVerdict } from './aks-verdict';
import { INFRA_KINDS, type DriftItem, type ResyncVerdict, type SourceState } from './api-types';
import { gateClosed, listDiff } from './pool-lists';
import { plural } from './format';
import type { JoinedId } from './join';
import { isPaused, type PoolModel } from './pool-model';

/** Why a reconcile cannot help while the scale set is missing (docs/domain.md, "S17. Scale set deleted out of band"). */
const VMSS_GONE =
  'The scale set does not exist in Azure. CAPZ re-creates it from the AzureMachinePool spec on its next reconcile and then deletes the Machines of the old instances; a trigger would only hasten that by seconds. Escalate instead: find out who deleted it.';

/**
 * The IDs a copy would add whose instance has no Node: failed in Azure, or not joined yet. The autoscaler takes
 * each for a node still registering (docs/domain.md, "cluster-autoscaler and the MachinePool list").
 */
function addedWithoutNode(add: readonly string[], joined: readonly JoinedId[]): string[] {
  const adding = new Set(add);
  return joined.flatMap((j) => {
    const id = j.raw.amp;
    if (id === null || !adding.has(id)) return [];
    return j.node === null || j.instance?.provisioningState === 'Failed' ? [id] : [];
  });
}

function withoutNodeSentence(ids: readonly string[]): string {
  if (!ids.length) return '';
  const one = ids.length === 1;
  return ` It adds ${plural(ids.length, 'instance')} without a Node (failed or not joined yet): cluster-autoscaler counts ${one ? 'it' : 'them'} as ${one ? 'a node' : 'nodes'} still registering and removes ${one ? 'it' : 'them'} after its max-node-provision-time (15 min by default), through Machine deletion.`;
}

/** Why poolscope will not resync this pool at all, whatever its infra kind; null when it may. */
function refusal(model: PoolModel, kube: SourceState | undefined): string | null {
  const infra = model.amp ?? model.aks?.infra ?? null;
  const kind = INFRA_KINDS[model.flavour].kind;
  if (kube?.state === 'unreachable') {
    return `poolscope cannot reach management cluster ${model.ref.context}: it can neither check the pool afresh nor write to it until it can.`;
  }
  if (isPaused(model) || infra?.pausedAnnotation) {
    return 'The pool is paused; controllers ignore it, and poolscope never unpauses as a side effect.';
  }
  if (model.mp.deleting) return 'The MachinePool is being deleted.';
  if (model.cluster?.deleting) return 'The Cluster is being deleted.';
  if (infra?.deleting) return `The ${kind} is being deleted.`;
  if (!infra) return `No ${kind} was found for this MachinePool.`;
  return null;
}

export function resyncVerdict(
  model: PoolModel,
  joined: readonly JoinedId[],
  drift: readonly DriftItem[],
  kube?: SourceState,
  readyDrops = 0,
): ResyncVerdict {
  const blocked = refusal(model, kube);
  if (model.flavour !== 'self-managed') return aksResyncVerdict(model, drift, blocked, readyDrops);
  const { add, remove } = listDiff(model);
  const closed = gateClosed(model);
  const unreachable = model.workload.state === 'unreachable';
  const differ = add.length > 0 || remove.length > 0;
  const has = (kind: DriftItem['kind']) => drift.some((d) => d.kind === kind);

  // reconcile: an annotation bump on the AMP and MP re-runs CAPZ and CAPI, but cannot pass the gate.
  let reconcile: ResyncVerdict['reconcile'];
  if (blocked) {
    reconcile = { allowed: false, canHelp: false, reason: blocked };
  } else if (model.azure.state === 'not-found') {
    reconcile = { allowed: true, canHelp: false, reason: VMSS_GONE };
  } else if (unreachable) {
    reconcile = {
      allowed: true,
      canHelp: false,
      reason:
        'poolscope cannot read the workload cluster; if CAPI cannot either, it stops before its readiness gate and a reconcile changes nothing until the cluster is back.',
    };
  } else if (model.amp && model.amp.providerIDList.length === 0 && (model.mp.replicas ?? 0) > 0) {
    reconcile = {
      allowed: true,
      canHelp: true,
      reason:
        'Re-runs CAPZ so it lists the AMPMs again and repopulates the empty list (harmless; CAPZ may wait out its 10 s debounce).',
    };
  } else if (closed) {
    reconcile = {
      allowed: true,
      canHelp: false,
      reason:
        "The AzureMachinePool is not ready: a reconcile re-runs the controllers but cannot get past CAPI's readiness gate.",
    };
  } else if (differ) {
    reconcile = {
      allowed: true,
      canHelp: true,
      reason: 'The gate is open: CAPI copies the list on its next reconcile, and a trigger makes that happen now.',
    };
  } else if (has('ghost-in-azuremachinepool') || has('missing-from-azuremachinepool')) {
    reconcile = {
      allowed: true,
      canHelp: true,
      reason:
        'The AzureMachinePool list lags Azure: a reconcile makes CAPZ re-read the scale set (after its 10 s debounce).',
    };
  } else {
    reconcile = { allowed: true, canHelp: false, reason: 'Nothing is out of date that a reconcile would fix.' };
  }

  // sync-provider-ids: write exactly what CAPI would copy, only when that can't make things worse.
  let syncReason: string | null = blocked;
  if (!syncReason && unreachable)
    syncReason =
      "poolscope cannot read the workload cluster's Nodes, so it cannot check the list against them (and if CAPI cannot reach it either, it cannot maintain nodeRefs for a rewritten list); restore connectivity first.";
  if (!syncReason && model.azure.state === 'not-found')
    syncReason = 'The scale set does not exist in Azure: every ID in both lists points at an instance that is gone.';
  if (!syncReason && model.amp && model.amp.providerIDList.length === 0 && (model.mp.replicas ?? 0) > 0) {
    syncReason = 'The AzureMachinePool list is empty while replicas > 0; copying it would drop every instance.';
  }
  if (!syncReason && has('case-mismatch')) {
    syncReason =
      'Sources disagree on the case of some providerIDs; rewriting the list could make CAPI delete Nodes it believes retired.';
  }
  if (!syncReason && model.azure.state !== 'ok' && model.azure.state !== 'not-found') {
    syncReason =
      'Azure could not be read, so poolscope cannot check that every ID in the AzureMachinePool list still exists.';
  }
  const otherInAmp = drift.filter((d) => d.kind === 'other-scale-set' && d.sources.amp !== null).length;
  if (!syncReason && otherInAmp) {
    syncReason = `The AzureMachinePool list holds ${plural(otherInAmp, 'ID')} of another scale set; copying it would make CAPI take ${otherInAmp === 1 ? 'that instance' : 'those instances'} as this pool's.`;
  }
  if (!syncReason && has('ghost-in-azuremachinepool')) {
    const n = drift.filter((d) => d.kind === 'ghost-in-azuremachinepool').length;
    syncReason = `The AzureMachinePool list holds ${plural(n, 'ID')} absent from Azure; copying it would add ghosts.`;
  }
  if (!syncReason && !differ)
    syncReason = 'The MachinePool list already holds the same IDs as the AzureMachinePool list.';

  const othersLeaving = drift.filter(
    (d) => d.kind === 'other-scale-set' && d.sources.mp !== null && d.sources.amp === null,
  ).length;
  const counts = `${add.length} to add, ${remove.length} to remove${othersLeaving ? `, ${othersLeaving} of them of another scale set, whose Node${othersLeaving === 1 ? '' : 's'} CAPI may then delete once as retired (${othersLeaving === 1 ? 'it registers' : 'they register'} again)` : ''}`;
  const lists = { wouldAdd: add, wouldRemove: remove, wouldAddWithoutNode: addedWithoutNode(add, joined) };
  const also = withoutNodeSentence(lists.wouldAddWithoutNode);
  const syncProviderIds: ResyncVerdict['syncProviderIds'] = syncReason
    ? { allowed: false, canHelp: false, reason: syncReason, ...lists }
    : closed
      ? {
          allowed: true,
          canHelp: true,
          reason: `CAPI will not copy the list while the AzureMachinePool is not ready; this writes exactly what it would copy (${counts}).${also}`,
          ...lists,
        }
      : {
          allowed: true,
          canHelp: true,
          reason: `CAPI copies the list itself on its next reconcile; writing it now has the same effect (${counts}).${also}`,
          ...lists,
        };

  let recommended: ResyncVerdict['recommended'] = null;
  if (closed && syncProviderIds.allowed && syncProviderIds.canHelp) recommended = 'sync-provider-ids';
  else if (reconcile.allowed && reconcile.canHelp) recommended = 'reconcile';
  else if (syncProviderIds.allowed && syncProviderIds.canHelp) recommended = 'sync-provider-ids';

  return { recommended, reconcile, syncProviderIds };
}
