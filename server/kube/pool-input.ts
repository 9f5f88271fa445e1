// A pool's input for the pool model, built at every analysis from its management cluster's caches (through their
// indexes, not by filtering them) and from its workload cluster's Nodes.

import type { PoolInput } from '@/lib/pool-model';
import { namedScaleSetKey } from '@/lib/provider-id';
import type { KubeObject } from '@/lib/unstructured';
import { foreignKeysOf, poolIds } from './pool-ids';
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

/** The objects that make up one pool, as the pool model takes them; null when the MachinePool is gone. */
export function buildPoolInput(
  poolKey: string,
  index: PoolIndex,
  workloads: Workloads,
  facts: ContextFacts,
): PoolInput | null {
  const mp = index.caches.mp.get(poolKey);
  if (!mp) return null;
  const ns = String(mp.metadata?.namespace);
  const ampName =
    (mp.spec?.template as { spec?: { infrastructureRef?: { name?: string } } } | undefined)?.spec?.infrastructureRef
      ?.name ?? String(mp.metadata?.name);
  const amp = index.caches.amp.get(`${ns}/${ampName}`) ?? null;
  const ampms = index.ampmsOf(`${ns}/${ampName}`);
  const machines = index.machinesOf(`${ns}/${mp.metadata?.name}`);
  const clusterName = String(mp.spec?.clusterName ?? '');
  const cluster = index.caches.cluster.get(`${ns}/${clusterName}`) ?? null;
  const w = workloads.get(`${ns}/${clusterName}`);
  const departedAmpms = index.departedOf(`${ns}/${ampName}`);
  const otherScaleSetPools = otherScaleSetPoolsOf(index, mp, amp);
  return {
    ...(departedAmpms ? { departedAmpms } : {}),
    ...(otherScaleSetPools ? { otherScaleSetPools } : {}),
    context: facts.context,
    capzVersion: facts.capzVersion,
    machinePool: mp,
    azureMachinePool: amp,
    azureMachinePoolMachines: ampms,
    machines,
    cluster,
    workload: w
      ? w.data(amp ? index.ampScaleSetKey(amp) : null, poolIds(mp, amp, ampms, machines))
      : {
          state: 'unknown',
          reason: cluster ? 'the workload cluster is not read yet' : `Cluster ${clusterName} not found`,
        },
  };
}
