// Benchmark: drift + diagnosis for one large pool and for a fleet of pools.
// Targets (issue #2): ≤ 1 ms per 100-instance pool, ≤ 5 ms for a 1,000-instance pool, linear growth.
// `analyze` times drift + diagnosis + verdict + instance table on a normalised model (what the collector
// re-runs on every change); `endToEnd` adds normalising the raw objects, which the collector does once per
// watch event rather than per analysis.

import { analyzeModel, analyzePool } from '../lib/analyze';
import { buildPoolModel, type PoolModel } from '../lib/pool-model';
import { DEFAULT_AZURE, NOW } from '../lib/fixtures/objects';
import { buildPool, instanceProviderId, type BuiltPool, type InstanceSpec } from '../lib/fixtures/pool';

/** A realistic mix: mostly healthy, a few new, failed and node-less instances, and a frozen list. */
function busyPool(n: number, seed: number): BuiltPool {
  const instances: InstanceSpec[] = Array.from({ length: n }, (_, i) => {
    const member = String(i);
    if (i % 50 === 1) return { member, state: 'Failed', errorCode: 'OSProvisioningTimedOut', node: 'none' };
    if (i % 40 === 2) return { member, node: 'none', createdMinutesAgo: 20 };
    if (i >= n - Math.ceil(n / 20)) return { member, node: 'not-ready', createdMinutesAgo: 3 };
    return { member };
  });
  const name = `pool${seed}`;
  const frozenList = instances
    .slice(0, n - Math.ceil(n / 20))
    .map((i) => instanceProviderId(DEFAULT_AZURE, name, i.member));
  return buildPool({
    name,
    replicas: n,
    instances,
    vmssState: 'Failed',
    capzVersion: 'main',
    amp: { ready: false, provisioningState: 'Failed' },
    mp: { providerIDList: frozenList, phase: 'Provisioned' },
  });
}

type Mode = 'analyze' | 'endToEnd';

interface Prepared {
  built: BuiltPool;
  model: PoolModel;
}

function prepare(built: BuiltPool): Prepared {
  return { built, model: buildPoolModel(built.input) };
}

function timeIt(pools: Prepared[], rounds: number, mode: Mode): number[] {
  const perPool: number[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const p of pools) {
      const t0 = process.hrtime.bigint();
      if (mode === 'analyze') analyzeModel(p.model, { now: NOW });
      else analyzePool(p.built.input, { now: NOW });
      perPool.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  }
  return perPool.sort((a, b) => a - b);
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const round = (x: number) => Math.round(x * 1000) / 1000;

function measure(mode: Mode): Record<string, unknown> {
  const sizes: Record<string, unknown> = {};
  for (const n of [100, 1000, 5000]) {
    const t = timeIt([prepare(busyPool(n, 1))], n >= 5000 ? 10 : 50, mode);
    sizes[String(n)] = {
      p50Ms: round(pct(t, 50)),
      p95Ms: round(pct(t, 95)),
      usPerInstanceP50: round((pct(t, 50) * 1000) / n),
    };
  }
  const fleet = Array.from({ length: 1000 }, (_, i) => prepare(busyPool(100, i)));
  const perPool = timeIt(fleet, 1, mode);
  const totalMs = perPool.reduce((a, b) => a + b, 0);
  return {
    singlePool: sizes,
    fleet1000x100: {
      totalMs: round(totalMs),
      meanMsPerPool: round(totalMs / fleet.length),
      p50MsPerPool: round(pct(perPool, 50)),
      p99MsPerPool: round(pct(perPool, 99)),
    },
  };
}

export function benchAnalyze(): Record<string, unknown> {
  // Warm up the JIT so the figures describe steady state.
  const warm = [prepare(busyPool(100, 0)), prepare(busyPool(1000, 0))];
  timeIt(warm, 20, 'analyze');
  timeIt(warm, 20, 'endToEnd');
  return {
    targets: { msPer100InstancePool: 1, msPer1000InstancePool: 5, growth: 'linear' },
    analyze: measure('analyze'),
    endToEnd: measure('endToEnd'),
  };
}
