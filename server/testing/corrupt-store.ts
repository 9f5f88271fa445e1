// Test helper: a SQLite store written by poolscope, and the damage a disk fault or a stray write does to one.

import { closeSync, mkdtempSync, openSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { analyzePool } from '@/lib/analyze';
import type { PoolDetail } from '@/lib/api-types';
import { buildPool, type InstanceSpec } from '@/lib/fixtures/pool';
import { diffDetails } from '@/lib/transitions';
import { openStore } from '../store';

const t0 = Date.parse('2026-11-29T10:00:00.000Z');
/** The seeded store's cycle `i` is at `at(i)`: c0 the fleet, c1…c60 the busy pool's changes. */
export const at = (minutes: number) => new Date(t0 + minutes * 60_000).toISOString();
export const healthy = (n: number): InstanceSpec[] => Array.from({ length: n }, (_, i) => ({ member: String(i) }));

/** A store with 12 pools of 40 instances (their rows span many pages), and one pool with 60 changes of history. */
export async function seedStore(dir = mkdtempSync(path.join(os.tmpdir(), 'poolscope-corrupt-'))): Promise<string> {
  const file = path.join(dir, 'poolscope.db');
  const store = await openStore({ sqlitePath: file });
  const writes = Array.from({ length: 12 }, (_, p) => {
    const d = analyzePool(
      buildPool({ context: 'mgmt-weu', cluster: 'wl', name: `pool${p}`, replicas: 40, instances: healthy(40) }).input,
      { now: at(0) },
    );
    return { detail: d, transitions: diffDetails(null, d, at(0)) };
  });
  await store.writeCycle({ id: 'c0', at: at(0) }, writes);
  let prev: PoolDetail | null = null;
  for (let i = 1; i <= 60; i++) {
    const replicas = 20 + (i % 7);
    const d: PoolDetail = analyzePool(
      buildPool({ context: 'mgmt-weu', cluster: 'wl', name: 'busy', replicas, instances: healthy(replicas) }).input,
      { now: at(i), previous: prev },
    );
    await store.writeCycle({ id: `c${i}`, at: at(i) }, [{ detail: d, transitions: diffDetails(prev, d, at(i)) }]);
    prev = d;
  }
  await store.close();
  return file;
}

/** Overwrites every page of `tables` (and of their indexes) with garbage, as a disk fault would. */
export function corruptTables(file: string, tables: readonly string[]): number {
  const db = new Database(file, { readonly: true });
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const names = db
    .prepare(`SELECT name FROM sqlite_master WHERE tbl_name IN (${tables.map(() => '?').join(', ')})`)
    .all(...tables)
    .map((r) => (r as { name: string }).name);
  const pages = db
    .prepare(`SELECT pageno FROM dbstat WHERE name IN (${names.map(() => '?').join(', ')})`)
    .all(...names)
    .map((r) => (r as { pageno: number }).pageno);
  db.close();
  const garbage = Buffer.alloc(pageSize, 0);
  for (let i = 0; i < pageSize; i++) garbage[i] = (i * 131 + 7) & 0xff;
  const fd = openSync(file, 'r+');
  for (const p of pages) writeSync(fd, garbage, 0, pageSize, (p - 1) * pageSize);
  closeSync(fd);
  return pages.length;
}

/** Overwrites the first 100 bytes (SQLite's header). */
export function corruptHeader(file: string): void {
  const fd = openSync(file, 'r+');
  writeSync(fd, Buffer.alloc(100, 0x41), 0, 100, 0);
  closeSync(fd);
}
