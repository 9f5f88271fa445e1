// The facts the AKS pools' rules share, worked out once per analysis of an AKS pool
// (docs/domain.md, "Drift checks for AKS pools", b, c and e): what ASO's agent pool says, whether an AKS operation
// runs or failed, the pool's Nodes, and its counts.

import {
  operationInProgress,
  type AgentPoolModel,
  type AksInfraModel,
  type AsoAgentPoolModel,
  type ManagedClusterModel,
} from '../aks-model';
import { INFRA_KINDS } from '../api-types';
import type { NodeModel } from '../capi-model';
import { plural } from '../format';
import type { PoolModel } from '../pool-model';

/** ASO's Ready condition on its agent pool, as the AKS rules tell it apart (docs/domain.md, "The ASO agent pool's Ready condition"). */
type AsoReady = 'ready' | 'reconciling' | 'blocked' | 'error' | 'no-condition';

export interface AksFacts {
  infra: AksInfraModel | null;
  /** AzureManagedMachinePool or AzureASOManagedMachinePool. */
  infraKind: string;
  /** The agent pool's name in Azure, when the infra object says it. */
  poolName: string;
  aso: AsoAgentPoolModel | null;
  asoReady: AsoReady | null;
  /** ASO has a newer generation of the agent pool than it has applied: a change (CAPZ's) is being made. */
  asoBehind: boolean;
  /** The agent pool as AKS reports it now (a GET); null when not read. */
  live: AgentPoolModel | null;
  /** A running AKS operation: the provisioning state, and who says so. */
  operation: { state: string; from: 'AKS' | "ASO's cached copy" } | null;
  /** Why the last operation failed: AKS's provisioningError, or ASO's Ready reason (an Azure error code). */
  failure: { code: string | null; message: string | null; severity: string | null; from: 'AKS' | 'ASO' } | null;
  /** The Nodes with the pool's agent pool label (none when the workload cluster was not read). */
  nodes: NodeModel[];
  /** Those of `nodes` without a spec.providerID, by name. */
  nodesWithoutId: string[];
  /** AKS's autoscaler owns the count (AKS or ASO says so, the AMMP has spec.scaling, or CAPZ's annotation). */
  autoscaling: boolean;
  /** The count AKS reports now, and ASO's cached one (up to AZURE_SYNC_PERIOD old). */
  liveCount: number | null;
  cachedCount: number | null;
  /** The pool's power state (Running, Stopped), AKS's or ASO's copy. */
  powerState: string | null;
  /** The pool's managed cluster as AKS reports it (its control plane); null when not read. */
  controlPlane: ManagedClusterModel | null;
}

function asoReadyOf(aso: AsoAgentPoolModel | null): AsoReady | null {
  if (!aso) return null;
  const c = aso.ready;
  if (!c) return 'no-condition';
  if (c.status === 'True') return 'ready';
  if (c.reason === 'Reconciling') return 'reconciling';
  if (c.reason === 'ReconciliationBlocked') return 'blocked';
  return c.reason ? 'error' : 'no-condition';
}

function failureOf(live: AgentPoolModel | null, aso: AsoAgentPoolModel | null, ready: AsoReady | null) {
  if (live?.provisioningState?.toLowerCase() === 'failed') {
    const e = live.provisioningError;
    return { code: e?.code ?? null, message: e?.message ?? null, severity: null, from: 'AKS' as const };
  }
  if (ready === 'error' && aso?.ready) {
    const r = aso.ready;
    return { code: r.reason, message: r.message, severity: r.severity, from: 'ASO' as const };
  }
  return null;
}

function operationOf(live: AgentPoolModel | null, aso: AsoAgentPoolModel | null): AksFacts['operation'] {
  if (live)
    return operationInProgress(live.provisioningState) ? { state: live.provisioningState ?? '', from: 'AKS' } : null;
  const cached = aso?.cached.provisioningState ?? null;
  return operationInProgress(cached) ? { state: cached ?? '', from: "ASO's cached copy" } : null;
}

/** The AKS facts of a pool; null for a self-managed one. */
export function aksFactsOf(model: PoolModel): AksFacts | null {
  const aks = model.aks;
  if (!aks || model.flavour === 'self-managed') return null;
  const aso = aks.aso.state === 'ok' ? aks.aso.pool : null;
  const live = aks.agentPool.state === 'ok' ? aks.agentPool.pool : null;
  const asoReady = asoReadyOf(aso);
  // A name from the cluster, said in sentences: bounded (an agent pool's name has at most 12 characters in AKS).
  const poolName = (aks.infra?.agentPoolName ?? live?.name ?? model.mp.name).slice(0, 64);
  const nodes = model.workload.state === 'ok' ? model.workload.nodes.filter((n) => n.agentPool === poolName) : [];
  const managedBy = model.mp.replicasManagedBy;
  return {
    infra: aks.infra,
    infraKind: INFRA_KINDS[model.flavour].kind,
    poolName,
    aso,
    asoReady,
    asoBehind:
      aso?.generation != null && aso.ready?.observedGeneration != null && aso.generation > aso.ready.observedGeneration,
    live,
    operation: operationOf(live, aso),
    controlPlane: aks.managedCluster.state === 'ok' ? aks.managedCluster.cluster : null,
    failure: failureOf(live, aso, asoReady),
    nodes,
    nodesWithoutId: nodes.filter((n) => !n.providerID).map((n) => n.name),
    autoscaling:
      live?.enableAutoScaling === true ||
      aso?.cached.enableAutoScaling === true ||
      aks.infra?.scaling != null ||
      managedBy === 'aks' ||
      (model.flavour === 'aks-managed' && managedBy === 'true'),
    liveCount: live?.count ?? null,
    cachedCount: aso?.cached.count ?? (model.flavour === 'aks-aso' ? (aks.infra?.replicas ?? null) : null),
    powerState: live?.powerState ?? aso?.cached.powerState ?? null,
  };
}

/** Why the infra object is not ready, in a few words from what the AKS sources say. */
export function aksNotReadyCause(a: AksFacts, model: PoolModel): string {
  const parts: string[] = [];
  if (a.failure) parts.push(`the agent pool failed${a.failure.code ? ` (${a.failure.code.slice(0, 64)})` : ''}`);
  else if (a.operation)
    parts.push(
      `${a.operation.from === 'AKS' ? 'AKS' : "ASO's copy of the agent pool"}: ${a.operation.state.slice(0, 64)}`,
    );
  if (a.asoReady === 'reconciling') parts.push('ASO is applying the agent pool (Reconciling)');
  if (a.asoReady === 'blocked') parts.push('ASO is blocked (ReconciliationBlocked)');
  if (a.asoReady === 'no-condition') parts.push('ASO has not reported on the agent pool yet');
  if (a.asoBehind && a.asoReady === 'ready') parts.push('ASO has a newer generation of the agent pool to apply');
  const notReady = a.infra?.resources.filter((r) => r.ready === false) ?? [];
  if (notReady.length && !a.asoReady) parts.push(`${notReady.map((r) => `${r.kind} ${r.name}`).join(', ')} not ready`);
  for (const c of a.infra?.conditions ?? []) {
    if (c.type === 'AgentPoolsReady' && c.status === 'False')
      parts.push(`AgentPoolsReady=False${c.reason ? `/${c.reason}` : ''}${c.severity ? ` (${c.severity})` : ''}`);
  }
  if (model.flavour === 'aks-aso' && a.nodesWithoutId.length)
    parts.push(`${plural(a.nodesWithoutId.length, 'Node')} without a providerID`);
  if (model.flavour === 'aks-aso' && a.infra?.pausedAnnotation) parts.push('it is paused');
  if (model.flavour === 'aks-aso' && model.workload.state === 'unreachable')
    parts.push('the workload cluster is unreachable');
  return parts.length ? parts.join(', ') : 'no reason given';
}
