// One call from raw objects to everything the API serves about a pool: model → join → drift → diagnosis →
// verdict, plus the fleet-row summary and the per-instance table.

import type {
  DriftKind,
  InstanceRow,
  ListDigest,
  PoolCondition,
  PoolDetail,
  PoolSummary,
  ReplicaCounts,
  SourceState,
} from './api-types';
import { poolKey } from './api-types';
import { diagnose } from './diagnosis';
import { readyDrops } from './flapping';
import { awaitsAzureRead, computeDrift, countDrift, driftKindsFor } from './drift';
import { displayId, joinSources, type JoinedId } from './join';
import type { Condition } from './capi-model';
import { infraList, infraReady } from './pool-lists';
import { buildPoolModel, isPaused, type PoolInput, type PoolModel } from './pool-model';
import { autoscalerKey } from './provider-id';
import { sortByRowKey } from './row-order';
import { resyncVerdict } from './verdict';

export interface AnalyzeOptions {
  /** Evaluation time (RFC 3339). */
  now: string;
  /** The previous result for this pool, to carry `since` of drift items and findings forward. */
  previous?:
    (Pick<PoolDetail, 'drift' | 'findings'> & { summary?: Pick<PoolSummary, 'ampReady' | 'readyDrops'> }) | null;
  /** Last change time to report in the summary, when the caller tracks it. */
  lastChange?: string | null;
  /** State of the management-cluster source. */
  kube?: SourceState;
  /** How long a frozen list while the pool scales on CAPZ before v1.20 is a warning (lib/diagnosis). */
  frozenCriticalAfterMs?: number;
}

function replicaCounts(model: PoolModel, joined: readonly JoinedId[]): ReplicaCounts {
  const az = model.azure.state === 'ok' ? model.azure : null;
  let readyNodes: number | null = null;
  if (model.workload.state === 'ok') {
    // Ready Nodes of this pool: those that some other source of the pool knows of.
    readyNodes = 0;
    for (const j of joined) {
      if (j.node?.ready && (j.raw.azure ?? j.raw.amp ?? j.raw.mp) !== null) readyNodes++;
    }
  }
  return {
    desired: model.mp.replicas,
    // An AKS pool's capacity is the agent pool's count as AKS reports it (it sizes the scale set to it).
    vmssCapacity:
      model.aks?.agentPool.state === 'ok' ? model.aks.agentPool.pool.count : az ? (az.vmss?.capacity ?? null) : null,
    azureInstances: az ? az.instances.length : null,
    // AKS's machines list (a pool without a scale set) says nothing of a VM's state: no count rather than 0.
    azureSucceeded: az?.vmss ? az.instances.filter((i) => i.provisioningState === 'Succeeded').length : null,
    azureFailed: az?.vmss ? az.instances.filter((i) => i.provisioningState === 'Failed').length : null,
    capz: model.amp?.replicas ?? model.aks?.infra?.replicas ?? null,
    capi: model.mp.statusReplicas,
    readyNodes,
  };
}

function instanceRows(model: PoolModel, joined: readonly JoinedId[], kinds: readonly DriftKind[][]): InstanceRow[] {
  const paused = model.mp.pausedAnnotation;
  const visible = new Set(model.mp.providerIDList.map(autoscalerKey));
  const rows = joined.map((j, idx): InstanceRow => {
    const seen = j.raw.node ?? j.raw.azure ?? displayId(j);
    const key = autoscalerKey(seen);
    const i = j.instance;
    const row: InstanceRow = {
      providerID: displayId(j),
      sources: { ...j.raw },
      azure: i && {
        name: i.name,
        instanceId: i.instanceId,
        provisioningState: i.provisioningState,
        powerState: i.powerState,
        latestModelApplied: i.latestModelApplied,
        errorCode: i.errorCode,
        errorMessage: i.errorMessage,
        computerName: i.computerName,
      },
      ampm: j.ampm && {
        name: j.ampm.name,
        ready: j.ampm.ready,
        provisioningState: j.ampm.provisioningState,
        nodeRef: j.ampm.nodeRef,
      },
      machine: j.machine && {
        name: j.machine.name,
        phase: j.machine.phase,
        nodeRef: j.machine.nodeRef,
        deleting: j.machine.deleting,
      },
      node: j.node && {
        name: j.node.name,
        ready: j.node.ready,
        uninitializedTaint: j.node.uninitializedTaint,
        ...(j.node.agentPool ? { agentPool: j.node.agentPool } : {}),
      },
      autoscaler: { key, visible: !paused && visible.has(key) },
      driftKinds: kinds[idx] ?? [],
    };
    if (awaitsAzureRead(j, model)) row.awaitingAzureRead = true;
    return row;
  });
  return sortByRowKey(rows, (r) => r.providerID);
}

/** Digests of the lists a model holds, by list (a model's lists are built once per object's list: lib/pool-model). */
const digests = new WeakMap<readonly string[], ListDigest>();

/** FNV-1a over the list, order-sensitive like CAPI's comparison. */
function digest(list: readonly string[]): ListDigest {
  let d = digests.get(list);
  if (!d) {
    d = fnv(list);
    digests.set(list, d);
  }
  return d;
}

function fnv(list: readonly string[]): ListDigest {
  let h = 0x811c9dc5;
  for (const id of list) {
    for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 16777619) >>> 0;
    h = Math.imul(h ^ 10, 16777619) >>> 0;
  }
  return { count: list.length, hash: h.toString(16).padStart(8, '0') };
}

function sourceOf(s: PoolModel['azure'] | PoolModel['workload']): SourceState {
  return s.state === 'ok' ? { state: 'ok' } : s;
}

/** The conditions the timeline's lanes show: the infra pool's, ASO's agent pool's Ready, the MachinePool's. */
function poolConditions(model: PoolModel): PoolCondition[] {
  const row = (source: PoolCondition['source'], c: Condition): PoolCondition => ({
    source,
    type: c.type,
    status: c.status,
    reason: c.reason,
    message: c.message,
    lastTransitionTime: c.lastTransitionTime,
  });
  const aso = model.aks?.aso.state === 'ok' ? model.aks.aso.pool.ready : null;
  return [
    ...(model.amp?.conditions ?? model.aks?.infra?.conditions ?? []).map((c) => row('amp', c)),
    ...(aso ? [row('aso', aso)] : []),
    ...model.mp.conditions.map((c) => row('mp', c)),
  ];
}

/** An AKS pool's provisioning state: AKS's own when read, else ASO's cached copy. */
function aksProvisioningState(model: PoolModel): string | null {
  const aks = model.aks;
  if (!aks) return null;
  if (aks.agentPool.state === 'ok') return aks.agentPool.pool.provisioningState;
  return aks.aso.state === 'ok' ? aks.aso.pool.cached.provisioningState : null;
}

export function analyzeModel(model: PoolModel, opts: AnalyzeOptions): PoolDetail {
  const infra = infraList(model);
  const joined = joinSources(model);
  const kinds = joined.map((j) => driftKindsFor(j, model));
  const drift = computeDrift(model, joined, { now: opts.now, previous: opts.previous?.drift }, kinds);
  const drops = readyDrops(opts.previous?.summary, infraReady(model), opts.now);
  const findings = diagnose(model, joined, drift, {
    now: opts.now,
    previous: opts.previous?.findings,
    readyDrops: drops,
    ...(opts.kube ? { kube: opts.kube } : {}),
    ...(opts.frozenCriticalAfterMs !== undefined ? { frozenCriticalAfterMs: opts.frozenCriticalAfterMs } : {}),
  });
  const verdict = resyncVerdict(model, joined, drift, opts.kube, drops.length);
  // Findings come sorted worst first.
  const worst = findings[0] ?? null;
  const summary: PoolSummary = {
    ref: model.ref,
    key: poolKey(model.ref),
    flavour: model.flavour,
    clusterName: model.mp.clusterName,
    orchestrationMode:
      (model.azure.state === 'ok' ? model.azure.vmss?.orchestrationMode : null) ?? model.amp?.orchestrationMode ?? null,
    replicas: replicaCounts(model, joined),
    provisioningState: model.amp?.provisioningState ?? aksProvisioningState(model),
    ampReady: infraReady(model),
    mpInfrastructureReady: model.mp.infrastructureReady,
    phase: model.mp.phase,
    paused: isPaused(model),
    capzVersion: model.capzVersion,
    driftCounts: countDrift(drift),
    worstFinding: worst && { code: worst.code, severity: worst.severity, summary: worst.summary },
    activeFindings: findings
      .filter((f) => f.code !== 'healthy')
      .map((f) => ({ code: f.code, severity: f.severity, since: f.since ?? null })),
    ...(drops.length ? { readyDrops: drops } : {}),
    lastChange: opts.lastChange ?? null,
  };
  return {
    summary,
    conditions: poolConditions(model),
    lists: { mp: digest(model.mp.providerIDList), amp: infra ? digest(infra) : null },
    findings,
    verdict,
    drift,
    instances: instanceRows(model, joined, kinds),
    sources: { kube: opts.kube ?? { state: 'ok' }, workload: sourceOf(model.workload), azure: sourceOf(model.azure) },
    notes: model.notes,
    at: opts.now,
  };
}

export function analyzePool(input: PoolInput, opts: AnalyzeOptions): PoolDetail {
  return analyzeModel(buildPoolModel(input), opts);
}

/**
 * Whether a pool is unsettled — in motion, not ready, drifting or showing any finding but `healthy` — so its
 * scale set deserves the fast read cadence.
 */
export function isUnsettled(d: Pick<PoolDetail, 'drift' | 'findings' | 'summary'>): boolean {
  return d.drift.length > 0 || d.summary.ampReady !== true || d.findings.some((f) => f.code !== 'healthy');
}
