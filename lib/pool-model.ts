// One normalised model of a MachinePool and everything behind it, whatever API version or source shape it was
// read in: CAPI's objects (./capi-model), CAPZ's (./capz-model) and Azure's (./azure-model), put together.

import type { PoolRef, SourceState } from './api-types';
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

export interface PoolModel {
  ref: PoolRef;
  mp: MachinePoolModel;
  amp: AzureMachinePoolModel | null;
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
const normalised = new WeakMap<KubeObject, { model: MachinePoolModel | AzureMachinePoolModel; notes: string[] }>();

function memo<T extends MachinePoolModel | AzureMachinePoolModel>(
  obj: KubeObject,
  notes: string[],
  read: (o: KubeObject, n: string[]) => T,
): T {
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
  const amp = input.azureMachinePool ? memo(input.azureMachinePool, notes, normaliseAzureMachinePool) : null;
  if (!amp) notes.push("No AzureMachinePool was found for this MachinePool's infrastructureRef.");

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

  const scaleSetRaw = amp?.providerID ?? (azure.state === 'ok' ? azure.vmss.providerID : null);
  const parsed = scaleSetRaw === null ? null : parseProviderId(scaleSetRaw);
  if (parsed && !parsed.ok)
    notes.push(`AzureMachinePool spec.providerID is malformed (${parsed.reason}): ${parsed.raw}`);

  for (const [label, list] of [
    ['MachinePool', mp.providerIDList],
    ['AzureMachinePool', amp?.providerIDList ?? []],
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
    mp,
    amp,
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

/** Whether CAPI's MachinePool controller is paused for this pool (Cluster.spec.paused or the MP annotation). */
export function isPaused(model: PoolModel): boolean {
  return model.mp.pausedAnnotation || (model.cluster?.paused ?? false);
}
