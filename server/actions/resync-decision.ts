import 'server-only';
// The decision a resync is made on (server/actions/resync.ts), re-made on fresh reads of the cluster and Azure just
// before it writes: refused, changed since the preview the operator confirmed, or go.

import { hasNoScaleSet, normaliseMachines } from '@/lib/aks-model';
import { analyzePool } from '@/lib/analyze';
import {
  poolKey,
  type PoolDetail,
  type PoolRef,
  type ResyncMode,
  type ResyncOption,
  type ResyncRequest,
  type ResyncRunning,
  type ResyncVerdict,
} from '@/lib/api-types';
import { RESYNC_ACTIONS } from '@/lib/resync-actions';
import { UNINITIALIZED_TAINT } from '@/lib/capi-model';
import { scaleSetOfList } from '@/lib/provider-id';
import { AKS_AGENT_POOL_LABEL } from '@/lib/slim';
import type { PoolInput } from '@/lib/pool-model';
import type { KubeObject } from '@/lib/unstructured';
import { agentPoolRefOf, type AgentPoolRead, type AgentPoolRef, type MachinesRead } from '../azure/aks-reader';
import { azureInput, scaleSetRefOf } from '../azure/reader';
import { HttpError } from '../http/route';
import type { FreshPool, PoolObjects } from './pool-objects';
import type { ResyncDeps } from './resync-deps';
import { clusterError, note, reconcile, syncProviderIds, type Run } from './resync-writes';
import { verdictDigest } from './verdict-digest';

/** The workload cluster's Nodes as the collector last saw them (the resync does not read workload clusters). */
function workloadFromDetail(d: PoolDetail | null): NonNullable<PoolInput['workload']> {
  if (!d) return { state: 'unknown', reason: 'poolscope has not read this workload cluster yet' };
  const w = d.sources.workload;
  if (w.state !== 'ok') return w;
  return {
    state: 'ok',
    nodes: d.instances.flatMap((r): KubeObject[] =>
      r.node && r.sources.node
        ? [
            {
              apiVersion: 'v1',
              kind: 'Node',
              metadata: {
                name: r.node.name,
                ...(r.node.agentPool ? { labels: { [AKS_AGENT_POOL_LABEL]: r.node.agentPool } } : {}),
              },
              spec: {
                providerID: r.sources.node,
                ...(r.node.uninitializedTaint ? { taints: [{ key: UNINITIALIZED_TAINT, effect: 'NoSchedule' }] } : {}),
              },
              status: {
                conditions: r.node.ready === null ? [] : [{ type: 'Ready', status: r.node.ready ? 'True' : 'False' }],
              },
            },
          ]
        : [],
    ),
  };
}

/**
 * The verdict on fresh objects and a fresh read of the scale set, whatever the mode: the same verdict for a
 * preview of either mode and for its confirm, so their digests compare.
 */
export async function freshVerdict(
  deps: Pick<ResyncDeps, 'readAzure' | 'readAgentPool' | 'readMachines'>,
  ref: PoolRef,
  fresh: FreshPool,
  detail: PoolDetail | null,
): Promise<ResyncVerdict> {
  const { aks, machinesOf } =
    fresh.infraKind === 'AzureMachinePool' ? { aks: null, machinesOf: null } : await freshAks(deps, fresh);
  const ss = scaleSetRefOf(
    aks ? aksScaleSetOf(fresh, detail) : (fresh.amp?.spec as { providerID?: string } | undefined)?.providerID,
  );
  const azure: NonNullable<PoolInput['azure']> = machinesOf
    ? await freshMachines(deps, machinesOf)
    : ss
      ? azureInput(await deps.readAzure(ss))
      : {
          state: 'unknown',
          reason:
            fresh.infraKind === 'AzureMachinePool'
              ? 'the AzureMachinePool names no scale set (spec.providerID)'
              : "the agent pool's scale set is not known yet (the collector finds it in the node resource group)",
        };
  const input: PoolInput = {
    ...(aks ? { aks } : {}),
    context: ref.context,
    machinePool: fresh.mp,
    azureMachinePool: fresh.amp,
    azureMachinePoolMachines: fresh.ampms,
    machines: fresh.machines,
    cluster: fresh.cluster,
    workload: workloadFromDetail(detail),
    azure,
    capzVersion: detail?.summary.capzVersion ?? null,
  };
  return analyzePool(input, { now: new Date().toISOString() }).verdict;
}

/**
 * An AKS pool's scale set in its node resource group: the one the collector last read its VMs from (it finds it by
 * AKS's pool tag), else the one an AzureManagedMachinePool's list names.
 */
function aksScaleSetOf(fresh: FreshPool, detail: PoolDetail | null): string | null {
  const read = (detail?.instances ?? []).flatMap((r) => (r.sources.azure ? [r.providerID] : []));
  return (
    scaleSetOfList(read) ??
    (fresh.infraKind === 'AzureManagedMachinePool'
      ? scaleSetOfList((fresh.infra?.spec as { providerIDList?: unknown } | undefined)?.providerIDList)
      : null)
  );
}

/**
 * An AKS pool's own sources for the verdict: its infra object and ASO's agent pool object as read now, and AKS's
 * agent pool (by the id ASO records), read now too when the deps can.
 */
async function freshAks(
  deps: Pick<ResyncDeps, 'readAgentPool'>,
  fresh: FreshPool,
): Promise<{ aks: NonNullable<PoolInput['aks']>; machinesOf: AgentPoolRef | null }> {
  const aso = fresh.asoAgentPool;
  const ap = agentPoolRefOf((aso?.status as { id?: unknown } | undefined)?.id as string | undefined);
  let agentPool: NonNullable<PoolInput['aks']>['agentPool'] = { state: 'unknown', reason: 'AKS agent pool not read' };
  // An agent pool AKS says has no scale set: its VMs are its machines.
  let scaleSetless = false;
  if (ap && deps.readAgentPool) {
    const r = await deps.readAgentPool(ap);
    scaleSetless = r.state === 'ok' && hasNoScaleSet(r.agentPool);
    agentPool = r.state === 'ok' ? { state: 'ok', agentPool: r.agentPool, readAt: Date.parse(r.readAt) } : notRead(r);
  }
  return {
    aks: { infra: fresh.infra, ...(aso !== undefined ? { asoAgentPool: aso } : {}), agentPool },
    machinesOf: scaleSetless ? ap : null,
  };
}

/** The machines of agent pool `ref` (one with no scale set) as the pool model takes its Azure VMs. */
async function freshMachines(
  deps: Pick<ResyncDeps, 'readMachines'>,
  ref: AgentPoolRef,
): Promise<NonNullable<PoolInput['azure']>> {
  if (!deps.readMachines) return { state: 'unknown', reason: "the agent pool's machines are not read" };
  const r = await deps.readMachines(ref);
  return r.state === 'ok' ? normaliseMachines(r.machines, r.readAt) : notRead(r);
}

/** An AKS read that brought no data, as the pool model takes a source that could not be read. */
function notRead(r: Exclude<AgentPoolRead | MachinesRead, { state: 'ok' }>) {
  return r.state === 'throttled'
    ? { state: 'throttled' as const, error: r.error, retryAfterSeconds: r.retryAfterSeconds }
    : { state: r.state, error: r.error };
}

/**
 * Reads the pool afresh and decides on it: refused (409 `resync-refused`), changed since the preview the request
 * confirms (409 `verdict-changed`, with the new preview; nothing is written), or go.
 */
export async function decide(
  deps: Pick<ResyncDeps, 'readAzure' | 'readAgentPool' | 'readMachines' | 'store'>,
  a: {
    objects: PoolObjects;
    ref: PoolRef;
    mp: KubeObject;
    body: ResyncRequest;
    user: string;
    startedAt: string;
    running: ResyncRunning;
  },
): Promise<{ run: Run; option: ResyncOption }> {
  let fresh: FreshPool;
  try {
    fresh = await a.objects.read(a.mp);
  } catch (e) {
    clusterError(e, 'Nothing was changed:');
  }
  const verdict = await freshVerdict(deps, a.ref, fresh, await deps.store.currentPool(poolKey(a.ref)));
  const run: Run = {
    objects: a.objects,
    ref: a.ref,
    fresh,
    dryRun: a.body.dryRun === true,
    user: a.user,
    startedAt: a.startedAt,
    digest: verdictDigest(verdict),
    steps: a.running.steps,
  };
  const { mode } = a.body;
  const option = mode === 'reconcile' ? verdict.reconcile : verdict.syncProviderIds;
  if (a.body.verdictDigest !== undefined && a.body.verdictDigest !== run.digest)
    throw await verdictChanged(run, mode, verdict, option);
  if (!option.allowed)
    throw new HttpError(409, 'resync-refused', `poolscope refuses ${RESYNC_ACTIONS[mode].name}: ${option.reason}`);
  note(
    run.steps,
    'checked',
    `Read the pool afresh${a.body.verdictDigest ? ': the verdict is the one previewed' : ''}. ${option.reason}`,
  );
  return { run, option };
}

/** 409 `verdict-changed`, carrying the verdict now and the dry run of the same mode on it, to confirm again. */
async function verdictChanged(
  run: Run,
  mode: ResyncMode,
  verdict: ResyncVerdict,
  option: ResyncOption,
): Promise<HttpError> {
  const name = RESYNC_ACTIONS[mode].name;
  // A dry run that fails leaves the preview's dryRun null; the dialog's own preview then shows the failure.
  const preview = { ...run, dryRun: true, steps: [] };
  const dryRun = option.allowed
    ? await (mode === 'reconcile' ? reconcile(preview, 0, null) : syncProviderIds(preview)).catch(() => null)
    : null;
  const now = option.allowed
    ? `${name} is still allowed: ${option.reason}`
    : `poolscope now refuses ${name}: ${option.reason}`;
  const recommends = verdict.recommended
    ? `poolscope now recommends ${RESYNC_ACTIONS[verdict.recommended].name}.`
    : 'poolscope now recommends no resync.';
  return new HttpError(
    409,
    'verdict-changed',
    `The pool changed since the preview you confirmed, so nothing was done. ${now} ${recommends} Look at the new preview and confirm again.`,
    {},
    { preview: { verdict, verdictDigest: run.digest, dryRun } },
  );
}
