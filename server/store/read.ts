// The store's read path: pools as they are now and as they were at an instant (a keyframe and the patches after
// it), their summaries, their timelines and pages of changes, and what the readiness and freshness answers read.

import type { PoolDetail, PoolSummary, TimelineEntry } from '@/lib/api-types';
import { applyHistory, type HistoryPatch } from './history-patch';
import { revive, WHOLE, type TableRow } from './layout';
import { inflateDoc, parseStored, unpackDetail } from './pack';
import { yieldToEventLoop, type Position, type SqlDb } from './types';

/** A stored transition, as the timeline reads read it. */
type TransitionRow = {
  id: number;
  at: string;
  field: string;
  from_value: string | null;
  to_value: string | null;
  detail: string | null;
};
const TRANSITION_COLUMNS = 'id, at, field, from_value, to_value, detail';

const entryOf = (poolKey: string, r: TransitionRow): TimelineEntry => ({
  at: r.at,
  poolKey,
  field: r.field,
  from: r.from_value,
  to: r.to_value,
  ...(r.detail ? { detail: r.detail } : {}),
});

/** PostgreSQL gives a BIGSERIAL id as text. */
const positionOf = (r: TransitionRow): Position => ({ at: r.at, id: Number(r.id) });

/** Rows per page of a timeline read (about 15 ms of SQLite's time on a 2-core machine). */
const TIMELINE_PAGE_ROWS = 4000;

export class StoreReader {
  constructor(private readonly db: SqlDb) {}

  /** The latest state of every pool. */
  async currentPools(now = new Date().toISOString()): Promise<PoolDetail[]> {
    const pools = await this.db.all<{ pool_key: string; detail: string; last_change: string; rows_apart: number }>(
      'SELECT pool_key, detail, last_change, rows_apart FROM pools ORDER BY pool_key',
    );
    const rows = new Map<string, TableRow[]>();
    for (const r of await this.db.all<TableRow & { pool_key: string }>(
      'SELECT pool_key, tbl, row_key, body FROM pool_rows',
    )) {
      let list = rows.get(r.pool_key);
      if (!list) rows.set(r.pool_key, (list = []));
      list.push(r);
    }
    return pools.map((p) => revive(p, now, rows.get(p.pool_key)));
  }

  /** The latest summary of every pool (the fleet table), without reading their instance tables. */
  async currentSummaries(): Promise<PoolSummary[]> {
    const rows = await this.db.all<{ summary: string; last_change: string }>(
      'SELECT summary, last_change FROM pool_summaries ORDER BY pool_key',
    );
    return rows.map((r) => ({ ...(JSON.parse(r.summary) as PoolSummary), lastChange: r.last_change }));
  }

  async currentPool(key: string, now = new Date().toISOString()): Promise<PoolDetail | null> {
    const [row] = await this.db.all<{ detail: string; last_change: string; rows_apart: number }>(
      'SELECT detail, last_change, rows_apart FROM pools WHERE pool_key = ?',
      [key],
    );
    if (!row) return null;
    const rows =
      Number(row.rows_apart) !== WHOLE
        ? await this.db.all<TableRow>('SELECT tbl, row_key, body FROM pool_rows WHERE pool_key = ?', [key])
        : undefined;
    return revive(row, now, rows);
  }

  /**
   * The pool's version as stored, or null when the store has no such pool: its sequence (one more with each state
   * written) and the entries stored for it without a new state (Events, resync markers). Anything a pool's answers
   * show changes one of the two.
   */
  async poolVersion(key: string): Promise<string | null> {
    const [r] = await this.db.all<{ seq: number; entries: number }>(
      'SELECT seq, entries FROM pools WHERE pool_key = ?',
      [key],
    );
    return r ? `${Number(r.seq)}.${Number(r.entries)}` : null;
  }

  /** When the pool's scale set was last read from Azure (see recordAzureReads), or null. */
  async azureReadAt(key: string): Promise<string | null> {
    const [r] = await this.db.all<{ read_at: string }>('SELECT read_at FROM azure_reads WHERE pool_key = ?', [key]);
    return r?.read_at ?? null;
  }

  /**
   * Transitions of one pool in [from, to], oldest first. Read in pages of TIMELINE_PAGE_ROWS, letting the event loop
   * run between them: a month of a busy pool (tens of thousands of rows) does not hold other requests for its whole
   * read (on SQLite a statement holds the process's only thread while it runs).
   */
  async timeline(key: string, from: string, to: string): Promise<TimelineEntry[]> {
    const out: TimelineEntry[] = [];
    let after: Position | null = null;
    for (;;) {
      const rows: TransitionRow[] = await this.db.all<TransitionRow>(
        `SELECT ${TRANSITION_COLUMNS} FROM transitions WHERE pool_key = ? AND at <= ? AND ${
          after ? 'at >= ? AND (at > ? OR id > ?)' : 'at >= ?'
        } ORDER BY at, id LIMIT ${TIMELINE_PAGE_ROWS}`,
        after ? [key, to, after.at, after.at, after.id] : [key, to, from],
      );
      for (const r of rows) out.push(entryOf(key, r));
      const last = rows.at(-1);
      if (!last || rows.length < TIMELINE_PAGE_ROWS) return out;
      after = positionOf(last);
      await yieldToEventLoop();
    }
  }

  /**
   * One page of a pool's transitions in [from, to], newest first: at most `limit`, older than `before` (a position
   * a previous page returned) when given. Through the (pool, at) index, so a page costs its own rows only.
   */
  async changesPage(
    key: string,
    from: string,
    to: string,
    before: Position | null,
    limit: number,
  ): Promise<{ entry: TimelineEntry; position: Position }[]> {
    const rows = await this.db.all<TransitionRow>(
      `SELECT ${TRANSITION_COLUMNS} FROM transitions WHERE pool_key = ? AND at >= ? AND ${
        before ? 'at <= ? AND at <= ? AND (at < ? OR id < ?)' : 'at <= ?'
      } ORDER BY at DESC, id DESC LIMIT ${Math.max(1, Math.floor(limit))}`,
      before ? [key, from, to, before.at, before.at, before.id] : [key, from, to],
    );
    return rows.map((r) => ({ entry: entryOf(key, r), position: positionOf(r) }));
  }

  /** The pool's complete state as of `at`: the last keyframe at or before it, with the patches after it applied. */
  async poolAt(key: string, at: string): Promise<PoolDetail | null> {
    const rows = await this.db.all<{ seq: number; at: string; kind: string; body: string }>(
      `SELECT seq, at, kind, body FROM pool_history WHERE pool_key = ? AND at <= ? AND seq >= (
         SELECT COALESCE(MAX(seq), 0) FROM pool_history WHERE pool_key = ? AND kind = 'key' AND at <= ?) ORDER BY seq`,
      [key, at, key, at],
    );
    if (rows.length === 0 || rows[0]?.kind !== 'key') return null;
    let doc: object = parseStored(inflateDoc((rows[0] as { body: string }).body));
    let lastChange = (rows[0] as { at: string }).at;
    for (const r of rows.slice(1)) {
      if (r.kind === 'key') doc = parseStored(inflateDoc(r.body));
      else if (r.kind === 'rows') doc = applyHistory(doc, JSON.parse(inflateDoc(r.body)) as HistoryPatch);
      else
        throw new Error(`state ${Number(r.seq)} of pool ${key} is stored as '${r.kind}', which this build cannot read`);
      lastChange = r.at;
    }
    const d = unpackDetail(doc as PoolDetail);
    return { ...d, summary: { ...d.summary, lastChange }, at };
  }

  /**
   * The first instant `poolAt` can answer for a pool: its oldest keyframe (the first state stored, or the one
   * retention kept at its cutoff); null when the store has no history of it.
   */
  async recordStart(key: string): Promise<string | null> {
    const [r] = await this.db.all<{ at: string | null }>(
      "SELECT MIN(at) AS at FROM pool_history WHERE pool_key = ? AND kind = 'key'",
      [key],
    );
    return r?.at ?? null;
  }

  async lastCycle(): Promise<{ id: string; at: string } | null> {
    const rows = await this.db.all<{ id: string; at: string }>(
      'SELECT id, at FROM cycles ORDER BY at DESC, id DESC LIMIT 1',
    );
    return rows[0] ?? null;
  }
}
