// What the diagnosis promises of every pool, checked on a thousand generated ones (a seeded generator, so a failure
// names a reproducible pool): drift always gets a finding, "healthy" only when nothing is off, worst first.

import { describe, expect, it } from 'vitest';
import { analyzePool } from './analyze';
import { SEVERITY_RANK } from './api-types';
import { DEFAULT_AZURE, NOW } from './fixtures/objects';
import { buildPool, instanceProviderId, type InstanceSpec, type PoolSpec } from './fixtures/pool';

function generator(seed: number) {
  let s = seed;
  const rand = () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const chance = (p: number) => rand() < p;
  const id = (m: string) => instanceProviderId(DEFAULT_AZURE, 'pool0', m);
  return (): PoolSpec => {
    const instances: InstanceSpec[] = Array.from({ length: Math.floor(rand() * 6) }, (_, i) => ({
      member: String(i),
      ...(chance(0.15) ? { state: pick(['Creating', 'Failed', 'Deleting', 'Updating']) } : {}),
      ...(chance(0.15) ? { inAzure: false } : {}),
      ...(chance(0.15) ? { ampm: false } : {}),
      ...(chance(0.2) ? { node: pick(['none', 'not-ready'] as const) } : {}),
      ...(chance(0.1)
        ? { nodeProviderID: id(String(i)).replace('resourceGroups/prod-weu', 'resourceGroups/Prod-WEU') }
        : {}),
      ...(chance(0.2) ? { latestModelApplied: false } : {}),
      createdMinutesAgo: pick([1, 5, 30, 600]),
    }));
    const ids = instances.map((i) => id(i.member));
    const subset = (xs: string[]) => xs.filter(() => chance(0.8));
    const replicas = chance(0.05) ? null : Math.max(0, instances.length + pick([-1, 0, 0, 0, 1]));
    return {
      replicas,
      instances,
      ...(chance(0.2) ? { capacity: instances.length + pick([-1, 1]) } : {}),
      ...(chance(0.1) ? { vmssState: pick(['Failed', 'Updating', 'Creating']) } : {}),
      amp: {
        ...(chance(0.3) ? { ready: false } : {}),
        ...(chance(0.2) ? { provisioningState: pick(['Updating', 'Failed', 'Creating']) } : {}),
        ...(chance(0.2) ? { providerIDList: chance(0.3) ? [...ids].reverse() : subset(ids) } : {}),
        ...(chance(0.05) ? { annotations: { 'cluster.x-k8s.io/paused': 'true' } } : {}),
      },
      mp: chance(0.3) ? { providerIDList: chance(0.2) ? [...subset(ids), id('9')] : subset(ids) } : {},
      ...(chance(0.05) ? { clusterPaused: true } : {}),
      ...(chance(0.05) ? { workload: { unreachable: 'connection refused' } } : {}),
      ...(chance(0.1)
        ? {
            azure: pick<PoolSpec['azure']>([
              'not-found',
              { unknown: 'not read yet' },
              { throttled: 'Too many requests.', retryAfterSeconds: 30 },
            ]),
          }
        : {}),
      ...(chance(0.8) ? { capzVersion: pick(['v1.19.4', 'v1.22.0', 'v1.26.0', 'main']) } : {}),
      ...(chance(0.3) ? { azureReadMinutesAgo: pick([0.5, 3, 60]) } : {}),
      ...(chance(0.3)
        ? {
            departedAmpms: instances
              .filter((i) => i.ampm === false)
              .map((i) => ({ member: i.member, minutesAgo: pick([0.2, 1, 10]) })),
          }
        : {}),
    };
  };
}

describe('the diagnosis of any pool', () => {
  const next = generator(42);
  const pools = Array.from({ length: 1000 }, (_, i) => [i, next()] as const);

  it('never leaves drift without a finding, calls nothing off "healthy", and orders findings worst first', () => {
    let awaiting = 0;
    let going = 0;
    for (const [i, spec] of pools) {
      const d = analyzePool(buildPool(spec).input, { now: NOW });
      const codes = d.findings.map((f) => f.code);
      const where = `pool #${i}: ${JSON.stringify(spec)} → ${JSON.stringify(codes)}`;
      if (d.drift.length > 0) expect(codes.length, where).toBeGreaterThan(0);
      if (codes.includes('healthy')) {
        expect(codes, where).toEqual(['healthy']);
        expect(d.drift, where).toEqual([]);
        expect(d.summary.ampReady, where).toBe(true);
        expect([d.sources.azure.state, d.sources.workload.state], where).toEqual(['ok', 'ok']);
      }
      expect(new Set(codes).size, where).toBe(codes.length);
      // An instance Azure's last read predates (come since: no Azure data; or gone since: no AMPM): nothing said on
      // Azure's account.
      for (const r of d.instances.filter((x) => x.awaitingAzureRead)) {
        awaiting++;
        if (r.azure) going++;
        expect(r.azure === null || r.ampm === null, where).toBe(true);
        expect(
          r.driftKinds.filter(
            (k) =>
              k.startsWith('ghost-') ||
              ['node-without-instance', 'instance-without-node', 'missing-from-azuremachinepool'].includes(k),
          ),
          where,
        ).toEqual([]);
      }
      const ranks = d.findings.map((f) => SEVERITY_RANK[f.severity]);
      expect(ranks, where).toEqual([...ranks].sort((a, b) => b - a));
      for (const f of d.findings) {
        for (const text of [f.summary, f.detail, f.suggestedAction]) {
          expect(text, where).toMatch(/\S[.)]$/);
          expect(text, where).not.toMatch(/\.\.(?!\.)|\bundefined\b|\bnull\b|\bNaN\b/);
        }
      }
    }
    // The generated pools do hold such instances.
    expect(awaiting).toBeGreaterThan(10);
    expect(going).toBeGreaterThan(5);
  });
});
