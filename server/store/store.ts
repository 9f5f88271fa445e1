import 'server-only';
// The timeline store: transitions (one row per changed field) and each pool's state history as keyframes plus
// patches, so a pool can be shown as it was at any instant without storing repeated snapshots. One
// implementation over a tiny SQL interface, with SQLite (default) and PostgreSQL drivers.

import fjp from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import { applyHistory, diffStoredRows, type HistoryPatch } from './history-patch';
import { completeStored, deflateDoc, deflateIfShorter, inflateDoc, parseStored, splitStored, storedState, storedText, unpackDetail, type StoredRows, type StoredState } from './pack';
import type { PoolDetail, PoolSummary, TimelineEntry } from '@/lib/api-types';

/** What a driver provides: `?` placeholders, rows as objects, and a transaction. */
export interface SqlDb {
  readonly dialect: 'sqlite' | 'postgres';
  all<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  run(sql: string, params?: unknown[]): Promise<number>;
  /** Runs `fn` atomically; a throw rolls everything back. */
  tx<T>(fn: (db: SqlDb) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface PoolWrite {
  detail: PoolDetail;
  transitions: TimelineEntry[];
  /** Only transitions (e.g. Events) are new: the pool's state history is not touched. */
  detailUnchanged?: boolean;
  /**
   * `storedState(detail)` (see ./pack) when the caller has it already. Rows it leaves out (null) are as the
   * pool's stored state has them when its last change is `rowsAsOf`; otherwise the whole state is serialised.
   */
  stored?: StoredState;
  rowsAsOf?: string;
}

export interface StoreStats {
  pools: number;
  transitions: number;
  historyRows: number;
}

/** The PostgreSQL NOTIFY channel for stored changes. */
export const CHANGE_CHANNEL = 'poolscope_changes';

/**
 * A new keyframe once the patches since the last one weigh as much as it does (so history costs at most
 * twice its patches), or after this many patches, which bounds the replay of an as-of query.
 */
export const MAX_PATCHES_PER_KEYFRAME = 256;

export interface StoreOptions {
  /** Patches between keyframes at most (default {@link MAX_PATCHES_PER_KEYFRAME}). */
  maxPatchesPerKeyframe?: number;
}

const MIGRATIONS: { version: number; up: (d: SqlDb['dialect']) => string[] }[] = [
  {
    version: 1,
    up: (d) => [
      `CREATE TABLE IF NOT EXISTS pools (
        pool_key TEXT PRIMARY KEY, context TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,
        first_seen TEXT NOT NULL, last_change TEXT NOT NULL, seq INTEGER NOT NULL, detail TEXT NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS pool_history (
        pool_key TEXT NOT NULL, seq INTEGER NOT NULL, at TEXT NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL,
        PRIMARY KEY (pool_key, seq))`,
      'CREATE INDEX IF NOT EXISTS pool_history_at ON pool_history (pool_key, at)',
      `CREATE TABLE IF NOT EXISTS transitions (
        id ${d === 'postgres' ? 'BIGSERIAL PRIMARY KEY' : 'INTEGER PRIMARY KEY AUTOINCREMENT'},
        pool_key TEXT NOT NULL, at TEXT NOT NULL, field TEXT NOT NULL, from_value TEXT, to_value TEXT, detail TEXT)`,
      'CREATE INDEX IF NOT EXISTS transitions_pool_at ON transitions (pool_key, at)',
      'CREATE TABLE IF NOT EXISTS cycles (id TEXT PRIMARY KEY, at TEXT NOT NULL, pools INTEGER NOT NULL, transitions INTEGER NOT NULL)',
    ],
  },
  {
    // The fleet page reads summaries only: a table of their own keeps that read off the pools' large detail
    // rows (SQLite would walk each detail's overflow pages to reach a column stored after it).
    version: 2,
    up: (d) => [
      'CREATE TABLE IF NOT EXISTS pool_summaries (pool_key TEXT PRIMARY KEY, last_change TEXT NOT NULL, summary TEXT NOT NULL)',
      d === 'postgres'
        ? "INSERT INTO pool_summaries (pool_key, last_change, summary) SELECT pool_key, last_change, (detail::json -> 'summary')::text FROM pools"
        : "INSERT INTO pool_summaries (pool_key, last_change, summary) SELECT pool_key, last_change, json_extract(detail, '$.summary') FROM pools",
    ],
  },
  {
    // Keyframes by weight instead of every 32nd row: each pool remembers its last keyframe and the bytes
    // of the patches since. Pools stored before start at a keyframe on their next change (key_seq 0).
    version: 3,
    up: () => [
      'ALTER TABLE pools ADD COLUMN key_seq INTEGER NOT NULL DEFAULT 0',
      'ALTER TABLE pools ADD COLUMN key_bytes INTEGER NOT NULL DEFAULT 0',
      'ALTER TABLE pools ADD COLUMN patch_bytes INTEGER NOT NULL DEFAULT 0',
    ],
  },
];

/**
 * History row kinds: `key` (the whole state, deflated: ./pack), `rows` (a {@link HistoryPatch}: keyed tables
 * by key; deflated when longer than 512 bytes) and `patch` (a JSON Patch, as written before version 3; read).
 */
type HistoryKind = 'key' | 'rows' | 'patch';

export class TimelineStore {
  private readonly maxPatches: number;

  constructor(private readonly db: SqlDb, options: StoreOptions = {}) {
    this.maxPatches = options.maxPatchesPerKeyframe ?? MAX_PATCHES_PER_KEYFRAME;
  }

  get dialect(): SqlDb['dialect'] {
    return this.db.dialect;
  }

  /** Applies pending migrations, each in its own transaction. */
  async migrate(): Promise<number[]> {
    await this.db.run('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
    const done = new Set((await this.db.all<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => Number(r.version)));
    const applied: number[] = [];
    for (const m of MIGRATIONS) {
      if (done.has(m.version)) continue;
      await this.db.tx(async (t) => {
        for (const stmt of m.up(this.db.dialect)) await t.run(stmt);
        await t.run('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)', [m.version, new Date().toISOString()]);
      });
      applied.push(m.version);
    }
    return applied;
  }

  /**
   * Writes one collector cycle atomically: each changed pool's new state (as a keyframe or a patch) and its
   * transitions, and the cycle marker. A crash leaves the previous cycle's consistent state.
   */
  async writeCycle(cycle: { id: string; at: string }, writes: PoolWrite[]): Promise<void> {
    await this.db.tx(async (t) => {
      let transitions = 0;
      for (const w of writes) {
        for (const e of w.transitions) {
          await t.run('INSERT INTO transitions (pool_key, at, field, from_value, to_value, detail) VALUES (?, ?, ?, ?, ?, ?)', [e.poolKey, e.at, e.field, e.from, e.to, e.detail ?? null]);
          transitions++;
        }
        if (w.detailUnchanged) continue;
        const d = w.detail;
        const key = d.summary.key;
        const rows = await t.all<{ seq: number; detail: string; last_change: string; key_seq: number; key_bytes: number; patch_bytes: number }>(
          'SELECT seq, detail, last_change, key_seq, key_bytes, patch_bytes FROM pools WHERE pool_key = ?', [key]);
        const prev = rows[0];
        // The previous state split by row: where the caller left rows out, and for the diff.
        let prevSplit: StoredRows | null = null;
        const prevRows = (p: { detail: string }) => (prevSplit ??= splitStored(inflateDoc(p.detail)));
        let state = w.stored ?? storedState(d);
        if (state.rows.includes(null)) state = (prev && w.rowsAsOf === prev.last_change ? completeStored(state, prevRows(prev)) : null) ?? storedState(d);
        const stored = storedText(state);
        const seq = prev ? Number(prev.seq) + 1 : 1;
        let kind: HistoryKind = 'key';
        let body: string | null = null;
        if (prev && Number(prev.key_seq) > 0 && seq - Number(prev.key_seq) <= this.maxPatches) {
          // Rows compare as text: only those that changed are parsed (a write usually changes one or two).
          const patch = diffStoredRows(prevRows(prev), { rest: state.rest, keys: state.keys, rows: state.rows as string[] });
          const text = patch && deflateIfShorter(JSON.stringify(patch));
          if (text && Number(prev.patch_bytes) + text.length < Number(prev.key_bytes)) {
            kind = 'rows';
            body = text;
          }
        }
        // A keyframe is the whole state, deflated.
        body ??= deflateDoc(stored);
        const keySeq = kind === 'key' ? seq : Number(prev?.key_seq);
        const keyBytes = kind === 'key' ? body.length : Number(prev?.key_bytes);
        const patchBytes = kind === 'key' ? 0 : Number(prev?.patch_bytes) + body.length;
        await t.run('INSERT INTO pool_history (pool_key, seq, at, kind, body) VALUES (?, ?, ?, ?, ?)', [key, seq, cycle.at, kind, body]);
        if (prev) {
          await t.run('UPDATE pools SET seq = ?, detail = ?, last_change = ?, key_seq = ?, key_bytes = ?, patch_bytes = ? WHERE pool_key = ?',
            [seq, stored, cycle.at, keySeq, keyBytes, patchBytes, key]);
          await t.run('UPDATE pool_summaries SET summary = ?, last_change = ? WHERE pool_key = ?', [JSON.stringify(state.rest.summary), cycle.at, key]);
        } else {
          await t.run('INSERT INTO pools (pool_key, context, namespace, name, first_seen, last_change, seq, detail, key_seq, key_bytes, patch_bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
            [key, d.summary.ref.context, d.summary.ref.namespace, d.summary.ref.name, cycle.at, cycle.at, seq, stored, keySeq, keyBytes, patchBytes]);
          await t.run('INSERT INTO pool_summaries (pool_key, last_change, summary) VALUES (?, ?, ?)', [key, cycle.at, JSON.stringify(state.rest.summary)]);
        }
      }
      await t.run('INSERT INTO cycles (id, at, pools, transitions) VALUES (?, ?, ?, ?)', [cycle.id, cycle.at, writes.length, transitions]);
      // Other replicas reading the same PostgreSQL learn of the change at commit (LISTEN/NOTIFY).
      if (this.db.dialect === 'postgres') {
        for (const w of writes) {
          const payload = JSON.stringify({ poolKey: w.detail.summary.key, at: cycle.at, fields: [...new Set(w.transitions.map((e) => e.field))] });
          await t.all('SELECT pg_notify(?, ?)', [CHANGE_CHANNEL, payload]);
        }
      }
    });
  }

  /**
   * Records timeline entries outside a collector cycle (a resync marker): the pool's state history is not
   * touched. Other replicas hear of it through PostgreSQL as of any stored change.
   */
  async appendEntries(entries: TimelineEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.db.tx(async (t) => {
      for (const e of entries) {
        await t.run('INSERT INTO transitions (pool_key, at, field, from_value, to_value, detail) VALUES (?, ?, ?, ?, ?, ?)', [e.poolKey, e.at, e.field, e.from, e.to, e.detail ?? null]);
      }
      if (this.db.dialect === 'postgres') {
        for (const key of new Set(entries.map((e) => e.poolKey))) {
          const mine = entries.filter((e) => e.poolKey === key);
          await t.all('SELECT pg_notify(?, ?)', [CHANGE_CHANNEL, JSON.stringify({ poolKey: key, at: (mine[mine.length - 1] as TimelineEntry).at, fields: [...new Set(mine.map((e) => e.field))] })]);
        }
      }
    });
  }

  private revive(row: { detail: string; last_change: string }, at: string): PoolDetail {
    const d = unpackDetail(parseStored(inflateDoc(row.detail)) as unknown as PoolDetail);
    return { ...d, summary: { ...d.summary, lastChange: row.last_change }, at };
  }

  /** The latest state of every pool. */
  async currentPools(now = new Date().toISOString()): Promise<PoolDetail[]> {
    const rows = await this.db.all<{ detail: string; last_change: string }>('SELECT detail, last_change FROM pools ORDER BY pool_key');
    return rows.map((r) => this.revive(r, now));
  }

  /** The latest summary of every pool (the fleet table), without reading their instance tables. */
  async currentSummaries(): Promise<PoolSummary[]> {
    const rows = await this.db.all<{ summary: string; last_change: string }>('SELECT summary, last_change FROM pool_summaries ORDER BY pool_key');
    return rows.map((r) => ({ ...(JSON.parse(r.summary) as PoolSummary), lastChange: r.last_change }));
  }

  async currentPool(key: string, now = new Date().toISOString()): Promise<PoolDetail | null> {
    const rows = await this.db.all<{ detail: string; last_change: string }>('SELECT detail, last_change FROM pools WHERE pool_key = ?', [key]);
    return rows[0] ? this.revive(rows[0], now) : null;
  }

  /** Transitions of one pool in [from, to], oldest first. */
  async timeline(key: string, from: string, to: string): Promise<TimelineEntry[]> {
    const rows = await this.db.all<{ at: string; pool_key: string; field: string; from_value: string | null; to_value: string | null; detail: string | null }>(
      'SELECT at, pool_key, field, from_value, to_value, detail FROM transitions WHERE pool_key = ? AND at >= ? AND at <= ? ORDER BY at, id', [key, from, to]);
    return rows.map((r) => ({ at: r.at, poolKey: r.pool_key, field: r.field, from: r.from_value, to: r.to_value, ...(r.detail ? { detail: r.detail } : {}) }));
  }

  /** The pool's complete state as of `at`: the last keyframe at or before it, with the patches after it applied. */
  async poolAt(key: string, at: string): Promise<PoolDetail | null> {
    const rows = await this.db.all<{ seq: number; at: string; kind: string; body: string }>(
      `SELECT seq, at, kind, body FROM pool_history WHERE pool_key = ? AND at <= ? AND seq >= (
         SELECT COALESCE(MAX(seq), 0) FROM pool_history WHERE pool_key = ? AND kind = 'key' AND at <= ?) ORDER BY seq`, [key, at, key, at]);
    if (rows.length === 0 || rows[0]?.kind !== 'key') return null;
    let doc: object = parseStored(inflateDoc((rows[0] as { body: string }).body));
    let lastChange = (rows[0] as { at: string }).at;
    for (const r of rows.slice(1)) {
      if (r.kind === 'key') doc = parseStored(inflateDoc(r.body));
      else if (r.kind === 'rows') doc = applyHistory(doc, JSON.parse(inflateDoc(r.body)) as HistoryPatch);
      else doc = fjp.applyPatch(doc, JSON.parse(r.body) as Operation[], false, true).newDocument;
      lastChange = r.at;
    }
    const d = unpackDetail(doc as PoolDetail);
    return { ...d, summary: { ...d.summary, lastChange }, at };
  }

  async lastCycle(): Promise<{ id: string; at: string } | null> {
    const rows = await this.db.all<{ id: string; at: string }>('SELECT id, at FROM cycles ORDER BY at DESC, id DESC LIMIT 1');
    return rows[0] ?? null;
  }

  /**
   * Drops what is older than `before`, keeping for every pool the keyframe (and its patches) needed to show
   * the state at `before` itself.
   */
  async prune(before: string): Promise<{ transitions: number; history: number; cycles: number }> {
    return this.db.tx(async (t) => {
      const transitions = await t.run('DELETE FROM transitions WHERE at < ?', [before]);
      const history = await t.run(
        `DELETE FROM pool_history WHERE seq < (
           SELECT COALESCE(MAX(h.seq), 0) FROM pool_history h WHERE h.pool_key = pool_history.pool_key AND h.kind = 'key' AND h.at <= ?)`, [before]);
      const cycles = await t.run('DELETE FROM cycles WHERE at < ?', [before]);
      return { transitions, history, cycles };
    });
  }

  async stats(): Promise<StoreStats> {
    const [p] = await this.db.all<{ n: number }>('SELECT COUNT(*) AS n FROM pools');
    const [t] = await this.db.all<{ n: number }>('SELECT COUNT(*) AS n FROM transitions');
    const [h] = await this.db.all<{ n: number }>('SELECT COUNT(*) AS n FROM pool_history');
    return { pools: Number(p?.n ?? 0), transitions: Number(t?.n ?? 0), historyRows: Number(h?.n ?? 0) };
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
