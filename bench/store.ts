// Store write path: what one pool write costs the collector's process (serialising the state, diffing it against
// the stored one, deflating, SQLite), for a 100-instance pool replacing one instance a step as the collector sees
// it: a VM goes, a new one comes without its Node, and the one before gets its Node. Twice: serialising every
// row (as after a restart) and serialising only the rows whose hash changed (as the collector does otherwise).
// And the same pool drifting as pools do at 100k VMs under churn (the Azure view minutes old): the VMs that go
// stay in the lists for 20 writes as ghosts, ~60 drift items at any time.

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { analyzePool } from '../lib/analyze';
import type { PoolDetail } from '../lib/api-types';
import { buildPool, type InstanceSpec } from '../lib/fixtures/pool';
import { openSqlite } from '../server/store/sqlite';
import { TimelineStore } from '../server/store/store';

const STEPS = 600;
const t0 = Date.parse('2026-11-29T10:00:00.000Z');
const at = (i: number) => new Date(t0 + i * 1000).toISOString();

/** The pool's analyses, one per step; with `ghosts`, a VM gone from Azure stays in the lists for that many steps. */
function churn(ghosts = 0): PoolDetail[] {
  let seed = 7;
  const rand = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32;
  let members: InstanceSpec[] = Array.from({ length: 100 }, (_, i) => ({ member: String(i) }));
  let next = 100;
  const out: PoolDetail[] = [];
  let prev: PoolDetail | null = null;
  for (let step = 0; step < STEPS; step++) {
    // The newest instance gets its Node (a ghost stays as it went), now and then one fails.
    members = members.map((m) =>
      m.inAzure === false
        ? m
        : m.node === 'none'
          ? { member: m.member }
          : rand() < 0.005
            ? { ...m, state: 'Failed', errorCode: 'OSProvisioningTimedOut' }
            : m,
    );
    const live = members.filter((m) => m.inAzure !== false);
    const gone = live[Math.floor(rand() * live.length)] as InstanceSpec;
    members.splice(members.indexOf(gone), 1);
    if (ghosts > 0) {
      members.push({ ...gone, inAzure: false });
      // The oldest ghost leaves the lists.
      const old = members.filter((m) => m.inAzure === false);
      if (old.length > ghosts) members.splice(members.indexOf(old[0] as InstanceSpec), 1);
    }
    members.push({ member: String(next++), node: 'none', createdMinutesAgo: 1 });
    const d = analyzePool(buildPool({ name: 'bench', replicas: 100, instances: members }).input, {
      now: at(step),
      previous: prev,
    });
    out.push(d);
    prev = d;
  }
  return out;
}

async function run(states: PoolDetail[], incremental: boolean): Promise<Record<string, number>> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'poolscope-bench-store-'));
  const store = new TimelineStore(openSqlite(path.join(dir, 'bench.db')));
  await store.migrate();
  const times: number[] = [];
  const serialise: number[] = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < states.length; i++) {
    const d = states[i] as PoolDetail;
    const w0 = performance.now();
    // As the collector does it (or, for every row, as for a pool not compared since the store was opened).
    if (incremental) {
      store.sameAsWritten(d, states[i - 1]);
      serialise.push(performance.now() - w0);
    }
    await store.writeCycle({ id: `c${i}`, at: at(i) }, [{ detail: d, transitions: [] }]);
    times.push(performance.now() - w0);
  }
  const cpu = process.cpuUsage(cpu0);
  const stats = await store.stats();
  await store.close();
  // The database file with its write-ahead log checkpointed into it.
  const db = new Database(path.join(dir, 'bench.db'));
  const keyframes = (db.prepare("SELECT COUNT(*) AS n FROM pool_history WHERE kind = 'key'").get() as { n: number }).n;
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  const bytes = statSync(path.join(dir, 'bench.db')).size;
  rmSync(dir, { recursive: true, force: true });
  // The first writes warm the JIT up: the median and mean of the second half.
  const median = (xs: number[]) => {
    const steady = xs.slice(xs.length / 2).sort((a, b) => a - b);
    return Math.round((steady[Math.floor(steady.length / 2)] ?? NaN) * 1000);
  };
  return {
    writes: states.length,
    // Wall time per write: all of it, and the collector's part before the store (hashing, serialising).
    p50Us: median(times),
    ...(incremental ? { compareP50Us: median(serialise) } : {}),
    cpuUsPerWrite: Math.round((cpu.user + cpu.system) / states.length),
    historyRows: stats.historyRows,
    keyframes,
    databaseBytesPerWrite: Math.round(bytes / states.length),
  };
}

export async function benchStore(): Promise<Record<string, unknown>> {
  const states = churn();
  const drifting = churn(20);
  const items = drifting.slice(drifting.length / 2).map((d) => d.drift.length);
  return {
    pool: '100 instances, one replaced per write',
    everyRow: await run(states, false),
    changedRowsOnly: await run(states, true),
    drifting: {
      pool: `the same, each VM gone staying 20 writes in the lists (${Math.min(...items)}-${Math.max(...items)} drift items)`,
      everyRow: await run(drifting, false),
      changedRowsOnly: await run(drifting, true),
    },
  };
}
