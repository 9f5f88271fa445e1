import { describe, expect, it } from 'vitest';
import { analyzePool } from './analyze';
import type { PoolSummary } from './api-types';
import { buildScenario } from './fixtures/scenarios';
import { groupPools } from './fleet-groups';

const base = analyzePool(buildScenario('s05-flexible').input, { now: '2026-11-29T10:00:00.000Z' }).summary;
const pool = (context: string, namespace: string, cluster: string | null, severity: 'critical' | 'info' | null) =>
  ({
    ...base,
    key: `${context}/${namespace}/${cluster}-${severity}`,
    ref: { ...base.ref, context, namespace },
    clusterName: cluster,
    worstFinding: severity ? { code: severity === 'info' ? 'healthy' : 'vmss-failed', severity, summary: '' } : null,
  }) as PoolSummary;

describe('the fleet grouped', () => {
  // Sorted worst first, as the fleet page hands them over.
  const pools = [
    pool('mgmt-b', 'default', 'prod', 'critical'),
    pool('mgmt-a', 'default', 'prod', 'info'),
    pool('mgmt-b', 'team', 'prod', 'info'),
    pool('mgmt-b', 'default', 'prod', null),
    pool('mgmt-a', 'default', null, null),
  ];
  it('by management cluster, in the order of each group’s first pool, counting findings but not healthy', () => {
    const groups = groupPools(pools, 'context');
    expect(groups.map((g) => [g.title, g.pools.length, g.counts])).toEqual([
      ['Management cluster mgmt-b', 3, { critical: 1, warning: 0, info: 0 }],
      ['Management cluster mgmt-a', 2, { critical: 0, warning: 0, info: 0 }],
    ]);
    expect(groups.flatMap((g) => g.pools)).toHaveLength(pools.length);
  });
  it('by workload cluster, telling apart clusters of one name in other namespaces or contexts', () => {
    const groups = groupPools(pools, 'cluster');
    expect(groups.map((g) => [g.title, g.where, g.pools.length])).toEqual([
      ['Workload cluster prod', 'mgmt-b / default', 2],
      ['Workload cluster prod', 'mgmt-a / default', 1],
      ['Workload cluster prod', 'mgmt-b / team', 1],
      ['No workload cluster named', 'mgmt-a / default', 1],
    ]);
    expect(new Set(groups.map((g) => g.key)).size).toBe(4);
  });
});
