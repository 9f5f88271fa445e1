// The resync verdict for an AKS pool (docs/domain.md, "What a resync can and cannot do for AKS pools"): a
// reconcile trigger on the infra object helps only while the gate is open, and a list copy never does, since the
// infra list freezes with the MachinePool's.

import type { DriftItem, ResyncVerdict } from './api-types';
import { aksFactsOf, type AksFacts } from './findings/aks-context';
import { FLAP_THRESHOLD } from './flapping';
import { gateClosed, listDiff } from './pool-lists';
import type { PoolModel } from './pool-model';

const NO_COPY =
  "For an AKS pool CAPZ computes the infra list only when a whole reconcile succeeds, so it freezes with the MachinePool's: copying it adds nothing during a freeze, and poolscope does not write an AKS pool's lists.";

/** Why a reconcile cannot help while CAPZ keeps the infra object not ready. */
function closedReason(a: AksFacts): string {
  if (a.failure)
    return `The agent pool failed in AKS${a.failure.code ? ` (${a.failure.code.slice(0, 64)})` : ''}: a reconcile cannot repair it, and CAPZ keeps the ${a.infraKind} not ready until AKS succeeds.`;
  if (a.operation || a.asoReady === 'reconciling' || a.asoReady === 'blocked' || a.asoBehind)
    return `An AKS operation runs: CAPZ keeps the ${a.infraKind} not ready until ASO reports the agent pool Ready, and a reconcile cannot get past CAPI's readiness gate or shorten the operation.`;
  return `The ${a.infraKind} is not ready: a reconcile re-runs CAPZ and CAPI, but cannot get past CAPI's readiness gate.`;
}

function reconcileOption(
  model: PoolModel,
  drift: readonly DriftItem[],
  a: AksFacts,
  readyDrops: number,
): ResyncVerdict['reconcile'] {
  const has = (kind: DriftItem['kind']) => drift.some((d) => d.kind === kind);
  const { add, remove } = listDiff(model);
  if (readyDrops >= FLAP_THRESHOLD)
    return {
      allowed: true,
      canHelp: false,
      reason: `The ${a.infraKind} went not ready ${readyDrops} times in the last hour: CAPZ rewrites the agent pool at every reconcile, so a reconcile is one more write to AKS and one more not-ready window.`,
    };
  if (model.workload.state === 'unreachable')
    return {
      allowed: true,
      canHelp: false,
      reason:
        'poolscope cannot read the workload cluster; if CAPI cannot either, it stops before its readiness gate and a reconcile changes nothing until the connection is back.',
    };
  if (gateClosed(model)) return { allowed: true, canHelp: false, reason: closedReason(a) };
  if (a.aso && (a.asoReady !== 'ready' || a.asoBehind))
    return {
      allowed: true,
      canHelp: false,
      reason: `ASO is not done with the agent pool: a reconcile now would make CAPZ mark the ${a.infraKind} not ready, which closes CAPI's gate until ASO is.`,
    };
  const infra = model.aks?.infra?.providerIDList ?? [];
  if (infra.length === 0 && (model.mp.replicas ?? 0) > 0)
    return {
      allowed: true,
      canHelp: false,
      reason: `The ${a.infraKind} list is empty while replicas are above 0: CAPI does not copy an empty list, and a reconcile does not change that until CAPZ finds the pool's members again.`,
    };
  if (add.length || remove.length)
    return {
      allowed: true,
      canHelp: true,
      reason: 'The gate is open: CAPI copies the list on its next reconcile, and a trigger makes that happen now.',
    };
  if (has('missing-from-azuremachinepool') || has('ghost-in-azuremachinepool'))
    return {
      allowed: true,
      canHelp: true,
      reason: `The ${a.infraKind} list lags: a reconcile makes CAPZ list ${model.flavour === 'aks-aso' ? 'the Nodes' : "the scale set's VMs"} again${model.flavour === 'aks-managed' ? ' (after its 10 s debounce)' : ''}, and CAPI copies the result.`,
    };
  const cached =
    a.autoscaling && a.cachedCount !== null && a.liveCount !== null && a.cachedCount !== a.liveCount
      ? " The replica count is ASO's cached one: only ASO's own resync refreshes it, not a reconcile."
      : '';
  return { allowed: true, canHelp: false, reason: `Nothing is out of date that a reconcile would fix.${cached}` };
}

/**
 * The verdict on an AKS pool: a reconcile trigger on its infra object and MachinePool, never a list copy. `blocked`:
 * why poolscope will not resync the pool at all (lib/verdict's refusal, shared by every kind), or null.
 */
export function aksResyncVerdict(
  model: PoolModel,
  drift: readonly DriftItem[],
  blocked: string | null,
  readyDrops = 0,
): ResyncVerdict {
  const a = aksFactsOf(model) as AksFacts;
  const { add, remove } = listDiff(model);
  const reconcile = blocked
    ? { allowed: false, canHelp: false, reason: blocked }
    : reconcileOption(model, drift, a, readyDrops);
  return {
    recommended: reconcile.allowed && reconcile.canHelp ? 'reconcile' : null,
    reconcile,
    syncProviderIds: {
      allowed: false,
      canHelp: false,
      reason: blocked ?? NO_COPY,
      wouldAdd: add,
      wouldRemove: remove,
      wouldAddWithoutNode: [],
    },
  };
}
