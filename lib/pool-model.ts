// One normalised model of a MachinePool and everything behind it, whatever API version or source shape it was
// read in: CAPI's objects (./capi-model), CAPZ's (./capz-model), Azure's (./azure-model) and, for an AKS pool, its
// infra object, ASO's agent pool and AKS's (./aks-model), put together.

import {
  flavourOf,
  normaliseAgentPool,
  normaliseAmmp,
  normaliseAsoAgentPool,
  normaliseAsoMp,
  normaliseManagedCluster,
  type AgentPoolModel,
  type ManagedClusterModel,
  type AksInfraModel,
  type AsoAgentPoolModel,
} from './aks-model';
import { INFRA_KINDS, type PoolFlavour, type PoolRef, type SourceState } from './api-types';
import { normaliseAzure, type AzureData, type NormalisedAzure } from './azure-model';
import {
  checkedList,
  normaliseCluster,
  normaliseMachine,
  normaliseMachinePool,
  normaliseNode,
  type ClusterModel,
  type MachineModel,
  type MachinePoolModel,
  type NodeModel,
} from './capi-model';
import { normaliseAmpm, normaliseAzureMachinePool, type AmpmModel, type AzureMachinePoolModel } from './capz-model';
import { parseProviderId, type ParsedProviderId } from './provider-id';
import type { KubeObject } from './unstructured';

type WorkloadData = { state: 'ok'; nodes: NodeModel[] } | Exclude<SourceState, { state: 'ok' }>;
type NotOk = Exclude<SourceState, { state: 'ok' }>;

/** What an AKS pool has beside the MachinePool (docs/domain.md, "What to read for an AKS pool"). */
interface AksPoolModel {
  /** The AzureManagedMachinePool or AzureASOManagedMachinePool; null when it was not found. */
  infra: AksInfraModel | null;
  /** ASO's ManagedClustersAgentPool, or why it was not read (not found: ASO has not made it, or it was deleted). */
  aso: { state: 'ok'; pool: AsoAgentPoolModel } | NotOk;
  /** The agent pool as AKS reports it now (a GET), or why it was not read. */
  agentPool: { state: 'ok'; pool: AgentPoolModel; readAt: number | null } | NotOk;
  /** The pool's managed cluster as AKS reports it (a GET), or why it was not read. */
  managedCluster: { state: 'ok'; cluster: ManagedClusterModel; readAt: number | null } | NotOk;
}

export interface PoolModel {
  ref: PoolRef;
  /** Which infra kind backs the pool, by the MachinePool's infrastructureRef (self-managed when it names none). */
  flavour: PoolFlavour;
  mp: MachinePoolModel;
  /** The AzureMachinePool of a self-managed pool (always null for an AKS pool: see `aks`). */
  amp: AzureMachinePoolModel | null;
  /** An AKS pool's infra object, ASO agent pool and AKS agent pool (null for a self-managed pool). */
  aks: AksPoolModel | null;
  ampms: AmpmModel[];
  machines: MachineModel[];
  cluster: ClusterModel | null;
  workload: WorkloadData;
  azure: AzureData;
  /** The pool's scale set, parsed from the AMP's spec.providerID (or the VMSS id). */
  scaleSet: ParsedProviderId | null;
  /** CAPZ version (controller image tag) when known, e.g. "v1.19.1". */
  capzVersion: string | null;
  /** PoolInput.departedAmpms (none when not given). */
  departedAmpms: readonly DepartedAmpm[];
  /** PoolInput.otherScaleSetPools (none when not given). */
  otherScaleSetPools: Readonly<Record<string, string>>;
  notes: string[];
}

/** What the sources hand over for one pool: objects exactly as the APIs return them. */
export interface PoolInput {
  context: string;
  machinePool: KubeObject;
  azureMachinePool?: KubeObject | null;
  azureMachinePoolMachines?: KubeObject[];
  machines?: KubeObject[];
  cluster?: KubeObject | null;
  /** Nodes of the workload cluster (all of them, or those of this pool), or why they could not be read. */
  workload?: { state: 'ok'; nodes: KubeObject[] } | Exclude<SourceState, { state: 'ok' }>;
  /**
   * The VMSS and its VMs as the ARM REST API returns them (or already normalised by {@link normaliseAzure},
   * for a caller that analyses the same read many times), or why they could not be read.
   */
  azure?:
    | { state: 'ok'; vmss: unknown; vms: unknown[]; readAt?: string | null }
    | NormalisedAzure
    | Exclude<SourceState, { state: 'ok' }>;
  capzVersion?: string | null;
  /** An AKS pool's own sources (docs/domain.md, "What to read for an AKS pool"); ignored for a self-managed one. */
  aks?: AksPoolInput;
  /**
   * The pool's AMPMs deleted lately: their providerID, and when the collector saw them go (ms since the epoch). CAPZ
   * removes an AMPM once its VM is deleted or gone, so an instance Azure's last read still lists, whose AMPM went
   * after that read, is most likely gone too (lib/drift's `awaitsAzureRead`).
   */
  departedAmpms?: readonly DepartedAmpm[];
  /**
   * For the other scale sets this pool's lists name (see scaleSetKeyOf), the MachinePool (`namespace/name`) whose
   * AzureMachinePool has that scale set, in the same management cluster: what an ID of another pool is said to be.
   */
  otherScaleSetPools?: Readonly<Record<string, string>>;
}

interface AksPoolInput {
  /** The AzureManagedMachinePool or AzureASOManagedMachinePool the MachinePool's infrastructureRef names. */
  infra?: KubeObject | null;
  /** ASO's ManagedClustersAgentPool for the pool (null: not found), or why it could not be read. */
  asoAgentPool?: KubeObject | null | NotOk;
  /** `GET …/agentPools/{pool}` as AKS answered it, or why it could not be read. */
  agentPool?: { state: 'ok'; agentPool: unknown; readAt?: number | null } | NotOk;
  /** `GET …/managedClusters/{mc}` as AKS answered it, or why it could not be read. */
  managedCluster?: { state: 'ok'; managedCluster: unknown; readAt?: number | null } | NotOk;
}

export interface DepartedAmpm {
  providerID: string;
  at: number;
}

/**
 * Normalised MachinePools and AzureMachinePools by the object they were read from, with the notes reading them
 * gave: the collector analyses a pool again for each change to any of its objects (a hundred instances' AMPMs,
 * Machines and Nodes), and most leave these two as they were. Objects are not changed once read (an informer
 * replaces an object on update), and models are not changed by their readers.
 */
type Memoised = MachinePoolModel | AzureMachinePoolModel | AksInfraModel;
const normalised = new WeakMap<KubeObject, { model: Memoised; notes: string[] }>();

function memo<T extends Memoised>(obj: KubeObject, notes: string[], read: (o: KubeObject, n: string[]) => T): T {
  let m = normalised.get(obj);
  if (!m) {
    const own: string[] = [];
    m = { model: read(obj, own), notes: own };
    normalised.set(obj, m);
  }
  notes.push(...m.notes);
  return m.model as T;
}

export function buildPoolModel(input: PoolInput): PoolModel {
  const notes: string[] = [];
  const mp = memo(input.machinePool, notes, normaliseMachinePool);
  if (mp.replicas === null) notes.push('MachinePool spec.replicas is not set.');
  const flavour = flavourOf(mp.infrastructureRef.kind) ?? 'self-managed';
  const amp =
    flavour === 'self-managed' && input.azureMachinePool
      ? memo(input.azureMachinePool, notes, normaliseAzureMachinePool)
      : null;
  const aks = flavour === 'self-managed' ? null : aksPart(flavour, input.aks ?? {}, notes);
  if (!amp && !aks?.infra)
    notes.push(`No ${INFRA_KINDS[flavour].kind} was found for this MachinePool's infrastructureRef.`);

  const w = input.workload ?? { state: 'unknown' as const, reason: 'workload cluster not read' };
  const workload: WorkloadData = w.state === 'ok' ? { state: 'ok', nodes: w.nodes.map(normaliseNode) } : w;

  const a = input.azure ?? { state: 'unknown' as const, reason: 'Azure not read' };
  let azure: AzureData;
  if (a.state === 'ok' || a.state === 'normalised') {
    const n = a.state === 'ok' ? normaliseAzure(a.vmss, a.vms, a.readAt) : a;
    azure = n.azure;
    notes.push(...n.notes);
  } else {
    azure = a;
  }

  const scaleSetRaw = amp?.providerID ?? (azure.state === 'ok' ? (azure.vmss?.providerID ?? null) : null);
  const parsed = scaleSetRaw === null ? null : parseProviderId(scaleSetRaw);
  if (parsed && !parsed.ok)
    notes.push(`AzureMachinePool spec.providerID is malformed (${parsed.reason}): ${parsed.raw}`);

  for (const [label, list] of [
    ['MachinePool', mp.providerIDList],
    [INFRA_KINDS[flavour].kind, amp?.providerIDList ?? aks?.infra?.providerIDList ?? []],
  ] as const) {
    const c = checkedList(list);
    if (c.duplicates) notes.push(`${label} spec.providerIDList has duplicate entries.`);
    if (c.malformed.length === 0) continue;
    // Each malformed entry, as often as the list holds it.
    const bad = new Map(c.malformed);
    for (const id of list)
      if (bad.has(id)) notes.push(`${label} spec.providerIDList has a malformed entry (${bad.get(id)}): ${id}`);
  }

  return {
    ref: { context: input.context, namespace: mp.namespace, name: mp.name },
    flavour,
    mp,
    amp,
    aks,
    ampms: (input.azureMachinePoolMachines ?? []).map(normaliseAmpm),
    machines: (input.machines ?? []).map(normaliseMachine),
    cluster: input.cluster ? normaliseCluster(input.cluster) : null,
    workload,
    azure,
    scaleSet: parsed && parsed.ok ? parsed : null,
    capzVersion: input.capzVersion ?? null,
    departedAmpms: input.departedAmpms ?? [],
    otherScaleSetPools: input.otherScaleSetPools ?? {},
    notes,
  };
}

/** An AKS pool's own sources, normalised; a kind that does not match the flavour counts as not found. */
function aksPart(flavour: Exclude<PoolFlavour, 'self-managed'>, input: AksPoolInput, notes: string[]): AksPoolModel {
  const kind = INFRA_KINDS[flavour].kind;
  const obj = input.infra && input.infra.kind === kind ? input.infra : null;
  const infra = obj ? memo(obj, notes, flavour === 'aks-managed' ? normaliseAmmp : normaliseAsoMp) : null;
  const rawAso = input.asoAgentPool;
  let aso: AksPoolModel['aso'];
  if (rawAso === undefined) aso = { state: 'unknown', reason: 'ASO agent pool not read' };
  else if (rawAso === null) aso = { state: 'not-found', error: 'no ManagedClustersAgentPool of this pool was found' };
  else if (isSourceState(rawAso)) aso = rawAso;
  else aso = { state: 'ok', pool: normaliseAsoAgentPool(rawAso) };
  return {
    infra,
    aso,
    agentPool: agentPoolOf(input.agentPool, notes),
    managedCluster: managedClusterOf(input.managedCluster, notes),
  };
}

function managedClusterOf(m: AksPoolInput['managedCluster'], notes: string[]): AksPoolModel['managedCluster'] {
  if (!m) return { state: 'unknown', reason: 'AKS managed cluster not read' };
  if (m.state !== 'ok') return m;
  const cluster = normaliseManagedCluster(m.managedCluster);
  if (cluster) return { state: 'ok', cluster, readAt: m.readAt ?? null };
  notes.push('The AKS managed cluster answer has no id; it was not used.');
  return { state: 'unknown', reason: 'the AKS managed cluster answer has no id' };
}

function agentPoolOf(a: AksPoolInput['agentPool'], notes: string[]): AksPoolModel['agentPool'] {
  if (!a) return { state: 'unknown', reason: 'AKS agent pool not read' };
  if (a.state !== 'ok') return a;
  const pool = normaliseAgentPool(a.agentPool);
  if (pool) return { state: 'ok', pool, readAt: a.readAt ?? null };
  notes.push('The AKS agent pool answer has no id; it was not used.');
  return { state: 'unknown', reason: 'the AKS agent pool answer has no id' };
}

function isSourceState(o: KubeObject | NotOk): o is NotOk {
  const state = (o as { state?: unknown }).state;
  return typeof state === 'string' && (o as KubeObject).kind === undefined;
}

/** Whether CAPI's MachinePool controller is paused for this pool (Cluster.spec.paused or the MP annotation). */
export function isPaused(model: PoolModel): boolean {
  return model.mp.pausedAnnotation || (model.cluster?.paused ?? false);
}
