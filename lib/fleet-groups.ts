// The fleet grouped by management cluster (a kubeconfig context) or by workload cluster (a CAPI Cluster, named
// within its context and namespace). Groups come in the order of their first pool in the sorted fleet, so worst
// first stays worst first: the group holding the worst pool leads.

import type { PoolSummary, Severity } from './api-types';
import type { FleetGroup } from './url-state';

export interface PoolGroup {
  key: string;
  /** What the group is, in words: "Management cluster mgmt-weu", "Workload cluster prod-1". */
  title: string;
  /** Where it lives, for a workload cluster: "mgmt-weu / default"; empty for a management cluster. */
  where: string;
  pools: PoolSummary[];
  /** How many of its pools have each severity as their worst finding's (a healthy pool is not counted). */
  counts: Record<Severity, number>;
}

function groupOf(p: PoolSummary, by: FleetGroup): Pick<PoolGroup, 'key' | 'title' | 'where'> {
  if (by === 'context') return { key: p.ref.context, title: `Management cluster ${p.ref.context}`, where: '' };
  const cluster = p.clusterName ?? '';
  return {
    // JSON keeps names apart whatever they hold (a "/" is legal in none of them, but a key should not rely on it).
    key: JSON.stringify([p.ref.context, p.ref.namespace, cluster]),
    title: cluster ? `Workload cluster ${cluster}` : 'No workload cluster named',
    where: `${p.ref.context} / ${p.ref.namespace}`,
  };
}

export function groupPools(pools: readonly PoolSummary[], by: FleetGroup): PoolGroup[] {
  const groups = new Map<string, PoolGroup>();
  for (const p of pools) {
    const g = groupOf(p, by);
    let group = groups.get(g.key);
    if (!group) {
      group = { ...g, pools: [], counts: { critical: 0, warning: 0, info: 0 } };
      groups.set(g.key, group);
    }
    group.pools.push(p);
    const f = p.worstFinding;
    if (f && f.code !== 'healthy') group.counts[f.severity as Severity]++;
  }
  return [...groups.values()];
}
