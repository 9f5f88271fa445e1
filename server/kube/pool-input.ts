// A pool's input for the pool model, built at every analysis from its management cluster's caches (through their
// indexes, not by filtering them) and from its workload cluster's Nodes.

import { agentPoolNameOf } from '@/lib/aks-model';
import type { PoolInput } from '@/lib/pool-model';
import { namedScaleSetKey, scaleSetKeyOf } from '@/lib/provider-id';
import type { KubeObject } from '@/lib/unstructured';
import { foreignKeysOf, poolIds } from './pool-ids';
import { NO_AKS_KINDS, type AksKinds } from './aks-kinds';
import type { PoolIndex } from './pool-index';
import type { Workloads } from './workloads';

/** What a pool's input says of its management cluster beside its objects. */
interface ContextFacts {
  readonly context: string;
  readonly capzVersion: string | null;
}

/**
 * For the other scale sets a pool's lists name (rare: a hand-edited or stale list), the MachinePool whose
 * AzureMachinePool has each, as `namespace/name`; undefined when the lists name none. Looked up among every
 * AzureMachinePool of the context, only then.
 */
function otherScaleSetPoolsOf(
  index: PoolIndex,
  mp: KubeObject,
  amp: KubeObject | null,
): Record<string, string> | undefined {
  const own = amp ? index.ampScaleSetKey(amp) : null;
  const wanted = new Set<string>();
  for (const list of [mp.spec?.providerIDList, amp?.spec?.providerIDList]) {
    for (const k of foreignKeysOf(list, own)) {
      const s = namedScaleSetKey(`azure://${k}`);
      if (s) wanted.add(s);
    }
  }
  if (!wanted.size) return undefined;
  const out: Record<string, string> = {};
  for (const [k, a] of index.caches.amp) {
    const s = index.ampScaleSetKey(a);
    if (!wanted.has(s) || out[s]) continue;
    const [ns, name] = k.split('/') as [string, string];
    const pool = index.poolsOfAmp(ns, name)[0];
    if (pool) out[s] = pool;
  }
  return out;
}

/**
 * An AKS pool's infra object and ASO's agent pool object: the one named after an AzureManagedMachinePool, or the one
 * an AzureASOManagedMachinePool embeds. Not known (rather than missing) when the cluster does not serve ASO's kind.
 */
function aksInputOf(
  index: PoolIndex,
  poolKey: string,
  infra: { kind: 'ammp' | 'asomp'; obj: KubeObject | undefined },
  aksKinds: AksKinds,
): NonNullable<PoolInput['aks']> {
  const obj = infra.obj ?? null;
  if (!aksKinds.asoap)
    return {
      infra: obj,
      asoAgentPool: { state: 'unknown', reason: "the cluster does not serve ASO's ManagedClustersAgentPool" },
    };
  return { infra: obj, asoAgentPool: index.asoAgentPoolOf(poolKey) ?? null };
}

/** The scale-set key of the first ID the lists hold (see scaleSetKeyOf), or null when they hold none. */
function firstScaleSetKey(...lists: unknown[]): string | null {
  for (const list of lists) {
    const id = Array.isArray(list) ? list.find((x): x is string => typeof x === 'string') : undefined;
    if (id) return scaleSetKeyOf(id);
  }
  return null;
}

/** The objects that make up one pool, as the pool model takes them; null when the MachinePool is gone. */
export function buildPoolInput(
  poolKey: string,
  index: PoolIndex,
  workloads: Workloads,
  facts: ContextFacts,
  aksKinds: AksKinds = NO_AKS_KINDS,
): PoolInput | null {
  const mp = index.caches.mp.get(poolKey);
  if (!mp) return null;
  const ns = String(mp.metadata?.namespace);
  const ampName =
    (mp.spec?.template as { spec?: { infrastructureRef?: { name?: string } } } | undefined)?.spec?.infrastructureRef
      ?.name ?? String(mp.metadata?.name);
  const infra = index.infraOf(poolKey);
  const amp = infra?.kind === 'amp' ? (infra.obj ?? null) : null;
  const aks =
    infra && infra.kind !== 'amp'
      ? aksInputOf(index, poolKey, { kind: infra.kind, obj: infra.obj }, aksKinds)
      : undefined;
  const ampms = index.ampmsOf(`${ns}/${ampName}`);
  const machines = index.machinesOf(`${ns}/${mp.metadata?.name}`);
  const clusterName = String(mp.spec?.clusterName ?? '');
  const cluster = index.caches.cluster.get(`${ns}/${clusterName}`) ?? null;
  const w = workloads.get(`${ns}/${clusterName}`);
  const departedAmpms = index.departedOf(`${ns}/${ampName}`);
  const otherScaleSetPools = otherScaleSetPoolsOf(index, mp, amp);
  const agentPool = infra?.obj && infra.kind !== 'amp' ? agentPoolNameOf(infra.obj) : null;
  // An AKS pool's IDs are its node resource group's scale set's: named by the first listed, its Nodes are taken at
  // once rather than looked up one ID at a time.
  const scaleSetKey = amp
    ? index.ampScaleSetKey(amp)
    : aks
      ? firstScaleSetKey(aks.infra?.spec?.providerIDList, mp.spec?.providerIDList)
      : null;
  return {
    ...(departedAmpms ? { departedAmpms } : {}),
    ...(otherScaleSetPools ? { otherScaleSetPools } : {}),
    ...(aks ? { aks } : {}),
    context: facts.context,
    capzVersion: facts.capzVersion,
    machinePool: mp,
    azureMachinePool: amp,
    azureMachinePoolMachines: ampms,
    machines,
    cluster,
    workload: w
      ? w.data(scaleSetKey, poolIds(mp, amp ?? aks?.infra ?? null, ampms, machines), agentPool)
      : {
          state: 'unknown',
          reason: cluster ? 'the workload cluster is not read yet' : `Cluster ${clusterName} not found`,
        },
  };
}
