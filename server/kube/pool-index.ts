// A management cluster's caches of the CAPI and CAPZ kinds a pool is made of, with the indexes that find a pool's
// objects and the pools a change concerns: every informer event and every analysis asks them, so none filters a
// whole cache. Tells which pools changed as the informers store and drop objects.

import type { DepartedAmpm } from '@/lib/pool-model';
import { OTHER_SCALE_SET, joinKey, scaleSetKeyOf } from '@/lib/provider-id';
import { agentPoolNameOf, asoAgentPoolObjectName } from '@/lib/aks-model';
import {
  AKS_AGENT_POOL_LABEL,
  AMPM_POOL_LABEL,
  MACHINE_POOL_LABEL as POOL_LABEL,
  labelOf,
  nameOf,
  namespaceOf,
  providerIdOf,
} from '@/lib/slim';
import type { KubeObject } from '@/lib/unstructured';
import { addTo, removeFrom } from './key-index';
import { foreignKeysOf } from './pool-ids';

/**
 * The cached kinds: MachinePool, AzureMachinePool, AzureMachinePoolMachine, Machine and Cluster; for AKS pools,
 * AzureManagedMachinePool, AzureASOManagedMachinePool and ASO's ManagedClustersAgentPool (when served).
 */
export type KindName = 'mp' | 'amp' | 'ampm' | 'machine' | 'cluster' | 'ammp' | 'asomp' | 'asoap';

/** The cache of each infra kind a MachinePool's infrastructureRef may name. */
const INFRA_CACHE: Record<string, 'amp' | 'ammp' | 'asomp'> = {
  AzureMachinePool: 'amp',
  AzureManagedMachinePool: 'ammp',
  AzureASOManagedMachinePool: 'asomp',
};

/** The infra kinds a MachinePool's infrastructureRef names by name (their pools are found by that name). */
const INFRA_KINDS: ReadonlySet<KindName> = new Set<KindName>(['amp', 'ammp', 'asomp']);

/**
 * How long a deleted AMPM is remembered (PoolInput.departedAmpms): well beyond the longest wait for a pool's next
 * Azure read (its 2-minute slow lane, or a budget shared by many moving pools).
 */
const DEPARTED_MS = 15 * 60_000;

const key = (o: { metadata?: { name?: string; namespace?: string } }) =>
  `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/**
 * Whether an update of a pool-level object (MachinePool, AzureMachinePool, Cluster) is someone acting on the
 * pool (spec but its providerIDList, annotations, labels, deletion) rather than a controller writing status or
 * the lists: those are analysed first, ahead of a fleet's instance churn.
 */
function userChange(o: KubeObject, old: KubeObject | undefined): boolean {
  if (!old) return true;
  const a = o.metadata ?? {};
  const b = old.metadata ?? {};
  return (
    (a.generation !== b.generation && ownSpec(o) !== ownSpec(old)) ||
    a.deletionTimestamp !== b.deletionTimestamp ||
    JSON.stringify(a.annotations ?? {}) !== JSON.stringify(b.annotations ?? {}) ||
    JSON.stringify(a.labels ?? {}) !== JSON.stringify(b.labels ?? {})
  );
}

/**
 * A spec's JSON but its providerIDList: CAPZ and CAPI write the lists as instances come and go (a new
 * generation each time, a few times a minute per pool under churn), which is not someone acting on the pool.
 */
function ownSpec(o: KubeObject): string {
  const { providerIDList: _lists, ...rest } = (o.spec ?? {}) as Record<string, unknown>;
  return JSON.stringify(rest);
}

/** The objects of a cache that an index names (one array, built as the index is read: this runs at every analysis). */
function cached(cache: Map<string, KubeObject>, keys: Set<string> | undefined): KubeObject[] {
  const out: KubeObject[] = [];
  if (keys) {
    for (const k of keys) {
      const o = cache.get(k);
      if (o) out.push(o);
    }
  }
  return out;
}

export class PoolIndex {
  readonly caches: Record<KindName, Map<string, KubeObject>> = {
    mp: new Map(),
    amp: new Map(),
    ampm: new Map(),
    machine: new Map(),
    cluster: new Map(),
    ammp: new Map(),
    asomp: new Map(),
    asoap: new Map(),
  };
  /**
   * An ASO agent pool's infra objects by `namespace/agent pool object name`: the AzureManagedMachinePool of that
   * name, or the AzureASOManagedMachinePools that embed it (see asoApOwners).
   */
  private readonly asompsByAgentPool = new Map<string, Set<string>>();
  /** AMPM keys by `${namespace}/${amp name}`; Machine keys by `${namespace}/${pool name}`. */
  private readonly ampmsByAmp = new Map<string, Set<string>>();
  private readonly machinesByPool = new Map<string, Set<string>>();
  /** AMPMs deleted lately, by AzureMachinePool (`namespace/name`), oldest first: see PoolInput.departedAmpms. */
  private readonly departed = new Map<string, DepartedAmpm[]>();
  /** MachinePool keys by `namespace/cluster` and by `namespace/AzureMachinePool name` (see indexMp). */
  private readonly mpsByCluster = new Map<string, Set<string>>();
  private readonly mpsByAmp = new Map<string, Set<string>>();
  /**
   * An AzureMachinePool's scale-set key (see scaleSetKeyOf), worked out once per stored object: every Node
   * event of a workload cluster asks it of each of the cluster's pools.
   */
  private readonly ampKeys = new WeakMap<KubeObject, string>();

  constructor(
    /**
     * Called with pool keys (`namespace/name`) whose inputs changed; `urgent` for a change someone made to the
     * pool itself (see ContextSource).
     */
    private readonly onChange: (pools: string[], urgent?: boolean) => void,
  ) {}

  /**
   * The pools whose input the changed Nodes are part of: the pools of their scale set, and pools whose lists
   * name them; every pool of the cluster for Nodes whose providerID says no scale set (or for none at all).
   */
  poolsOfNodes(ns: string, cluster: string, nodes: KubeObject[]): string[] {
    const pools = this.poolsOfCluster(ns, cluster);
    if (nodes.length === 0) return pools;
    const keys = new Set(nodes.map((n) => scaleSetKeyOf(providerIdOf(n))));
    if ([...keys].some((k) => k === OTHER_SCALE_SET || k.endsWith('/~flex'))) return pools;
    let ids: Set<string> | null = null;
    let agentPools: Set<string> | null = null;
    return pools.filter((p) => {
      const infra = this.infraOf(p);
      if (infra && infra.kind !== 'amp') {
        // An AKS pool's Nodes carry its agent pool's name: a Node no list names yet is its all the same.
        agentPools ??= new Set(nodes.flatMap((n) => n.metadata?.labels?.[AKS_AGENT_POOL_LABEL] ?? []));
        const name = infra.obj ? agentPoolNameOf(infra.obj) : null;
        if (name !== null && agentPools.has(name)) return true;
      }
      const amp = infra?.kind === 'amp' ? infra.obj : undefined;
      const own = amp ? this.ampScaleSetKey(amp) : null;
      if (own !== null && keys.has(own)) return true;
      // Node churn reaches here for every pool of the cluster: a Node outside the pool's scale set concerns it
      // only if a list names it, among the list's IDs outside that scale set (found once per list).
      ids ??= new Set(
        nodes.flatMap((n) => {
          const id = providerIdOf(n);
          return typeof id === 'string' ? [joinKey(id)] : [];
        }),
      );
      const found = ids;
      const lists = [this.caches.mp.get(p)?.spec?.providerIDList, infra?.obj?.spec?.providerIDList];
      return lists.some((l) => foreignKeysOf(l, own).some((k) => found.has(k)));
    });
  }

  /** An AzureMachinePool's scale-set key (see ampKeys). */
  ampScaleSetKey(amp: KubeObject): string {
    let k = this.ampKeys.get(amp);
    if (k === undefined) {
      k = scaleSetKeyOf(amp.spec?.providerID);
      this.ampKeys.set(amp, k);
    }
    return k;
  }

  /** The MachinePools of a cluster (by `spec.clusterName`). */
  poolsOfCluster(ns: string, cluster: string): string[] {
    return [...(this.mpsByCluster.get(`${ns}/${cluster}`) ?? [])];
  }

  /** The MachinePools whose infrastructureRef names an AzureMachinePool. */
  poolsOfAmp(ns: string, amp: string): string[] {
    return [...(this.mpsByAmp.get(`${ns}/${amp}`) ?? [])];
  }

  /** An AzureMachinePool's AMPMs (by `namespace/name`), as cached. */
  ampmsOf(amp: string): KubeObject[] {
    return cached(this.caches.ampm, this.ampmsByAmp.get(amp));
  }

  /** A MachinePool's Machines (by `namespace/name`), as cached. */
  machinesOf(pool: string): KubeObject[] {
    return cached(this.caches.machine, this.machinesByPool.get(pool));
  }

  /**
   * Files a MachinePool under its cluster and its AzureMachinePool (or takes it out): every Node, AMPM and
   * AzureMachinePool event asks which pools it concerns, and filtering all of a context's MachinePools for each
   * (1,000 at 100k VMs, ~100 events a second under churn) was a share of the collector's CPU of its own.
   */
  private indexMp(m: KubeObject, add: boolean): void {
    const k = key(m);
    const ns = String(m.metadata?.namespace ?? '');
    const cluster = m.spec?.clusterName;
    const amp = (m.spec?.template as { spec?: { infrastructureRef?: { name?: unknown } } } | undefined)?.spec
      ?.infrastructureRef?.name;
    const file = add ? addTo : removeFrom;
    if (typeof cluster === 'string') file(this.mpsByCluster, `${ns}/${cluster}`, k);
    if (typeof amp === 'string') file(this.mpsByAmp, `${ns}/${amp}`, k);
  }

  /**
   * Indexes `o` (in place of `old`) and tells which pools changed. `k` is the informer's key for it: the indexes of
   * AMPMs and Machines hold the string the cache holds (a copy of its own per object was ~13 MB at 100k VMs). An
   * update in the same pool leaves the index as it is — the cache keeps the key it first stored, so the index must
   * too; an update's key is a new string of the same characters.
   */
  indexed(kind: KindName, o: KubeObject, k: string, ns: string, old: KubeObject | undefined): void {
    if (kind === 'ampm') {
      const pool = labelOf(o, AMPM_POOL_LABEL);
      if (!old || labelOf(old, AMPM_POOL_LABEL) !== pool) {
        if (old) removeFrom(this.ampmsByAmp, `${ns}/${labelOf(old, AMPM_POOL_LABEL)}`, k);
        addTo(this.ampmsByAmp, `${ns}/${pool}`, k);
      }
      this.onChange(this.poolsOfAmp(ns, String(pool)));
    } else if (kind === 'machine') {
      const pool = labelOf(o, POOL_LABEL);
      if (!old || labelOf(old, POOL_LABEL) !== pool) {
        if (old) removeFrom(this.machinesByPool, `${ns}/${labelOf(old, POOL_LABEL)}`, k);
        addTo(this.machinesByPool, `${ns}/${pool}`, k);
      }
      this.onChange([`${ns}/${pool}`]);
    } else if (kind === 'mp') {
      if (old) this.indexMp(old, false);
      this.indexMp(o, true);
      this.onChange([k], userChange(o, old));
    } else if (INFRA_KINDS.has(kind)) {
      if (kind === 'asomp') this.indexAsomp(o, old, ns);
      this.onChange(this.poolsOfAmp(ns, String(o.metadata?.name)), userChange(o, old));
    } else if (kind === 'asoap') {
      this.onChange(this.poolsOfAgentPool(ns, String(o.metadata?.name)));
    } else if (kind === 'cluster') {
      this.onChange(this.poolsOfCluster(ns, String(o.metadata?.name)), userChange(o, old));
    }
  }

  /** After the informer dropped `o` (a Cluster's workload cluster is the ContextSource's to stop). */
  removed(kind: KindName, o: KubeObject, k: string): void {
    const ns = namespaceOf(o) ?? '';
    if (kind === 'ampm') {
      const amp = `${ns}/${labelOf(o, AMPM_POOL_LABEL)}`;
      removeFrom(this.ampmsByAmp, amp, k);
      const pid = providerIdOf(o);
      if (typeof pid === 'string' && pid) {
        const list = this.departedOf(amp) ?? [];
        list.push({ providerID: pid, at: Date.now() });
        this.departed.set(amp, list);
      }
    }
    if (kind === 'machine') removeFrom(this.machinesByPool, `${ns}/${labelOf(o, POOL_LABEL)}`, k);
    if (kind === 'mp') this.indexMp(o, false);
    if (kind === 'amp') this.departed.delete(`${ns}/${nameOf(o)}`);
    if (kind === 'asomp') this.indexAsomp(undefined, o, ns);
    this.onChange(this.poolsOfRemoved(kind, o, k, ns));
  }

  /** The pools an object that went concerned. */
  private poolsOfRemoved(kind: KindName, o: KubeObject, k: string, ns: string): string[] {
    if (kind === 'mp') return [k];
    if (kind === 'ampm') return this.poolsOfAmp(ns, String(labelOf(o, AMPM_POOL_LABEL)));
    if (INFRA_KINDS.has(kind)) return this.poolsOfAmp(ns, String(nameOf(o)));
    if (kind === 'asoap') return this.poolsOfAgentPool(ns, String(nameOf(o)));
    if (kind === 'machine') return [`${ns}/${labelOf(o, POOL_LABEL)}`];
    return this.poolsOfCluster(ns, String(nameOf(o)));
  }

  /** Files an AzureASOManagedMachinePool under the agent pool object it embeds (in place of `old`'s). */
  private indexAsomp(o: KubeObject | undefined, old: KubeObject | undefined, ns: string): void {
    const before = old ? asoAgentPoolObjectName(old, 'asomp') : null;
    const after = o ? asoAgentPoolObjectName(o, 'asomp') : null;
    const name = String((o ?? old)?.metadata?.name);
    if (before !== null && before !== after) removeFrom(this.asompsByAgentPool, `${ns}/${before}`, name);
    if (after !== null) addTo(this.asompsByAgentPool, `${ns}/${after}`, name);
  }

  /**
   * The pools of an ASO agent pool object: those whose AzureManagedMachinePool has its name (CAPZ names the agent
   * pool object after it), and those whose AzureASOManagedMachinePool embeds it.
   */
  poolsOfAgentPool(ns: string, agentPool: string): string[] {
    const pools = new Set(this.poolsOfAmp(ns, agentPool));
    for (const asomp of this.asompsByAgentPool.get(`${ns}/${agentPool}`) ?? [])
      for (const p of this.poolsOfAmp(ns, asomp)) pools.add(p);
    return [...pools];
  }

  /**
   * A pool's infra object: the one its MachinePool's infrastructureRef names (by kind and name; an AzureMachinePool
   * of the pool's own name when it names none), from the cache of its kind.
   */
  infraOf(poolKey: string): { kind: 'amp' | 'ammp' | 'asomp'; obj: KubeObject | undefined } | undefined {
    const mp = this.caches.mp.get(poolKey);
    if (!mp) return undefined;
    const ns = String(mp.metadata?.namespace);
    const ref = (mp.spec?.template as { spec?: { infrastructureRef?: { name?: string; kind?: string } } } | undefined)
      ?.spec?.infrastructureRef;
    const named = ref?.kind ?? 'AzureMachinePool';
    // Own keys only: the kind is read from the cluster and may be "toString" or "__proto__".
    const kind = Object.hasOwn(INFRA_CACHE, named) ? (INFRA_CACHE[named] as 'amp' | 'ammp' | 'asomp') : 'amp';
    return { kind, obj: this.caches[kind].get(`${ns}/${ref?.name ?? String(mp.metadata?.name)}`) };
  }

  /**
   * ASO's ManagedClustersAgentPool of an AKS pool: CAPZ names an AzureManagedMachinePool's after it, and an
   * AzureASOManagedMachinePool embeds its own. Undefined for a self-managed pool, or when there is none.
   */
  asoAgentPoolOf(poolKey: string): KubeObject | undefined {
    const infra = this.infraOf(poolKey);
    if (!infra?.obj || infra.kind === 'amp') return undefined;
    const name = asoAgentPoolObjectName(infra.obj, infra.kind);
    return name === null ? undefined : this.caches.asoap.get(`${String(infra.obj.metadata?.namespace)}/${name}`);
  }

  /** The AzureMachinePool a pool's MachinePool names; undefined for an AKS pool. */
  ampOf(poolKey: string): KubeObject | undefined {
    const infra = this.infraOf(poolKey);
    return infra?.kind === 'amp' ? infra.obj : undefined;
  }

  /** An AzureMachinePool's AMPMs deleted within DEPARTED_MS (those before are forgotten), or undefined. */
  departedOf(amp: string): DepartedAmpm[] | undefined {
    const list = this.departed.get(amp);
    if (!list) return undefined;
    const cutoff = Date.now() - DEPARTED_MS;
    let old = 0;
    while (old < list.length && (list[old] as DepartedAmpm).at < cutoff) old++;
    if (old) list.splice(0, old);
    if (list.length) return list;
    this.departed.delete(amp);
    return undefined;
  }
}
