// providerID drift between Azure, the AzureMachinePool list, the MachinePool list, AMPMs, Machines and Nodes
// (docs/domain.md, "Drift checks", a–c). Sources are compared as sets; an order-only difference between the two
// lists is its own item, because CAPI compares them order-sensitively and rewrites on every flip
// (docs/domain.md, "The readiness gate" and "S12. List order churn before CAPZ 1.23").

import { INFRA_KINDS, type DriftItem, type DriftKind, type Severity } from './api-types';
import { displayId, spellings, type JoinedId } from './join';
import { infraList } from './pool-lists';
import type { PoolModel } from './pool-model';
import { belongsToScaleSet, joinKey, namedScaleSetKey, parseProviderId } from './provider-id';
import { compareDriftKeys } from './row-order';

export const DRIFT_SEVERITY: Record<DriftKind, Severity> = {
  'case-mismatch': 'critical',
  'other-scale-set': 'warning',
  'missing-from-machinepool': 'warning',
  'ghost-in-machinepool': 'warning',
  'missing-from-azuremachinepool': 'info',
  'ghost-in-azuremachinepool': 'warning',
  'instance-without-node': 'warning',
  'node-without-instance': 'warning',
  'order-only': 'info',
};

const SUMMARY: Record<DriftKind, string> = {
  'case-mismatch':
    'Sources spell this providerID differently (case only); CAPI and CAPZ compare exactly, so they do not match it.',
  'missing-from-machinepool': 'Not in the MachinePool providerIDList: cluster-autoscaler cannot see this instance.',
  'ghost-in-machinepool': 'In the MachinePool providerIDList but gone from Azure.',
  'missing-from-azuremachinepool': 'In Azure but not (yet) in the AzureMachinePool providerIDList.',
  'ghost-in-azuremachinepool': 'In the AzureMachinePool providerIDList but gone from Azure.',
  'instance-without-node': 'The instance is running but no Node has its providerID.',
  'node-without-instance': 'A Node points into this scale set, but Azure has no such instance.',
  'order-only': 'The MachinePool and AzureMachinePool lists hold the same IDs in a different order.',
  // Said per ID with the scale set and its pool: otherScaleSetSummary.
  'other-scale-set': '',
};

export interface DriftOptions {
  /** Evaluation time (RFC 3339). */
  now: string;
  /** The previous analysis' items, to carry `since` forward. Without it, `since` is unknown (null). */
  previous?: readonly DriftItem[] | null;
}

/** Instances Azure is already removing do not count as missing from the lists. */
function isLeaving(j: JoinedId): boolean {
  const s = j.instance?.provisioningState;
  return s === 'Deleting' || s === 'Deleted';
}

/**
 * A running instance: power state running, or, without an instance view, provisioned. A Failed one is not, whatever
 * its power state (a VM whose extension failed still runs): Azure calls it failed, and so does poolscope.
 */
export function isRunning(j: JoinedId): boolean {
  const inst = j.instance;
  if (!inst || isLeaving(j) || inst.provisioningState === 'Failed') return false;
  if (inst.powerState !== null) return inst.powerState === 'running';
  return inst.provisioningState === 'Succeeded';
}

/**
 * Whether a listed ID names a scale set other than the pool's: an ID is the whole path (subscription, resource
 * group, scale set, instance; a flexible member's name starts with its scale set's), so such an ID is another
 * scale set's instance, whatever this pool's list says. Only what Azure's read of this scale set does not hold.
 */
function inOtherScaleSet(j: JoinedId, model: PoolModel): boolean {
  if (j.raw.azure !== null || !model.scaleSet) return false;
  const id = j.raw.mp ?? j.raw.amp;
  if (id === null) return false;
  const p = parseProviderId(id);
  return p.ok && (p.kind === 'vmss-instance' || p.kind === 'vm') && !belongsToScaleSet(p, model.scaleSet);
}

/** The scale set an ID names (its ARM name), and the pool of this management cluster that has it, if any. */
export function otherScaleSetOf(id: string, model: PoolModel): { scaleSet: string; pool: string | null } {
  const key = namedScaleSetKey(id);
  const p = parseProviderId(id);
  const scaleSet = p.ok && p.kind !== 'vm' ? (p.scaleSet as string) : (key?.split('/').pop() ?? id);
  return { scaleSet, pool: key === null ? null : (model.otherScaleSetPools[key] ?? null) };
}

function otherScaleSetSummary(j: JoinedId, model: PoolModel): string {
  const id = (j.raw.mp ?? j.raw.amp) as string;
  const { scaleSet, pool } = otherScaleSetOf(id, model);
  const lists =
    j.raw.mp !== null && j.raw.amp !== null
      ? 'both lists'
      : j.raw.mp !== null
        ? 'the MachinePool list'
        : 'the AzureMachinePool list';
  return `Names scale set ${scaleSet}${pool ? ` (pool ${pool}'s)` : ''}, not this pool's, yet ${lists} ${lists === 'both lists' ? 'hold' : 'holds'} it: CAPI takes it as this pool's.`;
}

/**
 * Whether Azure's last read may simply predate what Kubernetes shows of this ID, so that it tells nothing about it
 * until the next read. Two ways:
 * - the read does not list it, and its AMPM was created in the second of the read or later. CAPZ makes an AMPM
 *   only for a VM it has listed, so an AMPM older than the read means its VM existed when Azure listed the scale
 *   set, and missing from that list it is gone; a newer one may be for a VM created since;
 * - the read lists it (not as deleting), and its AMPM is gone, deleted after the read (PoolInput.departedAmpms).
 *   CAPZ removes an AMPM once its VM is deleted or gone, so the VM most likely went since.
 * Such an ID is not drift on Azure's account: not a ghost, nor missing from the lists, nor without a Node. The pool
 * being in motion, the next read comes in the fast lane, as soon as the Compute budget allows (a minute or more when
 * many pools of a region move at once). Timestamps are whole seconds (creationTimestamp, the Date header), so the
 * same second counts as after the read.
 */
export function awaitsAzureRead(j: JoinedId, model: PoolModel): boolean {
  if (model.azure.state !== 'ok' || model.azure.readAt === null) return false;
  const readAt = Math.floor(model.azure.readAt / 1000) * 1000;
  if (j.raw.azure === null) {
    const created = j.ampm?.createdAt ?? null;
    return created !== null && created >= readAt;
  }
  if (j.ampm !== null || isLeaving(j)) return false;
  for (const d of model.departedAmpms) {
    if (d.at >= readAt && (d.providerID === j.raw.azure || joinKey(d.providerID) === j.key)) return true;
  }
  return false;
}

export function driftKindsFor(j: JoinedId, model: PoolModel): DriftKind[] {
  if (j.caseVariants) return ['case-mismatch'];
  // Another scale set's instance: not gone from Azure, nor an orphan Node (its own pool has it), but listed here.
  if (inOtherScaleSet(j, model)) return ['other-scale-set'];
  if (model.flavour !== 'self-managed') return aksDriftKinds(j, model);
  // What Azure's last read says of an ID it predates counts for nothing (see awaitsAzureRead).
  const awaiting = awaitsAzureRead(j, model);
  const azureKnown = (model.azure.state === 'ok' && !awaiting) || model.azure.state === 'not-found';
  const inAzure = j.raw.azure !== null;
  const activeInAzure = inAzure && !isLeaving(j) && !awaiting;
  const inAmp = j.raw.amp !== null;
  const inMp = j.raw.mp !== null;
  const kinds: DriftKind[] = [];
  if ((activeInAzure || inAmp) && !inMp) kinds.push('missing-from-machinepool');
  if (inMp && azureKnown && !inAzure) kinds.push('ghost-in-machinepool');
  if (model.amp && activeInAzure && !inAmp) kinds.push('missing-from-azuremachinepool');
  if (inAmp && azureKnown && !inAzure) kinds.push('ghost-in-azuremachinepool');
  if (model.workload.state === 'ok' && activeInAzure && isRunning(j) && j.raw.node === null)
    kinds.push('instance-without-node');
  if (j.raw.node !== null && azureKnown && !inAzure) kinds.push('node-without-instance');
  return kinds;
}

/**
 * An AKS pool's drift, against live truth rather than the infra list, which freezes with the MachinePool's
 * (docs/domain.md, "Drift checks for AKS pools", d): the node resource group's VMs when Azure was read, and the
 * registered Nodes. An AzureManagedMachinePool lists every VM of its scale set, joined or not; an
 * AzureASOManagedMachinePool lists the Nodes, so for it an ID no Node has any more is gone even without Azure.
 */
function aksDriftKinds(j: JoinedId, model: PoolModel): DriftKind[] {
  const azureKnown = model.azure.state === 'ok' || model.azure.state === 'not-found';
  const inAzure = j.raw.azure !== null;
  const activeInAzure = inAzure && !isLeaving(j);
  const aso = model.flavour === 'aks-aso';
  const registered = j.node !== null;
  // What CAPZ lists: an ASO-MP the Nodes that carry its agent pool's label; an AMMP its scale set's VMs, joined or
  // not. A Node relabelled away is no longer listable, but it is not gone either.
  const listable = aso
    ? registered && j.node?.agentPool === model.aks?.infra?.agentPoolName
    : registered || activeInAzure;
  const gone = azureKnown ? !inAzure : aso && model.workload.state === 'ok' && !registered;
  const inInfra = j.raw.amp !== null;
  const inMp = j.raw.mp !== null;
  const kinds: DriftKind[] = [];
  if ((listable || activeInAzure || inInfra) && !inMp) kinds.push('missing-from-machinepool');
  if (inMp && gone) kinds.push('ghost-in-machinepool');
  if (model.aks?.infra && listable && !inInfra) kinds.push('missing-from-azuremachinepool');
  if (inInfra && gone) kinds.push('ghost-in-azuremachinepool');
  if (model.workload.state === 'ok' && activeInAzure && isRunning(j) && !registered)
    kinds.push('instance-without-node');
  if (registered && azureKnown && !inAzure) kinds.push('node-without-instance');
  return kinds;
}

/** What a drift item says: the kind's sentence, in the words of the pool's infra kind. */
function summaryOf(kind: DriftKind, j: JoinedId, model: PoolModel): string {
  if (kind === 'case-mismatch') return `${SUMMARY[kind]} Spellings: ${spellings(j).join(' | ')}`;
  if (kind === 'other-scale-set') return otherScaleSetSummary(j, model);
  if (model.flavour === 'self-managed') return SUMMARY[kind];
  const infra = INFRA_KINDS[model.flavour].kind;
  const gone = model.azure.state === 'ok' || model.azure.state === 'not-found' ? 'gone from Azure' : 'no Node has it';
  switch (kind) {
    case 'ghost-in-machinepool':
      return `In the MachinePool providerIDList, but ${gone}.`;
    case 'missing-from-azuremachinepool':
      return `Live (${j.node ? 'a registered Node' : 'a VM in Azure'}) but not in the ${infra} list: CAPZ has not listed it since it came.`;
    case 'ghost-in-azuremachinepool':
      return `In the ${infra} list, but ${gone}.`;
    default:
      return SUMMARY[kind];
  }
}

function sameOrderlessButReordered(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length || a.length === 0) return false;
  let reordered = false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) reordered = true;
  if (!reordered) return false;
  const sa = [...a].sort();
  const sb = [...b].sort();
  return sa.every((x, i) => x === sb[i]);
}

/** Whether an item's sources say what the joined ID's do (the same six spellings). */
function sameSources(a: DriftItem['sources'], b: DriftItem['sources']): boolean {
  for (const k in b) if (a[k as keyof typeof a] !== b[k as keyof typeof b]) return false;
  return true;
}

/**
 * The drift items of a pool, by key. `kinds` may pass in `driftKindsFor` of each joined ID when the caller
 * already computed them (the instance table needs them too).
 *
 * An item that says what the previous analysis' item of the same key said is that item itself, not a copy:
 * items are never changed once made, and a pool's items mostly stay while it drifts (at 100k VMs under churn,
 * 60-odd a pool, kept between analyses as the previous one). Their callers may then tell an unchanged item by
 * identity (the collector does not hash it again: ../server/store/pack's `toStore`).
 */
export function computeDrift(
  model: PoolModel,
  joined: readonly JoinedId[],
  opts: DriftOptions,
  kinds: readonly DriftKind[][] = joined.map((j) => driftKindsFor(j, model)),
): DriftItem[] {
  const prev = opts.previous ? new Map(opts.previous.map((d) => [d.key, d])) : null;
  const item = (
    key: string,
    kind: DriftKind,
    providerID: string | null,
    sources: DriftItem['sources'],
    summary: string,
  ): DriftItem => {
    const was = prev?.get(key);
    if (was && was.providerID === providerID && was.summary === summary && sameSources(was.sources, sources))
      return was;
    return {
      key,
      kind,
      severity: DRIFT_SEVERITY[kind],
      providerID,
      sources: { ...sources },
      summary,
      since: prev ? (was ? was.since : opts.now) : null,
    };
  };
  const items: DriftItem[] = [];
  for (const [i, j] of joined.entries()) {
    for (const kind of kinds[i] ?? []) {
      items.push(item(`${kind}:${j.key}`, kind, displayId(j), j.raw, summaryOf(kind, j, model)));
    }
  }
  const infra = infraList(model);
  if (infra && sameOrderlessButReordered(model.mp.providerIDList, infra)) {
    items.push(
      item(
        'order-only:',
        'order-only',
        null,
        { azure: null, amp: null, mp: null, ampm: null, machine: null, node: null },
        SUMMARY['order-only'].replace('AzureMachinePool', INFRA_KINDS[model.flavour].kind),
      ),
    );
  }
  // In key order (lib/row-order): the store keeps the items one by one and gives them back in that order.
  return items.sort((a, b) => compareDriftKeys(a.key, b.key));
}

export function countDrift(items: readonly DriftItem[]): Partial<Record<DriftKind, number>> {
  const counts: Partial<Record<DriftKind, number>> = {};
  for (const d of items) counts[d.kind] = (counts[d.kind] ?? 0) + 1;
  return counts;
}
