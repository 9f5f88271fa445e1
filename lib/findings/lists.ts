// Rules of the two providerID lists and what agrees with them: the frozen list behind CAPI's readiness gate, IDs
// spelled in another case, a reordered list, drift no other finding explains, the gate closed with nothing
// waiting, and the healthy pool.

import { capzSortsList } from '../capz-version';
import type { DriftKind, FindingCode, IdSource } from '../api-types';
import { INFRA_KINDS, SEVERITY_RANK } from '../api-types';
import { awaitsAzureRead } from '../drift';
import { plural } from '../format';
import { spellings, type JoinedId } from '../join';
import { gateClosed, infraList, infraReady, listDiff, listsDiffer } from '../pool-lists';
import {
  FROZEN_CRITICAL_AFTER_MS,
  notReadyCause,
  scalingNow,
  sinceOfCondition,
  type Context,
  type Draft,
} from './context';

/** CAPI's gate is closed while the lists differ: the MachinePool list is frozen (docs/domain.md, "The readiness gate"). */
export function readinessGateFrozen(c: Context): Draft | null {
  const { model, opts, readiness, versionText, failed, invisible, vmssFailed, stuck, amp } = c;
  if (!amp || !gateClosed(model) || !listsDiffer(model)) return null;
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
  return {
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
  };
}

const SOURCE_WORDS: Record<IdSource, string> = {
  azure: 'Azure',
  // Said with the pool's infra kind (caseSpellings).
  amp: 'the AzureMachinePool list',
  mp: 'the MachinePool list',
  ampm: 'the AMPMs',
  machine: 'the Machines',
  node: 'the Nodes',
};

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
function caseSpellings(
  j: JoinedId,
  infraKind: string,
): { text: string; differ: (a: IdSource, b: IdSource) => boolean } {
  const all = spellings(j);
  const text = all
    .map((sp, i) => {
      const sources = (Object.keys(j.raw) as IdSource[])
        .filter((src) => j.raw[src] === sp)
        .map((src) => (src === 'amp' ? `the ${infraKind} list` : SOURCE_WORDS[src]));
      return `${differingPart(sp, all[i === 0 ? 1 : 0] ?? sp)} in ${joinWords(sources)}`;
    })
    .join('; ');
  return { text, differ: (a, b) => j.raw[a] !== null && j.raw[b] !== null && j.raw[a] !== j.raw[b] };
}

/** providerIDs that differ only in case between sources: CAPI and CAPZ compare them exactly. */
export function caseMismatch(c: Context): Draft | null {
  const { joined, readiness } = c;
  const caseDrift = joined.filter((j) => j.caseVariants);
  const first = caseDrift[0];
  if (!first) return null;
  const infraKind = INFRA_KINDS[c.model.flavour].kind;
  const { text, differ } = caseSpellings(first, infraKind);
  const spelt = caseDrift.map((j) => caseSpellings(j, infraKind));
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
  const more = caseDrift.length > 1 ? ` (the first of ${caseDrift.length}: ${first.instance?.name ?? first.key})` : '';
  return {
    code: 'case-mismatch',
    severity: 'critical',
    summary: `providerIDs of ${plural(caseDrift.length, 'instance')} differ only in case between sources: ${text}.`,
    detail: `CAPI and CAPZ compare providerIDs exactly, so these do not match${more}. ${effects.join(' ')} cloud-provider-azure lower-cases the resource group in the IDs it gives Nodes (kubernetes #74882); CAPZ does the same since v1.7 (#2817).${differ('azure', 'ampm') ? ' Here the AMPMs differ from what current CAPZ derives from Azure (the Azure column).' : ''}`,
    suggestedAction:
      "Make the spellings agree at the source: upgrade CAPZ to v1.7 or later, or find what writes the other spelling. Do not rewrite the lists by hand (CAPI overwrites them, and deleteRetiredNodes acts on them meanwhile); poolscope's resync refuses to.",
  };
}

/** The two lists hold the same IDs in another order. */
export function orderOnly(c: Context): Draft | null {
  const { model, drift } = c;
  if (!drift.some((d) => d.kind === 'order-only')) return null;
  const sorts = capzSortsList(model.capzVersion) === true;
  return {
    code: 'order-only',
    severity: 'info',
    summary: `The ${INFRA_KINDS[model.flavour].kind} list holds the MachinePool list's IDs in another order: CAPI rewrites its list and resets its counts on every reorder.`,
    detail: `CAPI compares the two lists in order, so it copies a reordered list as a change and sets the MachinePool's v1beta1 ready and available replicas to 0 until its next reconcile: the phase and the replica metrics flap. No instance is missing. CAPZ sorts the list since v1.23.0 (#6011); before, its order followed the controller's cache.${sorts ? ` This pool's CAPZ (${model.capzVersion}) sorts it already, so something else reorders the list.` : ''}`,
    suggestedAction: sorts
      ? `Find what rewrites the ${INFRA_KINDS[model.flavour].kind} spec.providerIDList (kubectl get ${INFRA_KINDS[model.flavour].kind.toLowerCase()} --show-managed-fields). No resync is needed.`
      : 'Upgrade CAPZ to v1.23 or later. No resync is needed.',
  };
}

/** What the fallback finding says of each drift kind, counting instances (case and order drift have findings of their own). */
type CountedKind = Exclude<DriftKind, 'case-mismatch' | 'order-only' | 'other-scale-set'>;
const counted = (kind: DriftKind): kind is CountedKind =>
  kind !== 'case-mismatch' && kind !== 'order-only' && kind !== 'other-scale-set';
const DRIFT_WORDS: Record<CountedKind, (n: number, infra: string) => string> = {
  'missing-from-machinepool': (n) =>
    `${plural(n, 'instance')} not in the MachinePool list (the autoscaler cannot see ${n === 1 ? 'it' : 'them'})`,
  'ghost-in-machinepool': (n) => `${plural(n, 'ID')} in the MachinePool list of instances gone from Azure`,
  'missing-from-azuremachinepool': (n, infra) =>
    infra === 'AzureMachinePool'
      ? `${plural(n, 'instance')} in Azure not in the AzureMachinePool list`
      : `${plural(n, 'live member')} not in the ${infra} list`,
  'ghost-in-azuremachinepool': (n, infra) =>
    infra === 'AzureMachinePool'
      ? `${plural(n, 'ID')} in the AzureMachinePool list of instances gone from Azure`
      : `${plural(n, 'ID')} in the ${infra} list of members gone`,
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
  'azure-unread',
  'empty-infra-list',
  'scaling',
  'model-rollout',
  'aks-pool-failed',
  'aks-operation',
  'aks-nodes-unmapped',
]);

/** Drift that no other finding explains still gets a sentence: an empty diagnosis would rank the pool below healthy ones. */
export function sourcesDisagree(c: Context, found: ReadonlySet<FindingCode>): Draft | null {
  const { drift, model } = c;
  // An AKS pool's drift is against its Nodes: Azure unread explains none of it.
  if ([...found].some((code) => EXPLAINS_DRIFT.has(code) && !(c.aks && code === 'azure-unread'))) return null;
  const infra = INFRA_KINDS[model.flavour].kind;
  const ready = infraReady(model);
  const hasInfra = infraList(model) !== null;
  const unexplained = drift.filter((d) => counted(d.kind));
  if (!unexplained.length) return null;
  const ids = new Set(unexplained.map((d) => d.providerID)).size;
  // In DRIFT_WORDS' order: what the autoscaler sees first.
  const parts = (Object.keys(DRIFT_WORDS) as CountedKind[]).flatMap((kind) => {
    const n = unexplained.filter((d) => d.kind === kind).length;
    return n ? [DRIFT_WORDS[kind](n, INFRA_KINDS[c.model.flavour].kind)] : [];
  });
  const worst = unexplained.reduce(
    (w, d) => (SEVERITY_RANK[d.severity] > SEVERITY_RANK[w] ? d.severity : w),
    unexplained[0]?.severity ?? 'info',
  );
  return {
    code: 'sources-disagree',
    severity: worst,
    summary: `Sources disagree on ${plural(ids, 'instance')}: ${parts.join('; ')}.`,
    detail: `poolscope found no cause it knows of for this: the ${infra} is ${ready === true ? 'ready' : hasInfra ? 'not ready' : 'missing'}, nothing failed, the pool is not ${c.aks ? 'in an AKS operation or paused' : 'scaling, paused or rolling out'}. Differences like these normally close within a reconcile (${c.aks ? 'CAPZ re-lists at its next reconcile, at the latest its 10-minute sync' : 'CAPZ requeues every 30 s'}; CAPI copies the list while the ${infra} is ready). The ProviderID drift table shows each instance.`,
    suggestedAction: `Wait a few minutes. If it does not clear, look at the CAPZ and CAPI controller logs for this pool; a reconcile trigger is safe while the ${infra} is ready.`,
    derivedSince: unexplained.reduce<string | undefined>(
      (min, d) => (d.since !== null && (min === undefined || d.since < min) ? d.since : min),
      undefined,
    ),
  };
}

/**
 * CAPI's gate closed while the lists still agree: nothing waits behind it yet, but the badge says "not ready" and
 * the diagnosis should say why, not "healthy".
 */
export function gateClosedFinding(c: Context, found: ReadonlySet<FindingCode>): Draft | null {
  const { model, amp, failed, versionText } = c;
  const explained = [...found].some(
    (code) => EXPLAINS_DRIFT.has(code) || code === 'case-mismatch' || code === 'sources-disagree',
  );
  if (!amp || !gateClosed(model) || explained) return null;
  return {
    code: 'gate-closed',
    severity: 'info',
    summary: `AzureMachinePool not ready (${notReadyCause(model, failed)}): CAPI copies no list until it is; the lists agree, so nothing waits yet.`,
    detail: `CAPI copies the AzureMachinePool's spec.providerIDList into the MachinePool only while its status.ready is true; it is ${amp.ready === null ? 'unset' : 'false'}. Both lists hold the same IDs now. An instance that comes or goes meanwhile stays out of (or in) the MachinePool list until the AzureMachinePool is ready again.${versionText}`,
    suggestedAction:
      'None while nothing waits. If it stays not ready, look at the AzureMachinePool conditions and the CAPZ controller logs.',
    derivedSince: sinceOfCondition(model, 'Ready', 'False'),
  };
}

/** Every source read, and nothing found: no finding, no drift. */
export function healthy(c: Context, found: ReadonlySet<FindingCode>): Draft | null {
  const { model, joined, drift } = c;
  const allRead = model.azure.state === 'ok' && model.workload.state === 'ok';
  if (found.size > 0 || drift.length > 0 || !allRead) return null;
  // Instances that came or went since Azure's last read agree with it only once it is read again.
  const unconfirmed = joined.filter((j) => awaitsAzureRead(j, model)).length;
  return {
    code: 'healthy',
    severity: 'info',
    summary: unconfirmed
      ? `Healthy: every source agrees, Azure up to its last read; ${plural(unconfirmed, 'instance')} came or went since.`
      : 'Healthy: every source agrees.',
    detail: `Azure, the AzureMachinePool, the MachinePool, the AMPMs, the Machines and the Nodes list the same instances.${unconfirmed ? ` Azure's last read predates ${unconfirmed === 1 ? 'the AMPM of 1 instance, made or deleted' : `the AMPMs of ${unconfirmed} instances, made or deleted`} since; its next read confirms ${unconfirmed === 1 ? 'it' : 'them'}.` : ''}`,
    suggestedAction: 'None.',
  };
}
