// What the pool model reads of an AKS pool (docs/domain.md, "AKS pools"): which flavour a MachinePool is (by its
// infrastructureRef's kind), its infra object (AzureManagedMachinePool or AzureASOManagedMachinePool), ASO's agent
// pool object, and the agent pool and its machines as the AKS REST API returns them.

import type { PoolFlavour } from './api-types';
import { conditionsAt, findCondition, PAUSED_ANNOTATION, providerIdList, type Condition } from './capi-model';
import type { InstanceModel, NormalisedAzure } from './azure-model';
import { intern } from './slim';
import { arr, bool, num, str, toMs, type KubeObject } from './unstructured';

const FLAVOURS: Record<string, PoolFlavour> = {
  AzureMachinePool: 'self-managed',
  AzureManagedMachinePool: 'aks-managed',
  AzureASOManagedMachinePool: 'aks-aso',
};

/** The flavour of the infra kind a MachinePool's infrastructureRef names; null for a kind poolscope does not read. */
export function flavourOf(infraKind: string | null): PoolFlavour | null {
  // Own keys only: a kind read from a cluster may be "toString" or "__proto__".
  return infraKind !== null && Object.hasOwn(FLAVOURS, infraKind) ? (FLAVOURS[infraKind] as PoolFlavour) : null;
}

/** An AKS infra pool as CAPZ writes it: the fields both flavours have, and each one's own. */
export interface AksInfraModel {
  flavour: 'aks-managed' | 'aks-aso';
  name: string;
  ready: boolean | null;
  replicas: number | null;
  providerIDList: string[];
  /** The agent pool's name in Azure (AMMP `spec.name`; the ASO-MP's embedded agent pool's `azureName` or name). */
  agentPoolName: string | null;
  /** AMMP only (an ASO-MP has no conditions): `AgentPoolsReady`, `Ready`. */
  conditions: Condition[];
  /** AMMP `spec.scaling`; null when not set (or an ASO-MP). */
  scaling: { minSize: number | null; maxSize: number | null } | null;
  /** ASO-MP: each embedded ASO object and whether CAPZ found it ready. */
  resources: { kind: string; name: string; ready: boolean | null }[];
  pausedAnnotation: boolean;
  deleting: boolean;
}

/**
 * The agent pool's name in Azure, as an infra object says it: an AMMP's `spec.name` (its own name when unset), an
 * ASO-MP's embedded ManagedClustersAgentPool's `spec.azureName` (that object's name when unset). AKS labels each of
 * the pool's Nodes with it.
 */
export function agentPoolNameOf(obj: KubeObject): string | null {
  if (obj.kind === 'AzureManagedMachinePool') return str(obj, 'spec', 'name') ?? obj.metadata?.name ?? null;
  const pool = arr(obj, 'spec', 'resources').find((r) => str(r, 'kind') === 'ManagedClustersAgentPool');
  return str(pool, 'spec', 'azureName') ?? str(pool, 'metadata', 'name');
}

/**
 * The name of ASO's ManagedClustersAgentPool object of an AKS infra object, in its namespace: CAPZ names an
 * AzureManagedMachinePool's after it; an AzureASOManagedMachinePool embeds its own. Null when it names none.
 */
export function asoAgentPoolObjectName(obj: KubeObject, kind: 'ammp' | 'asomp'): string | null {
  if (kind === 'ammp') return obj.metadata?.name ?? null;
  const pool = arr(obj, 'spec', 'resources').find((r) => str(r, 'kind') === 'ManagedClustersAgentPool');
  return str(pool, 'metadata', 'name');
}

/** Normalises an AzureManagedMachinePool (infrastructure.cluster.x-k8s.io/v1beta1). */
export function normaliseAmmp(obj: KubeObject): AksInfraModel {
  const scaling = obj.spec?.scaling;
  return {
    ...common(obj, 'aks-managed'),
    agentPoolName: agentPoolNameOf(obj),
    conditions: conditionsAt(obj, ['status', 'conditions']),
    scaling:
      scaling && typeof scaling === 'object'
        ? { minSize: num(scaling, 'minSize'), maxSize: num(scaling, 'maxSize') }
        : null,
    resources: [],
  };
}

/** Normalises an AzureASOManagedMachinePool (v1beta1, or the deprecated v1alpha1 of the same shape). */
export function normaliseAsoMp(obj: KubeObject): AksInfraModel {
  return {
    ...common(obj, 'aks-aso'),
    agentPoolName: agentPoolNameOf(obj),
    conditions: [],
    scaling: null,
    resources: arr(obj, 'status', 'resources').map((r) => ({
      kind: str(r, 'resource', 'kind') ?? '',
      name: str(r, 'resource', 'name') ?? '',
      ready: bool(r, 'ready'),
    })),
  };
}

function common(obj: KubeObject, flavour: AksInfraModel['flavour']) {
  return {
    flavour,
    name: obj.metadata?.name ?? '',
    ready: bool(obj, 'status', 'ready'),
    replicas: num(obj, 'status', 'replicas'),
    providerIDList: providerIdList(obj, 'spec', 'providerIDList').ids,
    pausedAnnotation: obj.metadata?.annotations?.[PAUSED_ANNOTATION] !== undefined,
    deleting: Boolean(obj.metadata?.deletionTimestamp),
  };
}

/** ASO's ManagedClustersAgentPool (containerservice.azure.com): its Ready condition and its cached AKS status. */
export interface AsoAgentPoolModel {
  name: string;
  generation: number | null;
  /** Ready: True, or False with reason Reconciling, ReconciliationBlocked or an Azure error code. */
  ready: (Condition & { observedGeneration: number | null }) | null;
  /** `serviceoperator.azure.com/reconcile-policy`: `manage` (the default) or `skip` (CAPZ paused it). */
  reconcilePolicy: string | null;
  /** ASO's copy of the AKS agent pool, as of its last reconcile (up to AZURE_SYNC_PERIOD old). */
  cached: AgentPoolState;
}

/** What an AKS agent pool says of itself (the REST resource, or ASO's cached copy of it). */
interface AgentPoolState {
  provisioningState: string | null;
  count: number | null;
  enableAutoScaling: boolean | null;
  minCount: number | null;
  maxCount: number | null;
  /** `powerState.code`: Running or Stopped. */
  powerState: string | null;
  orchestratorVersion: string | null;
  currentOrchestratorVersion: string | null;
  nodeImageVersion: string | null;
}

function agentPoolState(props: unknown): AgentPoolState {
  return {
    provisioningState: str(props, 'provisioningState'),
    count: num(props, 'count'),
    enableAutoScaling: bool(props, 'enableAutoScaling'),
    minCount: num(props, 'minCount'),
    maxCount: num(props, 'maxCount'),
    powerState: str(props, 'powerState', 'code'),
    orchestratorVersion: str(props, 'orchestratorVersion'),
    currentOrchestratorVersion: str(props, 'currentOrchestratorVersion'),
    nodeImageVersion: str(props, 'nodeImageVersion'),
  };
}

const ASO_RECONCILE_POLICY = 'serviceoperator.azure.com/reconcile-policy';

/** Normalises an ASO ManagedClustersAgentPool object. */
export function normaliseAsoAgentPool(obj: KubeObject): AsoAgentPoolModel {
  const ready = findCondition(conditionsAt(obj, ['status', 'conditions']), 'Ready');
  const raw = arr(obj, 'status', 'conditions').find((c) => str(c, 'type') === 'Ready');
  return {
    name: obj.metadata?.name ?? '',
    generation: obj.metadata?.generation ?? null,
    ready: ready ? { ...ready, observedGeneration: num(raw, 'observedGeneration') } : null,
    reconcilePolicy: obj.metadata?.annotations?.[ASO_RECONCILE_POLICY] ?? null,
    cached: agentPoolState(obj.status),
  };
}

/** An agent pool as `GET …/managedClusters/{mc}/agentPools/{pool}` returns it. */
export interface AgentPoolModel extends AgentPoolState {
  id: string;
  name: string;
  /** VirtualMachineScaleSets, VirtualMachines or AvailabilitySet. */
  type: string | null;
  mode: string | null;
  /** `properties.status.provisioningError`: why the last operation failed. */
  provisioningError: { code: string | null; message: string | null } | null;
}

/** Normalises an agent pool as the AKS REST API returns it; null without an id. */
export function normaliseAgentPool(raw: unknown): AgentPoolModel | null {
  const id = str(raw, 'id');
  if (!id) return null;
  const props = (raw as { properties?: unknown }).properties;
  const error = (props as { status?: { provisioningError?: unknown } } | undefined)?.status?.provisioningError;
  return {
    id,
    name: str(raw, 'name') ?? id.split('/').pop() ?? id,
    ...agentPoolState(props),
    type: str(props, 'type'),
    mode: str(props, 'mode'),
    provisioningError: error ? { code: str(error, 'code'), message: str(error, 'message') } : null,
  };
}

/** Agent pool types with no scale set behind them, by their lower-case spelling. */
const SCALE_SETLESS: Record<string, 'VirtualMachines' | 'AvailabilitySet'> = {
  virtualmachines: 'VirtualMachines',
  availabilityset: 'AvailabilitySet',
};

/**
 * An agent pool's type when no scale set stands behind it: a `VirtualMachines` pool's VMs stand alone, a legacy
 * `AvailabilitySet` pool's are in an availability set. Null for a pool of scale sets (AKS's default, and what CAPZ
 * asks for), and for a type poolscope does not know.
 */
export function scaleSetlessType(type: string | null): 'VirtualMachines' | 'AvailabilitySet' | null {
  const key = type?.toLowerCase() ?? '';
  return Object.hasOwn(SCALE_SETLESS, key) ? (SCALE_SETLESS[key] ?? null) : null;
}

/** Whether an agent pool as the AKS REST API returns it has no scale set behind it (see scaleSetlessType). */
export function hasNoScaleSet(rawAgentPool: unknown): boolean {
  return scaleSetlessType(str(rawAgentPool, 'properties', 'type')) !== null;
}

/** The tags AKS names a node pool's scale set by (`poolName` on clusters made before 2020). */
const POOL_TAGS = ['aks-managed-poolName', 'poolName'];

/**
 * The agent pool a scale set of a node resource group was made for, by AKS's tags on it (as CAPZ finds an
 * AzureManagedMachinePool's scale set), lower-case; null for a scale set AKS did not tag.
 */
export function agentPoolOfScaleSetTags(tags: Record<string, unknown>): string | null {
  const tag = POOL_TAGS.map((t) => tags[t]).find((v) => typeof v === 'string' && v !== '');
  return typeof tag === 'string' ? tag.toLowerCase() : null;
}

/** A managed cluster as `GET …/managedClusters/{mc}` returns it: its control plane and its node resource group. */
export interface ManagedClusterModel {
  name: string;
  provisioningState: string | null;
  /** `powerState.code`: Running or Stopped. */
  powerState: string | null;
  /** The version asked for; the control plane runs `currentKubernetesVersion` until it has reached it. */
  kubernetesVersion: string | null;
  currentKubernetesVersion: string | null;
  nodeResourceGroup: string | null;
}

/** Normalises a managed cluster as the AKS REST API returns it; null without an id. */
export function normaliseManagedCluster(raw: unknown): ManagedClusterModel | null {
  const id = str(raw, 'id');
  if (!id) return null;
  const props = (raw as { properties?: unknown }).properties;
  return {
    name: str(raw, 'name') ?? id.split('/').pop() ?? id,
    provisioningState: str(props, 'provisioningState'),
    powerState: str(props, 'powerState', 'code'),
    kubernetesVersion: str(props, 'kubernetesVersion'),
    currentKubernetesVersion: str(props, 'currentKubernetesVersion'),
    nodeResourceGroup: str(props, 'nodeResourceGroup'),
  };
}

/**
 * Whether an AKS provisioning state means an operation is running: anything but Succeeded, Failed or Canceled
 * (case aside), as ASO's agent pool check has it. Unknown (null) is not taken for one.
 */
export function operationInProgress(state: string | null): boolean {
  return state !== null && !['succeeded', 'failed', 'canceled'].includes(state.toLowerCase());
}

/**
 * An AKS machine's VM as a providerID in the form CAPZ ≥ v1.5.0 writes for an AzureManagedMachinePool: `azure://`
 * and the VM's ARM id with its resource group segment lowercased (cloud-provider-azure's form, so it matches the
 * Nodes' own).
 */
export function aksProviderId(vmResourceId: string): string {
  const m = /^(.*\/resourceGroups\/)([^/]+)(\/providers\/.*)$/i.exec(vmResourceId);
  return `azure://${m ? `${m[1]}${(m[2] as string).toLowerCase()}${m[3]}` : vmResourceId}`;
}

/** The machines of an agent pool (`GET …/agentPools/{pool}/machines`): each name and its VM as a providerID. */
export function normaliseAksMachines(raw: readonly unknown[]): { name: string; providerID: string | null }[] {
  return raw.map((m) => {
    const vm = str(m, 'properties', 'resourceId');
    return { name: str(m, 'name') ?? '', providerID: vm ? aksProviderId(vm) : null };
  });
}

/**
 * An agent pool's machines as the Azure source of its pool (one with no scale set, type VirtualMachines): an instance
 * each, named by its VM; the list says nothing of a VM's state.
 */
export function normaliseMachines(raw: readonly unknown[], readAt?: string | null): NormalisedAzure {
  const notes: string[] = [];
  const instances: InstanceModel[] = [];
  for (const m of normaliseAksMachines(raw)) {
    if (m.providerID === null) {
      notes.push('AKS listed a machine without properties.resourceId; it was skipped.');
      continue;
    }
    instances.push({
      providerID: intern(m.providerID),
      name: m.name || (m.providerID.split('/').pop() as string),
      instanceId: null,
      provisioningState: null,
      powerState: null,
      latestModelApplied: null,
      errorCode: null,
      errorMessage: null,
      computerName: null,
      createdAt: null,
    });
  }
  return {
    state: 'normalised',
    azure: { state: 'ok', vmss: null, instances, readAt: toMs(readAt ?? undefined) },
    notes,
  };
}
