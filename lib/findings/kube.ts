// Rules of what the management and workload clusters say: reachability, pausing, the MachinePool's spec, and
// IDs of another scale set in the lists.

import { INFRA_KINDS, type DriftItem, type SourceState } from '../api-types';
import { otherScaleSetOf } from '../drift';
import { listSome, plural } from '../format';
import { listsDiffer } from '../pool-lists';
import { isPaused, type PoolModel } from '../pool-model';
import { asSentence, type Context, type Draft } from './context';

/**
 * IDs of another scale set in this pool's lists (lib/drift's other-scale-set): their own problem, whichever pool they
 * belong to, which is not affected otherwise. What CAPI and cluster-autoscaler do with them: docs/domain.md,
 * "Node references and retired Nodes" and "cluster-autoscaler and the MachinePool list".
 */
export function otherScaleSetFinding(model: PoolModel, drift: readonly DriftItem[]): Draft | null {
  const items = drift.filter((d) => d.kind === 'other-scale-set');
  if (!items.length) return null;
  const inMp = items.some((d) => d.sources.mp !== null);
  const inAmp = items.some((d) => d.sources.amp !== null);
  const where =
    inMp && inAmp
      ? 'The MachinePool and AzureMachinePool lists hold'
      : inMp
        ? 'The MachinePool list holds'
        : 'The AzureMachinePool list holds';
  const named = [
    ...new Map(
      items.map((d) => {
        const o = otherScaleSetOf(d.providerID ?? '', model);
        return [
          o.scaleSet,
          o.pool
            ? `scale set ${o.scaleSet} (pool ${o.pool}'s)`
            : `scale set ${o.scaleSet}, which no pool of ${model.ref.context} uses`,
        ];
      }),
    ).values(),
  ];
  const them = items.length === 1 ? 'it' : 'them';
  const own = model.scaleSet?.scaleSet ?? model.amp?.name ?? "this pool's";
  return {
    code: 'other-scale-set-ids',
    severity: 'warning',
    summary: `${where} ${plural(items.length, 'ID')} of another scale set (${listSome(named, 2)}): CAPI treats ${them} as this pool's.`,
    detail: `An ID is its whole path: subscription, resource group, scale set and instance. ${items.length === 1 ? 'This one names' : 'These name'} ${named.join('; ')}, not ${own}. CAPI takes every ID in the MachinePool's spec.providerIDList as this pool's: it gives this MachinePool a nodeRef to that Node and patches the Node's owner annotations with this pool's name (the other pool's reconcile writes its own back); cluster-autoscaler counts the instance in this pool's node group too; and once the ID leaves the list, CAPI may delete that Node from the workload cluster as retired (deleteRetiredNodes), and its kubelet registers it again.${inAmp ? " CAPZ builds the AzureMachinePool list from its own scale set's instances, so an ID of another one there was written by something else; CAPI copies it into the MachinePool list while the AzureMachinePool is ready." : ''} The other pool is not affected otherwise: its own page is unchanged.`,
    suggestedAction: `Find what wrote ${them} (kubectl get machinepool ${model.mp.name} -n ${model.mp.namespace} --show-managed-fields${inAmp ? '; the same for the AzureMachinePool' : ''}). ${inAmp ? 'Remove it from the AzureMachinePool list first; CAPI then copies the corrected list.' : "CAPI replaces the list with the AzureMachinePool's at its next copy (or poolscope's sync-provider-ids does now):"} expect the other pool's Node to be deleted once and to register again.`,
  };
}

/** What CAPI (and, for an AzureASOManagedMachinePool, CAPZ) cannot do while the workload cluster is out of reach. */
const CAPI_STOPS: Record<PoolModel['flavour'], string> = {
  'self-managed':
    "Since CAPI v1.8 the MachinePool controller lists the workload cluster's Nodes before its readiness gate, so while CAPI cannot reach it, spec.providerIDList, status.replicas and nodeRefs are not updated, even with the AzureMachinePool ready.",
  'aks-managed':
    "CAPI lists the workload cluster's Nodes before its readiness gate, so while it cannot reach them the MachinePool's spec.providerIDList, status.replicas and nodeRefs stand still. The AzureManagedMachinePool reads only Azure, so CAPZ keeps it ready with a current list: the freeze is the connection's, not AKS's.",
  'aks-aso':
    "CAPZ builds an AzureASOManagedMachinePool's list from the workload cluster's Nodes, so it goes not ready too, and CAPI, which lists the Nodes before its readiness gate, leaves the MachinePool's spec.providerIDList, status.replicas and nodeRefs as they were: the freeze is the connection's, not AKS's.",
};

/**
 * What poolscope cannot read, said as what it is: poolscope's own connection, unless the Cluster says CAPI cannot
 * reach the workload cluster either. With the management cluster out of reach, the workload cluster failing too
 * is most likely poolscope's link, and nothing can be said of CAPI's (it runs in that cluster).
 */
function unreachableFinding(model: PoolModel, kube: SourceState | undefined): Draft | null {
  const { mp } = model;
  const context = model.ref.context;
  const workloadDown = model.workload.state === 'unreachable';
  if (kube?.state === 'unreachable') {
    return {
      code: 'management-cluster-unreachable',
      severity: 'warning',
      summary: `poolscope cannot reach management cluster ${context}: this pool is shown as last seen.`,
      detail: `Reading ${context} failed: ${asSentence(kube.error)} This is poolscope's own connection: CAPI and CAPZ run inside that cluster and may be working normally, but nothing shown here is updated until poolscope reads it again.${workloadDown ? " poolscope cannot read the workload cluster's Nodes either, which points at poolscope's own network rather than at the clusters." : ''}`,
      suggestedAction: `Check poolscope's connection to ${context}: its kubeconfig context or ServiceAccount token, the network path from poolscope's pod, and whether the API server answers (kubectl --context ${context} get --raw /readyz). The source bar shows since when it fails.`,
    };
  }
  if (model.workload.state !== 'unreachable') return null;
  const cluster = mp.clusterName ?? '<cluster>';
  const probe = model.cluster?.remoteConnection ?? null;
  const secret = `the ${cluster}-kubeconfig Secret (key "value") in namespace ${mp.namespace}${model.flavour === 'self-managed' ? '' : ' (for an AKS cluster without local accounts, CAPZ writes an Entra token into it: an expired token or a lost role looks the same)'}`;
  const frozen = listsDiffer(model)
    ? ` The MachinePool list differs from the ${INFRA_KINDS[model.flavour].kind} list and stays frozen until then.`
    : '';
  const capiStops = `${CAPI_STOPS[model.flavour]}${frozen}`;
  const read = `poolscope could not read its Nodes: ${asSentence(model.workload.error)}`;
  if (probe?.status === 'True') {
    return {
      code: 'workload-cluster-unreachable',
      severity: 'warning',
      summary: `poolscope cannot read workload cluster ${cluster}'s Nodes; CAPI still reaches it.`,
      detail: `${read} The Cluster's RemoteConnectionProbe condition is True, so CAPI's own connection works and it keeps updating this pool; what is missing is poolscope's view of the Nodes (the Node column, Ready Nodes, and drift against Nodes).`,
      suggestedAction: `Check poolscope's path to the workload API server: ${secret}, as poolscope reads it, and the network from poolscope's pod to the server it names.`,
    };
  }
  const capiToo = probe?.status === 'False';
  const probeText = capiToo
    ? ` The Cluster's RemoteConnectionProbe condition is False${probe.reason ? ` (${probe.reason}${probe.message ? `: ${probe.message}` : ''})` : ''}: CAPI cannot reach it either.`
    : ' Whether CAPI reaches it is not known (the Cluster has no RemoteConnectionProbe condition before CAPI v1.9).';
  return {
    code: 'workload-cluster-unreachable',
    severity: 'critical',
    summary: capiToo
      ? `Workload cluster ${cluster} is unreachable, for CAPI too: CAPI cannot update this pool.`
      : `poolscope cannot read workload cluster ${cluster}'s Nodes; CAPI may not reach it either.`,
    detail: `${read}${probeText} ${capiStops}`,
    suggestedAction: `Check ${secret} and whether the workload API server answers.${capiToo ? '' : " If CAPI reaches it, only poolscope's path is broken."}`,
    ...(capiToo && probe.lastTransitionTime ? { derivedSince: probe.lastTransitionTime } : {}),
  };
}

/** What pausing the infra object does, by its kind (docs/domain.md, "AKS operator scenarios", K10). */
const INFRA_PAUSED: Record<PoolModel['flavour'], string> = {
  'self-managed':
    'the AzureMachinePool has the cluster.x-k8s.io/paused annotation (CAPZ skips it; since CAPI v1.9 this alone does not stop the CAPI MachinePool controller)',
  'aks-managed':
    "the AzureManagedMachinePool has the cluster.x-k8s.io/paused annotation (CAPZ sets ASO's reconcile policy to skip and leaves its ready as it was)",
  'aks-aso':
    "the AzureASOManagedMachinePool has the cluster.x-k8s.io/paused annotation: CAPZ marks it not ready, and since CAPI v1.9 that does not pause the MachinePool, so the pause itself closes CAPI's readiness gate",
};

/** Reconciliation paused on the Cluster, the MachinePool or the infra object. */
export function paused(c: Context): Draft | null {
  const { model, mp } = c;
  const infraPaused = c.amp?.pausedAnnotation ?? c.aks?.infra?.pausedAnnotation ?? false;
  if (!isPaused(model) && !infraPaused) return null;
  const by: string[] = [];
  if (model.cluster?.paused) by.push(`Cluster ${model.cluster.name} is paused`);
  if (mp.pausedAnnotation) by.push('the MachinePool has the cluster.x-k8s.io/paused annotation');
  if (infraPaused) by.push(INFRA_PAUSED[model.flavour]);
  const changes =
    model.flavour === 'self-managed'
      ? 'Azure changes (evictions, VMSS autoscale) are not reflected'
      : "AKS changes (its autoscaler, upgrades) are not reflected; ASO still reads the agent pool's status under the skip policy";
  return {
    code: 'paused',
    severity: 'warning',
    summary: 'Reconciliation is paused: drift is expected and will grow until it is unpaused.',
    detail: `${by.join('; ')}. Paused controllers do nothing, so ${changes}. cluster-autoscaler does not scale down a MachinePool with the paused annotation.`,
    suggestedAction:
      'Unpause when the operation that paused it (e.g. clusterctl move) is over. poolscope never unpauses as a side effect.',
  };
}

/** An empty AzureMachinePool list while replicas are wanted: CAPI refuses to copy it. */
export function emptyInfraList(c: Context): Draft | null {
  const { mp, amp } = c;
  if (!amp || amp.providerIDList.length > 0 || (mp.replicas ?? 0) <= 0) return null;
  return {
    code: 'empty-infra-list',
    severity: 'warning',
    summary: `AzureMachinePool providerIDList is empty while the pool wants ${mp.replicas} replicas.`,
    detail:
      'CAPI refuses to copy an empty list when replicas is not 0 ("Retrieved empty spec.providerIDList"), so the MachinePool keeps its old list. This is normal for a short while after a controller restart or clusterctl move, before CAPZ lists the AMPMs again.',
    suggestedAction:
      'Usually transient. If it persists, check the CAPZ controller; a reconcile trigger is harmless here.',
  };
}

/** MachinePool spec.replicas unset. */
export function replicasUnknown(c: Context): Draft | null {
  const { mp } = c;
  if (mp.replicas !== null) return null;
  return {
    code: 'replicas-unknown',
    severity: 'warning',
    summary: 'MachinePool spec.replicas is not set, so the desired size is unknown.',
    detail:
      'The CAPI webhook normally defaults it; with it unset CAPI never reports Running or Scaling, and CAPZ may fail while comparing replica counts.',
    suggestedAction:
      'Set spec.replicas explicitly (kubectl scale machinepool …), and check that the CAPI webhooks are running.',
  };
}

/** cluster.x-k8s.io/replicas-managed-by: CAPZ copies the capacity into spec.replicas. */
export function externallyManaged(c: Context): Draft | null {
  const { mp } = c;
  if (mp.replicasManagedBy === null || mp.replicasManagedBy === 'false') return null;
  return {
    code: 'externally-managed-replicas',
    severity: mp.autoscalerAnnotations ? 'warning' : 'info',
    summary: `Replicas are managed externally (${mp.replicasManagedBy}): desired = VMSS capacity.`,
    detail: `With cluster.x-k8s.io/replicas-managed-by, CAPZ copies the scale set's sku.capacity into MachinePool spec.replicas and skips its own scale-down; the phase reads Scaling instead of ScalingUp/ScalingDown.${mp.autoscalerAnnotations ? ' This pool also has cluster-autoscaler node-group annotations; cluster-autoscaler scales spec.replicas itself and does not need the annotation, so the two fight.' : ''}`,
    suggestedAction: mp.autoscalerAnnotations
      ? 'Remove cluster.x-k8s.io/replicas-managed-by when cluster-autoscaler manages this pool.'
      : 'None, if an external autoscaler scales the scale set directly.',
  };
}

/** poolscope cannot read the management cluster: the pool is shown as last seen. */
export function managementUnreachable(c: Context): Draft | null {
  return c.opts.kube?.state === 'unreachable' ? unreachableFinding(c.model, c.opts.kube) : null;
}

/** poolscope cannot read the workload cluster's Nodes (said apart from the management cluster's own failure). */
export function workloadUnreachable(c: Context): Draft | null {
  return c.opts.kube?.state === 'unreachable' ? null : unreachableFinding(c.model, c.opts.kube);
}
