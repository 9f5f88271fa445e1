// Rules of AKS pools (AzureManagedMachinePool, AzureASOManagedMachinePool): the MachinePool list frozen with the
// infra list, an AKS operation running or failed, the count ASO caches, Nodes CAPZ cannot map, and the AKS words of
// the workload connection, the agent pool read and a healthy pool (docs/domain.md, "AKS operator scenarios").

import type { FindingCode } from '../api-types';
import { listSome, plural } from '../format';
import { gateClosed, infraReady } from '../pool-lists';
import { isPaused } from '../pool-model';
import { asSentence, FROZEN_CRITICAL_AFTER_MS, type Context, type Draft } from './context';
import { aksNotReadyCause, type AksFacts } from './aks-context';
import { FLAP_THRESHOLD } from '../flapping';
import { scaleSetlessType } from '../aks-model';
import { shellQuote } from '../next-steps';

/** An error text from AKS or ASO, cut to a length a headline can carry. */
function short(text: string | null, max = 240): string {
  if (!text) return '';
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** Since when ASO's agent pool has been not Ready, as a draft's derivedSince (nothing while it is Ready). */
function asoFalseSince(a: AksFacts): { derivedSince?: string } {
  const r = a.aso?.ready;
  return r?.status === 'False' && r.lastTransitionTime ? { derivedSince: r.lastTransitionTime } : {};
}

const GATE =
  "CAPI copies the infra object's spec.providerIDList into the MachinePool only while its status.ready is true.";
const FROZEN_TOO =
  "CAPZ computes an AKS pool's list only when a whole reconcile succeeds, so the infra list froze with the MachinePool's: the two agree, and only the Nodes or Azure show what is missing.";

/** What each flavour's list follows, for the words of a freeze. */
function liveWords(c: Context): string {
  const azure = c.model.azure.state === 'ok';
  return c.model.flavour === 'aks-aso'
    ? 'the registered Nodes (an AzureASOManagedMachinePool lists them)'
    : `${azure ? "the node resource group's VMs" : 'the registered Nodes'} (an AzureManagedMachinePool lists its scale set's VMs)`;
}

/** The finding that closed the gate, when one did. */
function freezeCause(c: Context, a: AksFacts): FindingCode | undefined {
  const aso = c.model.flavour === 'aks-aso';
  if (a.failure) return 'aks-pool-failed';
  // An AzureManagedMachinePool reads only Azure: an unreachable workload cluster does not make it not ready (K8).
  if (aso && c.model.workload.state === 'unreachable') return 'workload-cluster-unreachable';
  if (isPaused(c.model) || a.infra?.pausedAnnotation) return 'paused';
  if (aso && a.nodesWithoutId.length) return 'aks-nodes-unmapped';
  if (operationRuns(a)) return 'aks-operation';
  return undefined;
}

/** Whether an AKS operation runs, as AKS or ASO tell it: a busy state, ASO applying or blocked, or a new generation. */
function operationRuns(a: AksFacts): boolean {
  return a.operation !== null || a.asoReady === 'reconciling' || a.asoReady === 'blocked' || a.asoBehind;
}

const FREEZE_ACTION: Partial<Record<FindingCode, string>> = {
  'aks-pool-failed': 'Fix what made the agent pool fail (see that finding); the freeze lasts until AKS succeeds.',
  'workload-cluster-unreachable': 'Restore the connection to the workload cluster; CAPI and CAPZ resume by themselves.',
  paused: 'Unpause the AzureASOManagedMachinePool when the operation that paused it is over.',
  'aks-nodes-unmapped': 'Give the Nodes their providerID (or fix their labels); CAPZ lists them again then.',
  'aks-operation': 'Wait for the operation to end: the gate reopens when ASO reports the agent pool Ready.',
};

/** The MachinePool list frozen behind CAPI's gate while live membership moved (K1, K4, K5, K8, K9, K10). */
export function aksListFrozen(c: Context): Draft | null {
  const { model, drift, aks: a } = c;
  if (!a?.infra || !gateClosed(model)) return null;
  const add = drift.filter((d) => d.kind === 'missing-from-machinepool').length;
  const gone = drift.filter((d) => d.kind === 'ghost-in-machinepool').length;
  if (!add && !gone) return null;
  const cause = freezeCause(c, a);
  const diff = [add ? `${add} live not in it` : '', gone ? `${gone} in it gone` : ''].filter(Boolean).join(', ');
  const invisible = add ? ` The autoscaler and CAPI's nodeRefs miss ${plural(add, 'member')}.` : '';
  const action = (cause && FREEZE_ACTION[cause]) ?? `Look at the ${a.infraKind} and the CAPZ controller logs.`;
  return {
    code: 'readiness-gate-frozen',
    severity: 'critical',
    summary: `MachinePool providerIDList frozen: ${a.infraKind} not ready (${aksNotReadyCause(a, model)}); its own list is frozen too.${invisible}`,
    detail: `${GATE} It is ${a.infra.ready === null ? 'unset' : 'false'}. ${FROZEN_TOO} Against ${liveWords(c)} the MachinePool list is out of date: ${diff}.`,
    suggestedAction: `${action} Neither a reconcile trigger nor a list copy gets past the gate: the infra list is as stale as the MachinePool's.`,
    ...(cause ? { cause } : {}),
    ...(cause === 'aks-operation' ? { warnFor: c.opts.frozenCriticalAfterMs ?? FROZEN_CRITICAL_AFTER_MS } : {}),
    ...asoFalseSince(a),
  };
}

/** The agent pool's last operation failed (K5). */
export function aksPoolFailed(c: Context): Draft | null {
  const { model, aks: a } = c;
  const f = a?.failure;
  if (!a || !f) return null;
  const closed = gateClosed(model);
  const terminal = model.flavour === 'aks-managed' && f.from === 'ASO' && f.severity === 'Error';
  const said =
    f.from === 'AKS'
      ? `AKS reports provisioningState Failed${f.code ? `, error ${short(f.code, 64)}` : ''}${f.message ? `: ${asSentence(short(f.message, 600))}` : '.'}`
      : `ASO's agent pool is Ready=False with reason ${short(f.code, 64)}${f.severity ? ` (severity ${short(f.severity, 16)})` : ''}${f.message ? `: ${asSentence(short(f.message, 600))}` : '.'}`;
  return {
    code: 'aks-pool-failed',
    severity: closed ? 'critical' : 'warning',
    summary: `AKS agent pool ${a.poolName} failed${f.code ? ` (${short(f.code, 64)})` : ''}${f.message ? `: ${asSentence(short(f.message))}` : '.'}`,
    detail: `${said} ${closed ? `CAPZ keeps the ${a.infraKind} not ready meanwhile, so CAPI's view of the pool stays frozen until AKS succeeds: the readiness-gate freeze of CAPZ #4982, which CAPZ has not mitigated for AKS pools.` : `The ${a.infraKind} is still ready; CAPZ closes the gate at its next reconcile.`}${terminal ? ' CAPZ takes an Error-severity ASO failure as terminal: it does not reconcile the AzureManagedMachinePool again until another event or its 10-minute sync.' : ''}`,
    suggestedAction:
      'Fix the cause in Azure or in the pool spec (quota, VM size or zone capacity, a full subnet). ASO retries a Failed pool by itself. A resync cannot help.',
    ...asoFalseSince(a),
  };
}

/** The version the agent pool is being upgraded to and from, when AKS (or ASO's copy) says one is asked. */
function upgradeOf(a: AksFacts): { from: string; to: string } | null {
  const pool = a.live ?? a.aso?.cached;
  const to = pool?.orchestratorVersion;
  const from = pool?.currentOrchestratorVersion;
  if (!to || !from || to === from) return null;
  return { from: short(from, 32), to: short(to, 32) };
}

/** How many of the pool's Nodes run each kubelet version, most first, as a sentence (empty when none says). */
function nodeVersionWords(a: AksFacts): string {
  const counts = new Map<string, number>();
  for (const n of a.nodes) if (n.kubeletVersion) counts.set(n.kubeletVersion, (counts.get(n.kubeletVersion) ?? 0) + 1);
  if (counts.size === 0) return '';
  const shown = [...counts]
    .sort(([v1, n1], [v2, n2]) => n2 - n1 || v2.localeCompare(v1, 'en', { numeric: true }))
    .slice(0, 4)
    .map(([v, n]) => `${n} at ${short(v, 32)}`);
  const more = counts.size > 4 ? `, and ${plural(counts.size - 4, 'other version')}` : '';
  return ` Its Nodes now: ${shown.join(', ')}${more}.`;
}

/** What AKS says of the control plane, as a sentence to follow another (empty when the cluster was not read). */
function controlPlaneWords(a: AksFacts): string {
  const cp = a.controlPlane;
  if (!cp?.currentKubernetesVersion) return '';
  const target = cp.kubernetesVersion && cp.kubernetesVersion !== cp.currentKubernetesVersion;
  return ` AKS says the control plane of ${short(cp.name, 64)} runs Kubernetes ${short(cp.currentKubernetesVersion, 32)}${target ? `, on its way to ${short(cp.kubernetesVersion as string, 32)}` : ''}${cp.provisioningState ? ` (${short(cp.provisioningState, 32)})` : ''}.`;
}

/** What kind of operation runs: a version ASO waits for, a change ASO applies, or AKS's own (K1, K4, K6). */
function operationKind(a: AksFacts): { summary: string; detail: string } {
  const message = a.aso?.ready?.message ?? '';
  const version = /has not reached Kubernetes version "?([^"\s]+)"?/.exec(message);
  if (a.asoReady === 'blocked' && version)
    return {
      summary: `ASO waits for the control plane to reach Kubernetes ${short(version[1] as string, 32)} before it upgrades agent pool ${a.poolName}`,
      detail: `ASO upgrades an agent pool only after its cluster's control plane: ${asSentence(short(message, 400))}${controlPlaneWords(a)}`,
    };
  const upgrade = upgradeOf(a);
  if (upgrade && (a.asoReady === 'reconciling' || a.asoBehind || a.operation))
    return {
      summary: `AKS is upgrading agent pool ${a.poolName} from Kubernetes ${upgrade.from} to ${upgrade.to}${a.operation ? ` (${a.operation.from === 'AKS' ? 'AKS' : "ASO's copy"}: ${short(a.operation.state, 64)})` : ''}`,
      detail: `AKS upgrades the pool's nodes a few at a time: it adds surge nodes, drains and reimages the others, then removes the surge.${nodeVersionWords(a)} CAPI's view of the pool stays as it was before the upgrade for all of it; the surge nodes never reach the MachinePool's list.`,
    };
  if (a.asoReady === 'reconciling' || a.asoBehind)
    return {
      summary: `ASO is applying a change to agent pool ${a.poolName}${a.operation ? ` (${a.operation.from === 'AKS' ? 'AKS' : "ASO's copy"}: ${short(a.operation.state, 64)})` : ''}`,
      detail: a.asoBehind
        ? `The agent pool object has a generation ASO has not applied yet: a change CAPZ asked for (a count, a version, labels or taints) is being made.`
        : `ASO is writing the agent pool to AKS: a change, or ASO's periodic resync (it writes every AZURE_SYNC_PERIOD, 60 minutes by default).`,
    };
  if (a.asoReady === 'blocked')
    return {
      summary: `AKS runs an operation of its own on agent pool ${a.poolName}${a.operation ? ` (${short(a.operation.state, 64)})` : ''}; ASO waits for it`,
      detail: `ASO found the agent pool busy and does not write to it until it is done (ReconciliationBlocked)${message ? `: ${asSentence(short(message, 300))}` : '.'} Nothing in CAPZ or ASO asked for it: a node image upgrade, maintenance or the autoscaler.${a.infra?.conditions.some((c) => c.type === 'AgentPoolsReady' && c.severity === 'Error') ? ' The AzureManagedMachinePool shows AgentPoolsReady with severity Error for this: not a real failure.' : ''}`,
    };
  if (a.operation?.from === 'AKS')
    return {
      summary: `AKS reports agent pool ${a.poolName} ${short(a.operation.state, 64)}`,
      detail: `AKS runs an operation (provisioningState ${short(a.operation.state, 64)}). ASO has not seen it yet: it reads AKS when it reconciles the agent pool, so CAPZ keeps the pool as it was until then.`,
    };
  return {
    summary: `ASO's copy of agent pool ${a.poolName} says ${short(a.operation?.state ?? 'busy', 64)}`,
    detail: `ASO's last read of the agent pool found it in provisioningState ${short(a.operation?.state ?? '?', 64)}; ASO reads AKS again at its next reconcile (every AZURE_SYNC_PERIOD, 60 minutes by default), so this may be over by now.`,
  };
}

/** An AKS operation in progress, started by CAPZ through ASO or by AKS itself (K1, K4, K6). */
export function aksOperation(c: Context): Draft | null {
  const { model, aks: a } = c;
  if (!a || a.failure || !operationRuns(a)) return null;
  const closed = gateClosed(model);
  const { summary, detail } = operationKind(a);
  return {
    code: 'aks-operation',
    severity: closed ? 'warning' : 'info',
    summary: `${summary}${closed ? `: the ${a.infraKind} is not ready, so CAPI's gate is closed by design until it ends` : ''}.`,
    detail: `${detail} ${closed ? `CAPZ marks the ${a.infraKind} not ready for the whole operation, so the MachinePool keeps its list and replicas (no AKS analogue of CAPZ #5537 exists).` : `The ${a.infraKind} is still ready.`}`,
    suggestedAction:
      "None: it ends when ASO reports the agent pool Ready (an AzureManagedMachinePool re-checks every 20 s). A resync cannot shorten it. Do not change ASO's agent pool object: that can make ASO write to AKS.",
    ...asoFalseSince(a),
  };
}

/**
 * A perpetual update loop (K7): CAPZ's desired agent pool never matches ASO's object, so CAPZ writes it at every
 * reconcile, each write an AKS PUT, and the infra object goes not ready each time.
 */
export function aksUpdateLoop(c: Context): Draft | null {
  const { model, aks: a } = c;
  // lib/flapping keeps only the drops within the hour before this analysis.
  const drops = c.opts.readyDrops ?? [];
  if (!a || drops.length < FLAP_THRESHOLD) return null;
  const generation = a.aso?.generation != null ? ` (its generation is ${a.aso.generation} now)` : '';
  const capz = model.capzVersion ? ` CAPZ here is ${short(model.capzVersion, 32)}.` : '';
  return {
    code: 'aks-update-loop',
    severity: 'warning',
    // The count is in the detail: a summary that changed at every drop would be a new entry in the pool's history.
    summary: `The ${a.infraKind} keeps going not ready and ready again: CAPZ rewrites agent pool ${a.poolName} at every reconcile, a perpetual update loop.`,
    detail: `It went not ready ${drops.length} times in the last hour (poolscope counts the drops it saw; two between its analyses count as one). Each time CAPZ finds the agent pool it wants different from ASO's object${generation}, it writes it; ASO puts it to AKS, and the ${a.infraKind} is not ready until AKS is done. So CAPI's gate closes at every write, the MachinePool's InfrastructureReady flaps and its phase goes between Running and Provisioned, and each write spends AKS's agent pool PUT budget. Known causes: a spot pool's taint and label (CAPZ #3976), taints or labels taken out of the spec (CAPZ #4116), and tags Azure Policy rewrites (as for AzureMachinePools in CAPZ #5019).${capz}`,
    suggestedAction:
      "Find the field CAPZ and AKS disagree on (compare ASO's agent pool object across two writes) and set it in the pool's spec as AKS keeps it, or upgrade CAPZ to a release with the fix. Do not resync: a reconcile is one more write.",
    derivedSince: drops[0] as string,
  };
}

/** The count the MachinePool shows is ASO's cached copy while AKS's autoscaler moves the pool (K2, K3; #5985). */
export function aksReplicasCached(c: Context): Draft | null {
  const { model, aks: a } = c;
  if (!a?.autoscaling) return null;
  const ready = model.workload.state === 'ok' ? a.nodes.filter((n) => n.ready === true).length : null;
  // Without AKS's count, the registered Nodes of the pool (Ready or not: the autoscaler counts VMs, not Ready ones).
  const registered = model.workload.state === 'ok' ? a.nodes.length : null;
  const actual = a.liveCount ?? registered;
  const behind = a.cachedCount !== null && actual !== null && actual !== a.cachedCount;
  const numbers = [
    a.liveCount !== null ? `AKS counts ${a.liveCount}` : '',
    a.cachedCount !== null ? `ASO's cached count is ${a.cachedCount}` : '',
    ready !== null ? `${plural(ready, 'Ready Node')}` : '',
    model.mp.replicas !== null ? `MachinePool spec.replicas ${model.mp.replicas}` : '',
  ].filter(Boolean);
  const flavourText =
    model.flavour === 'aks-aso'
      ? "CAPZ sets the AzureASOManagedMachinePool's status.replicas and the MachinePool's spec.replicas from ASO's status.count, while its list follows the Nodes. The MachinePool's unavailable count can go negative meanwhile: an artefact, not a failure (CAPZ #5985)."
      : "CAPZ copies ASO's status.count into the MachinePool's spec.replicas, while the AzureManagedMachinePool's list and replicas follow the scale set's VMs at each reconcile. When ASO's resync moves the count, CAPZ patches the agent pool and the pool goes not ready for that write.";
  return {
    code: 'aks-replicas-cached',
    severity: behind ? 'warning' : 'info',
    summary: behind
      ? `MachinePool replicas lag AKS's autoscaler: they follow ASO's cached count (${a.cachedCount}), ${a.liveCount !== null ? `AKS counts ${a.liveCount}` : `the pool has ${plural(actual ?? 0, 'Node')}`}.`
      : "AKS's autoscaler sizes this pool; the MachinePool's replicas follow ASO's cached count.",
    detail: `${numbers.length ? `${numbers.join('; ')}. ` : ''}ASO refreshes its copy of the agent pool only when it reconciles it: at a spec change, or every AZURE_SYNC_PERIOD (60 minutes by default). ${flavourText}`,
    suggestedAction:
      "None: take the pool's size from AKS and its members from the Nodes. A reconcile re-lists the members but cannot refresh ASO's count; do not touch ASO's agent pool (that makes ASO write to AKS).",
  };
}

/** An AzureASOManagedMachinePool cannot map its Nodes: one without providerID, or none with its labels (K9). */
export function aksNodesUnmapped(c: Context): Draft | null {
  const { model, aks: a } = c;
  if (!a || model.flavour !== 'aks-aso' || model.workload.state !== 'ok') return null;
  const count = a.liveCount ?? a.cachedCount ?? 0;
  const none = a.nodes.length === 0 && count > 0;
  if (!a.nodesWithoutId.length && !none) return null;
  const stopped = a.powerState === 'Stopped';
  const labels = `kubernetes.azure.com/agentpool=${a.poolName} and kubernetes.azure.com/cluster=<the node resource group, cut to 63 characters>`;
  return {
    code: 'aks-nodes-unmapped',
    severity: 'warning',
    summary: a.nodesWithoutId.length
      ? `${plural(a.nodesWithoutId.length, 'Node')} of agent pool ${a.poolName} ${a.nodesWithoutId.length === 1 ? 'has' : 'have'} no providerID: CAPZ keeps the AzureASOManagedMachinePool not ready until ${a.nodesWithoutId.length === 1 ? 'it does' : 'they do'}.`
      : `No Node carries agent pool ${a.poolName}'s label while AKS counts ${count}: CAPZ lists none, and CAPI keeps the old MachinePool list.`,
    detail: `CAPZ lists the Nodes labelled ${labels} and builds the list from their spec.providerID.${a.nodesWithoutId.length ? ` Without providerID: ${listSome(a.nodesWithoutId, 10)}; CAPZ requeues and stays not ready.` : ' CAPI does not copy an empty list while replicas are above 0, so the MachinePool keeps its old list and its nodeRefs go stale.'}${stopped ? ' The agent pool is Stopped (powerState), which explains Nodes gone.' : ' Before CAPZ v1.17.0 a node resource group name over 63 characters matched no Node (CAPZ #5055).'}`,
    suggestedAction: stopped
      ? 'Start the agent pool if it should run; nothing is wrong with CAPZ.'
      : 'Fix the Node registration or labels (upgrade CAPZ to v1.17 or later for a long node resource group name). A resync helps only after that.',
  };
}

/**
 * AKS refused or failed the agent pool's read, or it could not be asked (ASO's agent pool object, whose status.id
 * names the agent pool, is missing): the state shown is ASO's cached copy, or nothing.
 */
export function aksUnread(c: Context): Draft | null {
  const { model, aks: a } = c;
  const s = model.aks?.agentPool;
  const asoMissing = model.aks?.aso.state === 'not-found';
  if (!a || !s) return null;
  if (s.state === 'throttled' || s.state === 'unreachable' || s.state === 'not-found') {
    const cached = a.aso
      ? "what is shown of AKS is ASO's cached copy, up to AZURE_SYNC_PERIOD old"
      : 'nothing is known of AKS';
    return {
      code: 'azure-unread',
      severity: 'warning',
      summary: `AKS agent pool ${a.poolName} could not be read${s.state === 'throttled' ? ' (AKS is throttling)' : ''}: ${cached}.`,
      detail: `AKS answered: ${asSentence(short(s.error, 400))} Without AKS's own answer poolscope cannot see a running or failed operation before ASO does, nor the live count; the drift shown compares the lists with the Nodes, which it does not need AKS for.`,
      suggestedAction:
        "Check poolscope's Azure credentials and its reader role on the managed cluster; if AKS throttles, poolscope waits out Retry-After.",
    };
  }
  const noScaleSet = vmsUnread(c);
  if (noScaleSet || s.state !== 'unknown' || !asoMissing) return noScaleSet;
  return {
    code: 'azure-unread',
    severity: 'warning',
    summary: `ASO's ManagedClustersAgentPool for agent pool ${a.poolName} is missing: nothing is known of AKS.`,
    detail: `poolscope finds the AKS agent pool by the id ASO records on that object, and CAPZ reconciles the pool through it, so without it neither AKS's state nor ASO's copy of it is known. The drift shown compares the lists with the Nodes.`,
    suggestedAction:
      'Check that ASO runs and that CAPZ has created the ManagedClustersAgentPool (kubectl get managedclustersagentpools -A); CAPZ recreates it at its next reconcile.',
  };
}

/** An agent pool's ARM id, its parts named as `az aks` takes them. */
const AGENT_POOL_ID =
  /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.ContainerService\/managedClusters\/([^/]+)\/agentPools\/([^/]+)$/i;

/**
 * An agent pool with no scale set behind it (AKS says its type is VirtualMachines or AvailabilitySet), whose machines
 * AKS could not list (or has not yet): its VMs are not known now.
 */
function vmsUnread(c: Context): Draft | null {
  const { model, aks: a } = c;
  const type = scaleSetlessType(a?.live?.type ?? null);
  const az = model.azure;
  if (!a?.live || !type || az.state === 'ok') return null;
  const id = AGENT_POOL_ID.exec(a.live.id);
  const list = id
    ? ` \`az aks machine list --subscription ${shellQuote(id[1] as string)} -g ${shellQuote(id[2] as string)} --cluster-name ${shellQuote(id[3] as string)} --nodepool-name ${shellQuote(id[4] as string)}\` lists them.`
    : '';
  const ammp =
    a.infra?.flavour === 'aks-managed'
      ? " CAPZ reads an AzureManagedMachinePool's VMs from a scale set, and makes every pool it creates of scale sets: this one was made or changed outside CAPZ."
      : '';
  const answered = az.state === 'unknown' ? '' : `AKS answered: ${asSentence(short(az.error, 400))} `;
  return {
    code: 'azure-unread',
    severity: az.state === 'unknown' ? 'info' : 'warning',
    summary: `Agent pool ${a.poolName} is of type ${type}, with no scale set, and AKS's list of its machines ${az.state === 'throttled' ? 'is throttled' : az.state === 'unknown' ? 'is not read yet' : 'could not be read'}: its VMs are not known now.`,
    detail: `AKS runs the VMs of a ${type} pool on their own, not in a scale set; poolscope reads them through AKS's machines API, which names each VM but not its state. ${answered}The drift shown compares the lists with the Nodes: a VM that never joined as a Node is not seen.${ammp}`,
    suggestedAction: `To see the pool's VMs, ask AKS.${list}`,
  };
}

/** Findings that say why an AKS infra object is not ready: gate-closed would only repeat them. */
const EXPLAINS_NOT_READY: readonly FindingCode[] = [
  'readiness-gate-frozen',
  'aks-update-loop',
  'aks-pool-failed',
  'aks-operation',
  'aks-nodes-unmapped',
  'paused',
  'workload-cluster-unreachable',
  'management-cluster-unreachable',
];

/** Not ready with nothing waiting behind the gate, and no other finding to say why. */
export function aksGateClosed(c: Context, found: ReadonlySet<FindingCode>): Draft | null {
  const { model, aks: a } = c;
  if (!a?.infra || !gateClosed(model)) return null;
  if (EXPLAINS_NOT_READY.some((code) => found.has(code))) return null;
  return {
    code: 'gate-closed',
    severity: 'info',
    summary: `${a.infraKind} not ready (${aksNotReadyCause(a, model)}): CAPI copies no list until it is; nothing waits yet.`,
    detail: `${GATE} It is ${infraReady(model) === null ? 'unset' : 'false'}. The MachinePool list agrees with ${liveWords(c)} now; a member that comes or goes meanwhile stays out of (or in) it until the ${a.infraKind} is ready again.`,
    suggestedAction: `None while nothing waits. If it stays not ready, look at ASO's agent pool conditions and the CAPZ controller logs.`,
  };
}

/** The lists agree with the Nodes, and no source says anything is off. */
export function aksHealthy(c: Context, found: ReadonlySet<FindingCode>): Draft | null {
  const { model, drift, aks: a } = c;
  if (!a || found.size > 0 || drift.length > 0 || model.workload.state !== 'ok') return null;
  const live = model.aks?.agentPool.state === 'ok';
  return {
    code: 'healthy',
    severity: 'info',
    summary: 'Healthy: every source agrees.',
    detail: `The ${a.infraKind} and MachinePool lists agree with the Nodes of agent pool ${a.poolName}, and no operation runs${live ? ', as AKS itself says' : a.aso ? " as far as ASO's copy of the agent pool says (AKS itself was not read)" : ''}.`,
    suggestedAction: 'None.',
  };
}
