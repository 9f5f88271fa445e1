// A living AKS pool as the world's controllers work on it (docs/domain.md, "AKS pools"): its MachinePool and infra
// object (an AzureManagedMachinePool or AzureASOManagedMachinePool), ASO's agent pool object, AKS's agent pool in
// the simulated ARM and the node resource group's scale set behind it. Pools move only in scenarios that ask for
// it (`aksControllers: true`); elsewhere an AKS pool stands as its scenario put it.

import { asoAgentPoolObjectName, agentPoolNameOf } from '../../lib/aks-model';
import type { KubeObject } from '../../lib/unstructured';
import type { AgentPoolRecord, ScaleSetRecord } from '../azure/state';
import type { ClusterStore } from '../kube/store';
import { R } from './world-objects';
import type { Pool } from './world-pool';
import type { WorldState } from './world-state';

export interface AksPart {
  flavour: 'aks-managed' | 'aks-aso';
  /** The agent pool's name in Azure (the Nodes' `kubernetes.azure.com/agentpool` label). */
  agentPool: string;
  /** ASO's ManagedClustersAgentPool object's name, in the pool's namespace. */
  asoName: string;
  /** ASO's object as stored now (undefined when it is gone). */
  aso(): KubeObject | undefined;
  /** AKS's agent pool (undefined before ASO has created it, or once deleted). */
  agentPoolRec(): AgentPoolRecord | undefined;
}

const AKS_KINDS: Record<string, 'aks-managed' | 'aks-aso'> = {
  AzureManagedMachinePool: 'aks-managed',
  AzureASOManagedMachinePool: 'aks-aso',
};

/** A living AKS pool's parts, or null (not an AKS kind, the world does not move AKS pools, or parts missing). */
export function resolveAks(w: WorldState, store: ClusterStore, mp: KubeObject): Pool | null {
  const ref = (mp.spec?.template as { spec?: { infrastructureRef?: { name?: string; kind?: string } } } | undefined)
    ?.spec?.infrastructureRef;
  const flavour = ref?.kind && Object.hasOwn(AKS_KINDS, ref.kind) ? AKS_KINDS[ref.kind] : undefined;
  if (!w.opts.aksControllers || !flavour || !ref?.name) return null;
  const ns = String(mp.metadata?.namespace);
  const infraDef = flavour === 'aks-managed' ? R.ammp : R.asomp;
  const infra = store.peekOne(infraDef, ns, ref.name);
  const agentPool = infra ? agentPoolNameOf(infra) : null;
  const asoName = infra ? asoAgentPoolObjectName(infra, flavour === 'aks-managed' ? 'ammp' : 'asomp') : null;
  if (!infra || !agentPool || !asoName) return null;
  const clusterName = String(mp.spec?.clusterName ?? '');
  const cluster = store.peekOne(R.cluster, ns, clusterName) ?? null;
  const clusterPaused =
    cluster?.spec?.paused === true || cluster?.metadata?.annotations?.['cluster.x-k8s.io/paused'] !== undefined;
  const aso = () => store.peekOne(R.asoap, ns, asoName);
  const agentPoolRec = () => {
    const id = (aso()?.status as { id?: unknown } | undefined)?.id;
    const m =
      typeof id === 'string'
        ? /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.ContainerService\/managedClusters\/([^/]+)\/agentPools\/([^/]+)$/i.exec(
            id,
          )
        : null;
    return m ? w.azure.state.getAgentPool(m[1] as string, m[2] as string, m[3] as string, m[4] as string) : undefined;
  };
  const workload = w.kube.clusters.get(clusterName)?.store ?? null;
  // AKS makes a new node (a surge one too) at the version the pool asks for.
  const version = (agentPoolRec()?.body.properties as { orchestratorVersion?: unknown } | undefined)
    ?.orchestratorVersion;
  return {
    store,
    ns,
    mp,
    amp: infra,
    infraDef,
    aks: { flavour, agentPool, asoName, aso, agentPoolRec },
    nodeLabels: {
      'kubernetes.azure.com/agentpool': agentPool,
      'kubernetes.azure.com/cluster': `MC_rg_${clusterName}`,
    },
    ...(typeof version === 'string' ? { nodeVersion: `v${version.replace(/^v/, '')}` } : {}),
    rec: scaleSetOf(w, agentPool, clusterName),
    clusterName,
    workload: workload && !w.unreachable.has(clusterName) ? workload : null,
    capiPaused: clusterPaused || mp.metadata?.annotations?.['cluster.x-k8s.io/paused'] !== undefined,
    capzPaused: clusterPaused,
    ampms: [],
  };
}

/** The agent pool's scale set: in its cluster's node resource group, tagged with the pool's name as AKS tags it. */
function scaleSetOf(w: WorldState, agentPool: string, clusterName: string): ScaleSetRecord | null {
  const rg = `_${clusterName}_`.toLowerCase();
  for (const rec of w.azure.state.scaleSets.values()) {
    const tags = (rec.body.tags ?? {}) as Record<string, unknown>;
    if (tags['aks-managed-poolName'] === agentPool && rec.resourceGroup.toLowerCase().includes(rg)) return rec;
  }
  return null;
}
