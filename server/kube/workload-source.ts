import 'server-only';
// One workload cluster's Nodes: a Node informer built from the kubeconfig its management cluster holds for it,
// the Nodes indexed by scale set, and what a pool's analysis takes of them (its own Nodes, or why they are unknown).

import type { SourceHealth } from '@/lib/api-types';
import type { PoolInput } from '@/lib/pool-model';
import { OTHER_SCALE_SET, joinKey, scaleSetKeyOf } from '@/lib/provider-id';
import { AKS_AGENT_POOL_LABEL, providerIdOf } from '@/lib/slim';
import type { KubeObject } from '@/lib/unstructured';
import type { PooledKubeConfig } from './calls';
import { Informer } from './informer';
import { addTo, removeFrom } from './key-index';
import { type PoolIds, flexKeyOf, foreignKeysOf, rawIdsOf } from './pool-ids';
import { nextHealth } from './source-health';
import {
  UnsafeKubeconfigError,
  parseWorkloadKubeconfig,
  workloadKubeConfig,
  type ControlPlaneEndpoint,
} from './workload-kubeconfig';

/** An AKS Node's agent pool, from its label. */
function agentPoolOf(o: KubeObject): string | undefined {
  return o.metadata?.labels?.[AKS_AGENT_POOL_LABEL];
}

export class WorkloadSource {
  nodes = new Map<string, KubeObject>();
  /**
   * Node names by where their providerID points and by the ID itself (case-insensitive): a pool's analysis
   * takes its own Nodes, not the cluster's thousands, and a Node's change concerns its own pool.
   */
  private readonly byScaleSet = new Map<string, Set<string>>();
  /** Node names by AKS agent pool (label kubernetes.azure.com/agentpool): an AKS pool's Nodes, listed or not. */
  private readonly byAgentPool = new Map<string, Set<string>>();
  health: SourceHealth;
  private informer: Informer | null = null;
  /** The running informer's KubeConfig: its connections are closed with it. */
  private kc: PooledKubeConfig | null = null;
  listed = false;
  /** The kubeconfig (and endpoint) the running informer was built from, to restart only when either changes. */
  kubeconfig: string | null = null;

  constructor(
    readonly cluster: string,
    private readonly namespace: string,
    context: string,
    /** The Nodes that changed (none: every pool's input changed, e.g. the source's state). */
    private readonly onChange: (nodes: KubeObject[]) => void,
    private readonly onRestart: () => void = () => {},
  ) {
    this.health = { name: cluster, context, kind: 'workload', state: 'starting', since: new Date().toISOString() };
  }

  /** Files a Node's name (`name`: the informer's key for it, the cache's string) under its scale set, or takes it out. */
  private index(o: KubeObject, add: boolean, name: string): void {
    (add ? addTo : removeFrom)(this.byScaleSet, scaleSetKeyOf(providerIdOf(o)), name);
    const pool = agentPoolOf(o);
    if (pool !== undefined) (add ? addTo : removeFrom)(this.byAgentPool, pool, name);
  }

  /**
   * The Nodes whose providerID has this join key: looked for among their scale set's Nodes (a rare lookup — an
   * ID outside the pool's own scale set — which is why no index by ID is kept: it held a lower-cased copy of
   * every Node's providerID).
   */
  private byJoinKey(key: string): Set<string> {
    const out = new Set<string>();
    // The key is the ID lower-cased without `azure://`: its scale set's Nodes, and those whose providerID does
    // not parse (filed apart, and one of them may have the same key: the prefix missing).
    for (const where of new Set([scaleSetKeyOf(`azure://${key}`), OTHER_SCALE_SET])) {
      for (const n of this.byScaleSet.get(where) ?? []) {
        const pid = providerIdOf(this.nodes.get(n) ?? {});
        if (typeof pid === 'string' && joinKey(pid) === key) out.add(n);
      }
    }
    return out;
  }

  /**
   * The Nodes a pool's analysis can join: those in its scale set (and, for flexible orchestration, its
   * resource group's flexible VMs), those of its AKS agent pool, and those whose providerID another of its sources
   * names.
   */
  nodesFor(scaleSetKey: string | null, ids: PoolIds, agentPool: string | null = null): KubeObject[] {
    const names = new Set<string>();
    const take = (set: Set<string> | undefined) => {
      if (set) for (const n of set) names.add(n);
    };
    if (agentPool !== null) take(this.byAgentPool.get(agentPool));
    if (scaleSetKey) {
      take(this.byScaleSet.get(scaleSetKey));
      take(this.byScaleSet.get(flexKeyOf(scaleSetKey)));
    }
    // A listed ID in the pool's own scale set names a Node taken above already: only the others (found once
    // per list) are looked up. An AMPM's or Machine's ID is nearly always in a list (found there by its exact
    // string), so it is lower-cased only when it is not.
    for (const list of ids.lists) for (const k of foreignKeysOf(list, scaleSetKey)) take(this.byJoinKey(k));
    const listed = ids.lists.map(rawIdsOf);
    for (const objects of ids.objects) {
      for (const o of objects) {
        const id = providerIdOf(o);
        if (typeof id === 'string' && !listed.some((l) => l?.has(id))) take(this.byJoinKey(joinKey(id)));
      }
    }
    const out: KubeObject[] = [];
    for (const n of names) {
      const node = this.nodes.get(n);
      if (node) out.push(node);
    }
    return out;
  }

  /** (Re)starts the Node informer with a Secret's kubeconfig, or reports why poolscope will not use it. */
  start(kubeconfigYaml: string, endpoint: ControlPlaneEndpoint | null): void {
    this.stop();
    let kc: PooledKubeConfig;
    try {
      kc = workloadKubeConfig(parseWorkloadKubeconfig(kubeconfigYaml, endpoint));
    } catch (e) {
      const why = e instanceof UnsafeKubeconfigError ? e.message : 'it cannot be read';
      this.setHealth(
        'error',
        `poolscope does not use the kubeconfig in Secret ${this.namespace}/${this.cluster}-kubeconfig: ${why}`,
      );
      return;
    }
    this.kc = kc;
    const informer = new Informer({
      kc,
      path: '/api/v1/nodes',
      kind: 'node',
      items: this.nodes,
      onState: (st, error) => {
        if (st === 'live') this.listed = true;
        const changed = this.health.state !== st || this.health.error !== error;
        this.setHealth(st, error);
        if (changed) this.onChange([]);
      },
      onRestart: this.onRestart,
    });
    informer.on('add', (o, _old, k) => {
      this.index(o, true, k);
      this.onChange([o]);
    });
    informer.on('update', (o, old, k) => {
      // Moved only when its scale set or agent pool changed: the index keeps the name string the cache keeps.
      if (
        !old ||
        scaleSetKeyOf(providerIdOf(old)) !== scaleSetKeyOf(providerIdOf(o)) ||
        agentPoolOf(old) !== agentPoolOf(o)
      ) {
        if (old) this.index(old, false, k);
        this.index(o, true, k);
      }
      this.onChange(old ? [o, old] : [o]);
    });
    informer.on('delete', (o, _old, k) => {
      this.index(o, false, k);
      this.onChange([o]);
    });
    informer.start();
    this.informer = informer;
  }

  setHealth(state: SourceHealth['state'], error?: string): void {
    this.health = nextHealth(this.health, state, error);
  }

  /** Whether a Node informer runs (with the last kubeconfig that was accepted). */
  get running(): boolean {
    return this.informer !== null;
  }

  /** What a pool's model gets: its Nodes (see nodesFor), or why they are not known. */
  data(scaleSetKey: string | null, ids: PoolIds, agentPool: string | null = null): PoolInput['workload'] {
    if (this.health.state === 'live' && this.listed)
      return { state: 'ok', nodes: this.nodesFor(scaleSetKey, ids, agentPool) };
    if (this.health.state === 'starting') return { state: 'unknown', reason: 'the workload cluster is not listed yet' };
    return { state: 'unreachable', error: this.health.error ?? 'the workload cluster does not answer' };
  }

  stop(): void {
    this.informer?.stop();
    this.informer = null;
    void this.kc?.closeConnections();
    this.kc = null;
  }
}
