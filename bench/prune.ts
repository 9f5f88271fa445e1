// Retention: what the hourly prune costs at the 100k fleet's rate of history, and what it does to the rest of the
// process meanwhile. A SQLite store is filled with `pools` pools' history as the 100k benchmark writes it per pool
// (a stored state every ~16 s: ~227 history rows an hour of ~1.1 KB, a keyframe every 50, and 8 timeline entries
// each; a cycle every 250 ms), for a few hours and for four times as long; then the oldest hour is pruned as the
// hourly job does, while a writer commits a small transaction every 250 ms as the collector's cycles would. The
// prune's cost should follow what it deletes, not how much the store holds; the event loop's longest stall and
// the writer's longest wait show that a prune does not stop the collector or the API. Then the file gives back
// what the prune freed, down to a tenth of it free, as retention does after a prune that freed over a fifth.

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { openSqlite } from '../server/store/sqlite';
import { TimelineStore, type SqlDb } from '../server/store/store';

const t0 = Date.parse('2026-11-01T00:00:00.000Z');
const HOUR = 3_600_000;
/** Stored states of a pool an hour at 100k VMs under 1% churn a minute (63 a second over 1,000 pools). */
const STATES_PER_HOUR = 227;
const KEYFRAME_EVERY = 50;
const TRANSITIONS_PER_STATE = 8;
const CYCLES_PER_HOUR = 14_400;

async function fill(store: TimelineStore, pools: number, hours: number): Promise<void> {
  const db = (store as unknown as { db: SqlDb }).db;
  const body = 'x'.repeat(1100);
  const key = (p: number) => `bench/default/pool-${String(p).padStart(4, '0')}`;
  const states = STATES_PER_HOUR * hours;
  for (let p = 0; p < pools; p++) {
    await db.tx(async (t) => {
      for (let s = 1; s <= states; s++) {
        const at = new Date(t0 + Math.floor(((s - 1) / STATES_PER_HOUR) * HOUR) + p).toISOString();
        await t.run('INSERT INTO pool_history (pool_key, seq, at, kind, body) VALUES (?, ?, ?, ?, ?)', [
          key(p),
          s,
          at,
          s % KEYFRAME_EVERY === 1 ? 'key' : 'rows',
          body,
        ]);
        for (let k = 0; k < TRANSITIONS_PER_STATE; k++)
          await t.run('INSERT INTO transitions (pool_key, at, field, from_value, to_value) VALUES (?, ?, ?, ?, ?)', [
            key(p),
            at,
            `instances.vm-${s}.phase`,
            'Provisioning',
            'Running',
          ]);
      }
    });
  }
  await db.tx(async (t) => {
    for (let c = 0; c < CYCLES_PER_HOUR * hours; c++)
      await t.run('INSERT INTO cycles (id, at, pools, transitions) VALUES (?, ?, ?, ?)', [
        `c${c}`,
        new Date(t0 + c * 250).toISOString(),
        1,
        8,
      ]);
  });
}

async function once(pools: number, hours: number): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'poolscope-bench-prune-'));
  const store = new TimelineStore(openSqlite(path.join(dir, 'bench.db')));
  await store.migrate();
  await fill(store, pools, hours);
  const stats = await store.stats();
  const sizeMB = Math.round((await store.sizeBytes()) / 1e5) / 10;
  const db = (store as unknown as { db: SqlDb }).db;
  // The collector's stand-in: a transaction every 250 ms; how long each waited to commit.
  let writerMax = 0;
  let writes = 0;
  let stop = false;
  const writer = (async () => {
    while (!stop) {
      const w0 = performance.now();
      await db.tx((t) =>
        t.run(
          'INSERT INTO pool_summaries (pool_key, last_change, summary) VALUES (?, ?, ?) ON CONFLICT (pool_key) DO UPDATE SET last_change = excluded.last_change',
          ['bench/writer', new Date().toISOString(), '{}'],
        ),
      );
      writerMax = Math.max(writerMax, performance.now() - w0);
      writes++;
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  // A phase's time, CPU, the event loop's longest stall and the writer's longest wait meanwhile.
  const measured = async <T>(fn: () => Promise<T>) => {
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    writerMax = 0;
    const cpu0 = process.cpuUsage();
    const w0 = performance.now();
    const result = await fn();
    const ms = performance.now() - w0;
    const cpu = process.cpuUsage(cpu0);
    loop.disable();
    return {
      result,
      ms: Math.round(ms),
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      longestEventLoopStallMs: Math.round(loop.max / 1e6),
      writerLongestWaitMs: Math.round(writerMax * 10) / 10,
    };
  };
  const pruned = await measured(() => store.prune(new Date(t0 + HOUR).toISOString()));
  const free = (await store.freeBytes()) ?? 0;
  const freeMB = Math.round(free / 1e5) / 10;
  const used = (await store.sizeBytes()) - free;
  const shrunk = await measured(() => store.shrink(Math.round(used / 9)));
  stop = true;
  await writer;
  const l0 = performance.now();
  await store.lastCycle();
  const lastCycleMs = performance.now() - l0;
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return {
    hoursStored: hours,
    historyRows: stats.historyRows,
    transitions: stats.transitions,
    sizeMB,
    deleted: pruned.result,
    pruneMs: pruned.ms,
    pruneCpuMs: pruned.cpuMs,
    longestEventLoopStallMs: pruned.longestEventLoopStallMs,
    writerLongestWaitMs: pruned.writerLongestWaitMs,
    freeAfterPruneMB: freeMB,
    shrink: {
      givenBackMB: Math.round((shrunk.result ?? 0) / 1e5) / 10,
      ms: shrunk.ms,
      cpuMs: shrunk.cpuMs,
      longestEventLoopStallMs: shrunk.longestEventLoopStallMs,
      writerLongestWaitMs: shrunk.writerLongestWaitMs,
    },
    writerCommits: writes,
    lastCycleReadMs: Math.round(lastCycleMs * 100) / 100,
  };
}

export async function benchPrune(): Promise<Record<string, unknown>> {
  const pools = Number(process.env.POOLSCOPE_BENCH_PRUNE_POOLS ?? 200);
  return {
    pools,
    rate: `${STATES_PER_HOUR} stored states a pool an hour (a keyframe every ${KEYFRAME_EVERY}), ${TRANSITIONS_PER_STATE} timeline entries each, ${CYCLES_PER_HOUR} cycles an hour; the oldest hour pruned`,
    small: await once(pools, 3),
    large: await once(pools, 12),
  };
}
