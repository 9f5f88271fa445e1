// The collector's work for one pool, as a cycle does it, without the fleet: a 100-instance pool churning (an
// instance replaced a step, each VM gone staying 20 steps in the lists as a ghost: ~60 drift items, as pools are
// at 100k VMs under churn), its objects slimmed as the informers keep them (an unchanged object keeps its
// identity from one step to the next), Azure normalised once per read; each step analysed against the previous
// analysis (kept without its instance table), compared with what the store wrote last, its changed rows serialised
// and written to SQLite as the collector writes them (analyseOnly: the analyses and their transitions alone). A quick measure (seconds) of what the 100k collector benchmark spends per
// pool analysis (minutes); the SQLite figure includes a transaction per step, where the collector's cycles share one.

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { analyzePool } from '../lib/analyze';
import type { PoolDetail } from '../lib/api-types';
import { buildPool, type InstanceSpec } from '../lib/fixtures/pool';
import { normaliseAzure } from '../lib/azure-model';
import type { PoolInput } from '../lib/pool-model';
import { slim, type SlimKind } from '../lib/slim';
import { diffDetails } from '../lib/transitions';
import type { KubeObject } from '../lib/unstructured';
import { openSqlite } from '../server/store/sqlite';
import { TimelineStore } from '../server/store/store';

const STEPS = 1500;
const t0 = Date.parse('2026-11-29T10:00:00.000Z');
const at = (i: number) => new Date(t0 + i * 1000).toISOString();

/** The pool's inputs, one per step, with its objects slimmed as an informer keeps them. */
function inputs(): PoolInput[] {
  let seed = 7;
  const rand = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32;
  let members: InstanceSpec[] = Array.from({ length: 100 }, (_, i) => ({ member: String(i) }));
  let next = 100;
  // An object that did not change keeps its slimmed copy (an informer replaces only what an event brings).
  const kept = new Map<string, KubeObject>();
  const slimmed = (kind: SlimKind, o: KubeObject) => {
    const k = `${kind}/${o.metadata?.name}/${JSON.stringify(o)}`;
    let s = kept.get(k);
    if (!s) kept.set(k, (s = slim(kind, o)));
    return s;
  };
  const out: PoolInput[] = [];
  for (let step = 0; step < STEPS; step++) {
    // The newest instance gets its Node; one instance goes (a ghost for 20 steps) and a new one comes.
    members = members.map((m) => (m.inAzure === false ? m : m.node === 'none' ? { member: m.member } : m));
    const live = members.filter((m) => m.inAzure !== false);
    const gone = live[Math.floor(rand() * live.length)] as InstanceSpec;
    members.splice(members.indexOf(gone), 1, { ...gone, inAzure: false });
    const ghosts = members.filter((m) => m.inAzure === false);
    if (ghosts.length > 20) members.splice(members.indexOf(ghosts[0] as InstanceSpec), 1);
    members.push({ member: String(next++), node: 'none', createdMinutesAgo: 1 });
    const input = buildPool({ name: 'bench', replicas: 100, instances: members }).input;
    const azure = input.azure as { state: 'ok'; vmss: unknown; vms: unknown[] };
    const nodes = input.workload?.state === 'ok' ? input.workload.nodes : [];
    out.push({
      ...input,
      azureMachinePoolMachines: (input.azureMachinePoolMachines ?? []).map((o) => slimmed('ampm', o)),
      machines: (input.machines ?? []).map((o) => slimmed('machine', o)),
      workload: { state: 'ok', nodes: nodes.map((o) => slimmed('node', o)) },
      azure: normaliseAzure(azure.vmss, azure.vms),
    });
  }
  return out;
}

async function run(steps: PoolInput[], write: boolean): Promise<Record<string, number>> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'poolscope-bench-cycle-'));
  const store = new TimelineStore(openSqlite(path.join(dir, 'bench.db')));
  await store.migrate();
  let prev: PoolDetail | null = null;
  const times: number[] = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < steps.length; i++) {
    const w0 = performance.now();
    const now = at(i);
    // As Collector.analyse does it.
    const detail = analyzePool(steps[i] as PoolInput, {
      now,
      previous: prev,
      kube: { state: 'ok' },
      lastChange: prev?.summary.lastChange ?? null,
    });
    // Without writes (analyseOnly) the store has nothing to compare with: each step counts as a change.
    if (!(write && prev && store.sameAsWritten(detail, prev))) {
      const transitions = diffDetails(prev, detail, now);
      detail.summary.lastChange = now;
      if (write) await store.writeCycle({ id: `c${i}`, at: now }, [{ detail, transitions }]);
      prev = { ...detail, instances: [] };
    }
    times.push(performance.now() - w0);
  }
  const cpu = process.cpuUsage(cpu0);
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  // The first third warms the JIT up: the median and mean of the rest.
  const steady = times.slice(times.length / 3).sort((a, b) => a - b);
  return {
    steps: steps.length,
    p50Us: Math.round((steady[Math.floor(steady.length / 2)] ?? NaN) * 1000),
    meanUs: Math.round((steady.reduce((a, b) => a + b, 0) / steady.length) * 1000),
    cpuUsPerStep: Math.round((cpu.user + cpu.system) / steps.length),
    driftItems: prev?.drift.length ?? 0,
  };
}

export async function benchCycle(): Promise<Record<string, unknown>> {
  const steps = inputs();
  return {
    pool: '100 instances, one replaced a step, each VM gone a ghost for 20 steps',
    analyseOnly: await run(steps, false),
    analyseAndWrite: await run(steps, true),
  };
}
