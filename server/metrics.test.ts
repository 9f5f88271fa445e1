// The Prometheus metrics against the collector on the simulated S1 pool (frozen list): the per-pool gauges say
// what the dashboard says, the collector and Azure counters move, and the alert rules only use exported names.

import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Registry } from 'prom-client';
import { parse, stringify } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import type { PoolSummary } from '@/lib/api-types';
import { findPromtool } from '@/scripts/promtool.mjs';
import type { Runtime } from './runtime';
import type { CycleEvent } from './collector/collector';
import { createMetrics, POOL_METRICS, poolMetricsText } from './metrics';
import { harness, until } from './testing/sim-harness';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const POOL = 'context="mgmt-weu",namespace="default",pool="pool0"';

/** A store that answers what a scrape reads of it, and holds nothing. */
const bareStore = () => ({ lastCycle: async () => null, sizeBytes: async () => 4096, freeBytes: async () => null });

/** One sample's value from Prometheus text, or undefined. */
function sample(text: string, name: string, labels: string): number | undefined {
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`${name}{${labels}}`) || (labels === '' && l.startsWith(`${name} `)));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : undefined;
}

describe('metrics', () => {
  it('exports a frozen pool as the dashboard shows it, with collector and Azure figures', async () => {
    const h = await harness(cleanups, 's01-scale-up-pre-fix.yaml', 1);
    await h.start();
    await until('the pool analysed with Azure read', async () =>
      (await h.store.currentPool('mgmt-weu/default/pool0'))?.sources.azure.state === 'ok' ? true : undefined,
    );
    const rt = { store: h.store, collector: h.collector } as unknown as Runtime;
    const m = createMetrics(new Registry(), {
      runtime: async () => rt,
      summaries: async () => (await h.store.currentSummaries()) as PoolSummary[],
    });
    await until('a cycle after the first scrape', async () => {
      await m.render();
      return new Promise<true>((r) => h.collector.bus.once('cycle', () => r(true)));
    });
    const text = await m.render();
    expect(sample(text, 'poolscope_pools', '')).toBe(1);
    expect(sample(text, 'poolscope_pool_info', `${POOL},flavour="self-managed"`)).toBe(1);
    expect(sample(text, 'poolscope_pool_drift_items', `${POOL},kind="missing-from-machinepool"`)).toBe(2);
    expect(sample(text, 'poolscope_pool_drift_items', `${POOL},kind="case-mismatch"`)).toBe(0);
    expect(sample(text, 'poolscope_pool_findings', `${POOL},code="readiness-gate-frozen",severity="critical"`)).toBe(1);
    expect(sample(text, 'poolscope_pool_providerid_list_frozen_seconds', POOL)).toBeGreaterThan(0);
    expect(sample(text, 'poolscope_pool_replicas', `${POOL},source="desired"`)).toBe(5);
    expect(sample(text, 'poolscope_pool_replicas', `${POOL},source="capi"`)).toBe(3);
    expect(sample(text, 'poolscope_pool_ready', POOL)).toBe(0);
    expect(sample(text, 'poolscope_collector_leader', '')).toBe(1);
    expect(sample(text, 'poolscope_store_size_bytes', '')).toBeGreaterThan(0);
    expect(sample(text, 'poolscope_store_free_bytes', '')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'poolscope_collector_cycle_duration_seconds_count', '')).toBeGreaterThan(0);
    expect(sample(text, 'poolscope_source_up', 'kind="management",name="mgmt-weu",context="mgmt-weu"')).toBe(1);
    expect(sample(text, 'poolscope_azure_calls_total', 'operation="vmss_get"')).toBeGreaterThan(0);
    expect(sample(text, 'poolscope_azure_calls_total', 'operation="vm_list"')).toBeGreaterThan(0);
    // No AKS pool here, so no AKS read: the counters are there, at zero.
    for (const operation of ['agent_pool_list', 'managed_cluster_get', 'scale_set_list', 'machines_list'])
      expect(sample(text, 'poolscope_azure_calls_total', `operation="${operation}"`)).toBe(0);
    expect(text).toMatch(/^poolscope_azure_budget_remaining\{budget="[^"]+"\} \d+/m);

    // A change to the pool: the time it took to be stored is observed (well within seconds here).
    h.sim.runStep({ at: 0, line: 0, scale: { cluster: 'mgmt-weu', name: 'pool0', replicas: 6 } });
    const lagged = await until('a change lag observed', async () => {
      const t = await m.render();
      return (sample(t, 'poolscope_collector_change_lag_seconds_count', '') ?? 0) > 0 ? t : undefined;
    });
    expect(sample(lagged, 'poolscope_collector_change_lag_seconds_bucket', 'le="5"')).toBe(
      sample(lagged, 'poolscope_collector_change_lag_seconds_count', ''),
    );
    // A scrape shows the backlog the last cycle left: of one pool, none, or the pool itself changed meanwhile.
    expect([0, 1]).toContain(sample(lagged, 'poolscope_collector_pools_waiting', ''));
    // The change came as watch events; every kind was listed once at start.
    expect(sample(lagged, 'poolscope_watch_events_total', 'kind="mp"')).toBeGreaterThan(0);
    expect(sample(lagged, 'poolscope_lists_total', 'kind="ampm"')).toBeGreaterThanOrEqual(1);
    // The pool's states went to the store: its first as a keyframe, its instance rows written; cycles took time.
    expect(sample(lagged, 'poolscope_store_pool_states_total', 'history="keyframe"')).toBeGreaterThanOrEqual(1);
    expect(sample(lagged, 'poolscope_store_rows_total', 'operation="written"')).toBeGreaterThan(0);
    expect(sample(lagged, 'poolscope_collector_store_write_failures_total', '')).toBe(0);
    // A write the store refuses (a full disk, say) is counted; the next one stores the change.
    const write = h.store.writeCycle.bind(h.store);
    let refused = 0;
    h.store.writeCycle = async (cycle, writes) => {
      if (refused++ === 0) throw new Error('database or disk is full');
      return write(cycle, writes);
    };
    h.sim.runStep({ at: 0, line: 0, scale: { cluster: 'mgmt-weu', name: 'pool0', replicas: 7 } });
    await until('the refused write counted', async () =>
      sample(await m.render(), 'poolscope_collector_store_write_failures_total', '') === 1 ? true : undefined,
    );
    await until('the change stored after it', async () =>
      (await h.store.currentPool('mgmt-weu/default/pool0'))?.summary.replicas.desired === 7 ? true : undefined,
    );
    // Refusals in a row: none once a write is stored.
    expect(sample(await m.render(), 'poolscope_collector_store_failing_writes', '')).toBe(0);
    expect(sample(lagged, 'poolscope_collector_stage_seconds_total', 'stage="analyse"')).toBeGreaterThan(0);
    expect(sample(lagged, 'poolscope_collector_stage_seconds_total', 'stage="write"')).toBeGreaterThan(0);

    // The source goes down: up 0, staleness grows.
    h.sim.kube.cluster('mgmt-weu').setAvailable(false);
    h.sim.kube.cluster('mgmt-weu').resetWatchConnections();
    const down = await until('the management source stale', async () => {
      const t = await m.render();
      return sample(t, 'poolscope_source_up', 'kind="management",name="mgmt-weu",context="mgmt-weu"') === 0
        ? t
        : undefined;
    });
    expect(
      sample(down, 'poolscope_source_stale_seconds', 'kind="management",name="mgmt-weu",context="mgmt-weu"'),
    ).toBeGreaterThanOrEqual(0);
    expect(
      Number(down.match(/^poolscope_watch_restarts_total\{context="mgmt-weu",kind="[a-z]+"\} (\d+)/m)?.[1] ?? 0),
    ).toBeGreaterThan(0);
    h.sim.kube.cluster('mgmt-weu').setAvailable(true);

    // The backlog a cycle leaves is what a scrape shows; a replica that no longer collects shows none. (The collector
    // stopped first: none of its own cycles comes between.)
    await h.collector.stop();
    h.collector.bus.emit('cycle', {
      seconds: 0,
      pools: 0,
      cycle: null,
      azureCalls: 0,
      changeLags: [],
      analyseMs: 0,
      writeMs: 0,
      waiting: 3,
    } satisfies CycleEvent);
    expect(sample(await m.render(), 'poolscope_collector_pools_waiting', '')).toBe(3);
    (rt as { collector: unknown }).collector = null;
    expect(sample(await m.render(), 'poolscope_collector_pools_waiting', '')).toBe(0);
  }, 60_000);

  it('alert rules use only metrics poolscope exports', () => {
    const rules = parse(
      readFileSync(path.resolve(import.meta.dirname, '..', 'deploy', 'prometheus', 'rules.yaml'), 'utf8'),
    ) as { spec: { groups: { rules: { alert: string; expr: string; annotations: Record<string, string> }[] }[] } };
    const registryNames = new Set<string>();
    const reg = new Registry();
    createMetrics(reg, { runtime: async () => ({}) as Runtime, summaries: async () => [] });
    for (const metric of reg.getMetricsAsArray()) registryNames.add(metric.name);
    for (const m of Object.values(POOL_METRICS)) registryNames.add(m.name);
    const alerts = rules.spec.groups.flatMap((g) => g.rules);
    expect(alerts.length).toBeGreaterThanOrEqual(5);
    for (const a of alerts) {
      const used = [...a.expr.matchAll(/\bpoolscope_[a-z_]+/g)].map((x) => x[0].replace(/_(bucket|count|sum)$/, ''));
      expect(used.length, a.alert).toBeGreaterThan(0);
      for (const name of used) expect(registryNames, `${a.alert} uses ${name}`).toContain(name);
      expect(a.annotations.runbook_url, a.alert).toMatch(/docs\/runbooks\.md#/);
      // The runbook section exists (GitHub's heading anchors: lower case, spaces to dashes, punctuation dropped).
      const anchor = a.annotations.runbook_url?.split('#')[1];
      const headings = readFileSync(path.resolve(import.meta.dirname, '..', 'docs', 'runbooks.md'), 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('#'))
        .map((l) =>
          l
            .replace(/^#+\s*/, '')
            .toLowerCase()
            .replace(/[^a-z0-9 -]/g, '')
            .replace(/ /g, '-'),
        );
      expect(headings, `${a.alert}: docs/runbooks.md section #${anchor}`).toContain(anchor);
    }
  });
});

// As `npm test` finds it: POOLSCOPE_PROMTOOL, PATH, or the cache `npm test` fetches it into (scripts/promtool.mjs).
const PROMTOOL = findPromtool();
if (!PROMTOOL)
  console.warn(
    "SKIPPED: promtool is missing, so the alert rules are not checked or unit-tested. Run `node scripts/promtool.mjs` (`npm test` does) to take it from Debian's prometheus package, or set POOLSCOPE_PROMTOOL.",
  );

/** Two pools whose names need escaping, one frozen since a minute ago. */
function oddPools(now: number): PoolSummary[] {
  const base = {
    clusterName: 'c',
    orchestrationMode: 'Uniform',
    provisioningState: 'Succeeded',
    mpInfrastructureReady: true,
    phase: 'Running',
    paused: false,
    capzVersion: null,
    worstFinding: null,
    lastChange: null,
  } as const;
  const replicas = {
    desired: 3,
    vmssCapacity: 3,
    azureInstances: 3,
    azureSucceeded: 3,
    azureFailed: 0,
    capz: null,
    capi: 2,
    readyNodes: 2,
  };
  return [
    {
      ...base,
      ref: { context: 'ctx "a"', namespace: 'back\\slash', name: 'line\nfeed' },
      key: 'k1',
      replicas,
      ampReady: false,
      driftCounts: { 'missing-from-machinepool': 1 },
      activeFindings: [
        { code: 'readiness-gate-frozen', severity: 'critical', since: new Date(now - 60_000).toISOString() },
      ],
    },
    {
      ...base,
      ref: { context: 'mgmt', namespace: 'default', name: 'plain' },
      key: 'k2',
      flavour: 'aks-aso',
      replicas,
      ampReady: null,
      driftCounts: {},
      activeFindings: [],
    },
  ] as unknown as PoolSummary[];
}

describe('deleted pools in metrics', () => {
  it('are not exported (their alerts end with them) nor counted', async () => {
    const now = Date.parse('2026-12-01T10:00:00Z');
    const [frozen, plain] = oddPools(now);
    const gone = { ...frozen!, deletedAt: new Date(now).toISOString() } as PoolSummary;
    const away = {
      ...plain!,
      key: 'k3',
      ref: { ...plain!.ref, context: 'elsewhere' },
      unwatchedSince: new Date(now).toISOString(),
    } as PoolSummary;
    const m = createMetrics(new Registry(), {
      runtime: async () => ({ store: bareStore(), collector: null }) as unknown as Runtime,
      summaries: async () => [gone, plain!, away],
    });
    const text = await m.render();
    expect(sample(text, 'poolscope_pools', '')).toBe(1);
    expect(text).not.toContain('line\\nfeed');
    expect(text).not.toContain('context="elsewhere"');
    expect(sample(text, 'poolscope_pool_paused', 'context="mgmt",namespace="default",pool="plain"')).toBe(0);
  });
});

describe('per-pool metrics text', () => {
  it('escapes label values, leaves out what is unknown and says how long a list has been frozen', () => {
    const now = Date.parse('2026-12-01T10:00:00Z');
    const text = poolMetricsText(oddPools(now), now);
    const odd = 'context="ctx \\"a\\"",namespace="back\\\\slash",pool="line\\nfeed"';
    expect(sample(text, 'poolscope_pool_providerid_list_frozen_seconds', odd)).toBe(60);
    expect(sample(text, 'poolscope_pool_drift_items', `${odd},kind="missing-from-machinepool"`)).toBe(1);
    expect(sample(text, 'poolscope_pool_drift_items', `${odd},kind="case-mismatch"`)).toBe(0);
    expect(sample(text, 'poolscope_pool_findings', `${odd},code="readiness-gate-frozen",severity="critical"`)).toBe(1);
    expect(sample(text, 'poolscope_pool_ready', odd)).toBe(0);
    // A summary stored before flavours was self-managed.
    expect(sample(text, 'poolscope_pool_info', `${odd},flavour="self-managed"`)).toBe(1);
    expect(
      sample(text, 'poolscope_pool_info', 'context="mgmt",namespace="default",pool="plain",flavour="aks-aso"'),
    ).toBe(1);
    // Unknown readiness and replica counts are absent, not 0.
    expect(sample(text, 'poolscope_pool_ready', 'context="mgmt",namespace="default",pool="plain"')).toBeUndefined();
    expect(
      sample(text, 'poolscope_pool_replicas', 'context="mgmt",namespace="default",pool="plain",source="capz"'),
    ).toBeUndefined();
    expect(
      sample(text, 'poolscope_pool_replicas', 'context="mgmt",namespace="default",pool="plain",source="capi"'),
    ).toBe(2);
    expect(
      sample(text, 'poolscope_pool_providerid_list_frozen_seconds', 'context="mgmt",namespace="default",pool="plain"'),
    ).toBe(0);
    // One line a sample: no raw line feed inside a label.
    expect(text.split('\n').filter((l) => l.startsWith('poolscope_pool_paused'))).toHaveLength(2);
    for (const m of Object.values(POOL_METRICS)) expect(text).toContain(`# TYPE ${m.name} gauge\n`);
  });
});

describe('Grafana dashboard', () => {
  it('queries only metrics poolscope exports', async () => {
    const { registry } = await import('./metrics-registry');
    const reg = new Registry();
    createMetrics(reg, { runtime: async () => ({}) as Runtime, summaries: async () => [] });
    const names = new Set(
      [...reg.getMetricsAsArray(), ...registry().getMetricsAsArray(), ...Object.values(POOL_METRICS)].map(
        (m) => m.name,
      ),
    );
    const dash = JSON.parse(
      readFileSync(path.resolve(import.meta.dirname, '..', 'deploy', 'grafana', 'poolscope.json'), 'utf8'),
    ) as { panels: { title: string; targets: { expr: string }[] }[]; templating: { list: { query: unknown }[] } };
    const exprs = [
      ...dash.panels.flatMap((p) => p.targets.map((t) => [p.title, t.expr] as const)),
      ...dash.templating.list.map((v) => ['variable', JSON.stringify(v.query)] as const),
    ];
    expect(dash.panels.length).toBeGreaterThan(5);
    for (const [where, expr] of exprs) {
      for (const m of expr.matchAll(/\bpoolscope_[a-z_]+/g))
        expect(names, `${where}: ${m[0]}`).toContain(m[0].replace(/_(bucket|count|sum)$/, ''));
    }
  });
});

describe('retention metrics', () => {
  it('export what the replica that collects pruned, and nothing of retention elsewhere', async () => {
    const store = bareStore();
    const retention = {
      retentionDays: 30,
      lastPrunedAt: '2026-12-04T10:00:00.000Z',
      cutoff: '2026-11-20T10:00:00.000Z',
      maxBytes: null,
      usedBytes: null,
      pruned: true,
      deleted: { transitions: 120, history: 30, cycles: 7, pools: 1 },
      failures: 2,
      lastError: null,
      running: false,
    };
    const rt = { store, collector: null, retention } as unknown as Runtime;
    const m = createMetrics(new Registry(), { runtime: async () => rt, summaries: async () => [] });
    let text = await m.render();
    expect(sample(text, 'poolscope_store_last_prune_timestamp_seconds', '')).toBe(
      Date.parse('2026-12-04T10:00:00.000Z') / 1000,
    );
    expect(sample(text, 'poolscope_store_prune_failures_total', '')).toBe(2);
    expect(sample(text, 'poolscope_store_retention_cutoff_timestamp_seconds', '')).toBe(
      Date.parse('2026-11-20T10:00:00.000Z') / 1000,
    );
    expect(sample(text, 'poolscope_store_pruned_rows_total', 'table="transitions"')).toBe(120);
    expect(sample(text, 'poolscope_store_pruned_rows_total', 'table="history"')).toBe(30);
    expect(sample(text, 'poolscope_store_pruned_rows_total', 'table="cycles"')).toBe(7);
    expect(sample(text, 'poolscope_store_pruned_rows_total', 'table="pools"')).toBe(1);
    // Leadership moved away: 0, which the alert leaves out (a replica that does not prune is not late).
    (rt as { retention: unknown }).retention = null;
    text = await m.render();
    expect(sample(text, 'poolscope_store_last_prune_timestamp_seconds', '')).toBe(0);
  });
});

describe.skipIf(!PROMTOOL)('alert rules with promtool', () => {
  it('pass `promtool check rules` and the unit tests in rules.test.yaml (each alert fires when it should, not before)', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'poolscope-rules-'));
    const src = path.resolve(import.meta.dirname, '..', 'deploy', 'prometheus');
    const rule = parse(readFileSync(path.join(src, 'rules.yaml'), 'utf8')) as { spec: { groups: unknown[] } };
    writeFileSync(path.join(dir, 'rules.prom.yaml'), stringify({ groups: rule.spec.groups }));
    copyFileSync(path.join(src, 'rules.test.yaml'), path.join(dir, 'rules.test.yaml'));
    const run = (args: string[]) => {
      try {
        return execFileSync(PROMTOOL as string, args, { cwd: dir, encoding: 'utf8', stdio: 'pipe' });
      } catch (e) {
        const err = e as { stdout?: string; stderr?: string };
        throw new Error(`promtool ${args.join(' ')} failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
      }
    };
    expect(run(['check', 'rules', 'rules.prom.yaml'])).toMatch(/SUCCESS: 10 rules found/);
    expect(run(['test', 'rules', 'rules.test.yaml'])).toMatch(/SUCCESS/);
  });

  it('a scrape parses as Prometheus text (`promtool check metrics`), label values needing escapes included', async () => {
    const now = Date.now();
    const m = createMetrics(new Registry(), {
      runtime: async () => ({ store: bareStore(), collector: null }) as unknown as Runtime,
      summaries: async () => oddPools(now),
    });
    const text = await m.render();
    expect(text).toContain(
      'poolscope_pool_paused{context="ctx \\"a\\"",namespace="back\\\\slash",pool="line\\nfeed"} 0',
    );
    const dir = mkdtempSync(path.join(os.tmpdir(), 'poolscope-scrape-'));
    writeFileSync(path.join(dir, 'scrape.prom'), text);
    try {
      execFileSync('/bin/sh', ['-c', `'${PROMTOOL}' check metrics < scrape.prom`], {
        cwd: dir,
        encoding: 'utf8',
        stdio: 'pipe',
      });
    } catch (e) {
      const err = e as { stdout?: string; stderr?: string };
      throw new Error(`promtool check metrics failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
    }
  });
});
