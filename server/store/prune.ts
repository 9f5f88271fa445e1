// Retention's side of the store: dropping what is older than a cutoff (keeping what an as-of read at the cutoff
// needs), pools gone before it whole; SQLite's free space given back; and the store's size and row counts.

import { STORE_TABLES } from './schema';
import { yieldToEventLoop, type PruneOptions, type PruneResult, type SqlDb, type StoreStats } from './types';

/** Rows a prune deletes in one transaction at most (a few milliseconds of the event loop's time each). */
const PRUNE_BATCH_ROWS = 1000;

/** SQLite: free pages given back to the file system in one transaction at most when the store shrinks (4 MB of 4 KB pages: ~30 ms). */
const SHRINK_BATCH_PAGES = 1024;

export class Pruner {
  constructor(private readonly db: SqlDb) {}

  /**
   * Drops what is older than `before`, keeping for every pool the keyframe (and its patches) needed to show the
   * state at `before` itself; and the pools deleted before `before`, whole. It works pool by pool through the
   * indexes, in transactions of at most `batchRows` rows, and lets the event loop run between them (`pause`): the
   * collector's cycles and the API's reads go on
   * while a large backlog is pruned (on SQLite, a statement holds the process's only thread while it runs). An
   * error stops it where it is: what it deleted stays deleted, and the next prune goes on from there. A pool's
   * history goes oldest first, so what is left of it is always its newest rows, unbroken: an as-of read shows a
   * moment whole (from a keyframe and every patch after it) or, where it was pruned, not at all.
   */
  async prune(before: string, options: PruneOptions = {}): Promise<PruneResult> {
    const batch = Math.max(1, Math.floor(options.batchRows ?? PRUNE_BATCH_ROWS));
    const pause = options.pause ?? yieldToEventLoop;
    const out: PruneResult = { transitions: 0, history: 0, cycles: 0, pools: 0, batches: 0 };
    // After each committed transaction: the event loop runs, and a stop takes effect.
    const committed = async () => {
      out.batches++;
      await pause();
      options.signal?.throwIfAborted();
    };
    // Deletes in transactions of at most `batch` rows until one deletes fewer; counts into `out[what]`. With
    // `guard`, each transaction first checks it still holds, and stops (false) when it does not.
    const drain = async (
      what: 'transitions' | 'history' | 'cycles',
      sql: string,
      params: unknown[],
      guard?: (t: SqlDb) => Promise<boolean>,
    ): Promise<boolean> => {
      for (;;) {
        const n = await this.db.tx(async (t) => (guard && !(await guard(t)) ? -1 : t.run(sql, [...params, batch])));
        if (n < 0) return false;
        out[what] += n;
        if (n > 0) options.onDeleted?.(what, n);
        await committed();
        if (n < batch) return true;
      }
    };
    for (
      let key = await this.nextPoolKey('pool_history', null);
      key !== null;
      key = await this.nextPoolKey('pool_history', key)
    ) {
      // The pool's last keyframe at or before the cutoff: everything before it goes (none: nothing to cut).
      const [cut] = await this.db.all<{ seq: number | null }>(
        "SELECT MAX(seq) AS seq FROM pool_history WHERE pool_key = ? AND kind = 'key' AND at <= ?",
        [key, before],
      );
      const seq = Number(cut?.seq ?? 0);
      if (seq > 0)
        await drain(
          'history',
          'DELETE FROM pool_history WHERE pool_key = ? AND seq IN (SELECT seq FROM pool_history WHERE pool_key = ? AND seq < ? ORDER BY seq LIMIT ?)',
          [key, key, seq],
        );
    }
    for (
      let key = await this.nextPoolKey('transitions', null);
      key !== null;
      key = await this.nextPoolKey('transitions', key)
    ) {
      await drain(
        'transitions',
        'DELETE FROM transitions WHERE id IN (SELECT id FROM transitions WHERE pool_key = ? AND at < ? ORDER BY at LIMIT ?)',
        [key, before],
      );
    }
    await drain('cycles', 'DELETE FROM cycles WHERE id IN (SELECT id FROM cycles WHERE at < ? ORDER BY at LIMIT ?)', [
      before,
    ]);
    // Pools deleted (or unwatched) before the cutoff go whole: the rest of their history and timeline, then (last, so
    // that a prune stopped meanwhile finds them again) their current state. Each transaction checks, holding the
    // pool's row (PostgreSQL: locked against the collector's write), that the pool is still gone: one that came back
    // meanwhile keeps what it has.
    const lock = this.db.dialect === 'postgres' ? ' FOR UPDATE' : '';
    for (const { pool_key: key } of await this.db.all<{ pool_key: string }>(
      'SELECT pool_key FROM pools WHERE deleted_at < ? ORDER BY pool_key',
      [before],
    )) {
      const gone = async (t: SqlDb) => {
        const [p] = await t.all<{ deleted_at: string | null }>(
          `SELECT deleted_at FROM pools WHERE pool_key = ?${lock}`,
          [key],
        );
        return typeof p?.deleted_at === 'string' && p.deleted_at < before;
      };
      if (
        !(await drain(
          'history',
          'DELETE FROM pool_history WHERE pool_key = ? AND seq IN (SELECT seq FROM pool_history WHERE pool_key = ? ORDER BY seq LIMIT ?)',
          [key, key],
          gone,
        ))
      )
        continue;
      if (
        !(await drain(
          'transitions',
          'DELETE FROM transitions WHERE id IN (SELECT id FROM transitions WHERE pool_key = ? ORDER BY at LIMIT ?)',
          [key],
          gone,
        ))
      )
        continue;
      const dropped = await this.db.tx(async (t) => {
        if (!(await gone(t))) return false;
        await t.run('DELETE FROM pool_rows WHERE pool_key = ?', [key]);
        await t.run('DELETE FROM pool_summaries WHERE pool_key = ?', [key]);
        await t.run('DELETE FROM azure_reads WHERE pool_key = ?', [key]);
        await t.run('DELETE FROM pools WHERE pool_key = ?', [key]);
        return true;
      });
      if (dropped) {
        out.pools++;
        options.onDropped?.(key);
      }
      await committed();
    }
    return out;
  }

  /** The first pool key of `table` after `after` (the first of all when null), by its index: one seek, not a scan. */
  private async nextPoolKey(table: 'pool_history' | 'transitions', after: string | null): Promise<string | null> {
    const [r] =
      after === null
        ? await this.db.all<{ pool_key: string }>(`SELECT pool_key FROM ${table} ORDER BY pool_key LIMIT 1`)
        : await this.db.all<{ pool_key: string }>(
            `SELECT pool_key FROM ${table} WHERE pool_key > ? ORDER BY pool_key LIMIT 1`,
            [after],
          );
    return r?.pool_key ?? null;
  }

  /**
   * SQLite's free pages, in bytes: space inside the file that pruning freed and new rows take before the file grows
   * again; null on PostgreSQL (autovacuum manages its free space).
   */
  async freeBytes(): Promise<number | null> {
    return this.db.dialect === 'sqlite' ? this.sqlitePagesBytes('freelist_count') : null;
  }

  /**
   * SQLite: gives the file's free pages beyond `keepBytes` back to the file system (incremental vacuum: pages from
   * the end of the file move into free ones, and the file is cut), in transactions of {@link SHRINK_BATCH_PAGES}
   * pages, the collector's writes going on between them. Returns the bytes given back; null when this store cannot:
   * PostgreSQL (autovacuum keeps its free space for new rows), or a SQLite file created without incremental
   * auto-vacuum (before poolscope set it; a VACUUM turns it on, see the README's Sizing).
   */
  async shrink(
    keepBytes: number,
    options: Pick<PruneOptions, 'pause' | 'signal'> & { batchPages?: number } = {},
  ): Promise<number | null> {
    if (this.db.dialect !== 'sqlite') return null;
    const [mode] = await this.db.all<{ auto_vacuum: number }>('PRAGMA auto_vacuum');
    if (Number(mode?.auto_vacuum) !== 2) return null;
    const [size] = await this.db.all<{ page_size: number }>('PRAGMA page_size');
    const pageSize = Number(size?.page_size);
    const pause = options.pause ?? yieldToEventLoop;
    const batch = Math.max(1, Math.floor(options.batchPages ?? SHRINK_BATCH_PAGES));
    let shrunk = 0;
    for (;;) {
      // Each step reads the free pages anew: the collector's writes meanwhile take some.
      const pages = Math.min(batch, Math.floor(((await this.freeBytes()) ?? 0) / pageSize - keepBytes / pageSize));
      if (pages <= 0) return shrunk;
      // What the file gave back: its free pages, and pointer-map pages it no longer needs.
      const freed = await this.db.tx(async (t) => {
        const before = await this.sizeBytes();
        await t.run(`PRAGMA incremental_vacuum(${pages})`);
        return before - (await this.sizeBytes());
      });
      shrunk += freed;
      if (freed < pages * pageSize) return shrunk;
      await pause();
      options.signal?.throwIfAborted();
    }
  }

  /** SQLite: a count of pages (all of the file's, or its free ones) in bytes. */
  private async sqlitePagesBytes(pragma: 'page_count' | 'freelist_count'): Promise<number> {
    const [count] = await this.db.all<Record<string, number>>(`PRAGMA ${pragma}`);
    const [size] = await this.db.all<{ page_size: number }>('PRAGMA page_size');
    return Number(count?.[pragma] ?? 0) * Number(size?.page_size ?? 0);
  }

  /**
   * The store's size on disk, in bytes: SQLite's database pages (free pages included; its WAL file, a few MB, aside);
   * on PostgreSQL, poolscope's tables with their indexes and TOAST (not the rest of the database).
   */
  async sizeBytes(): Promise<number> {
    if (this.db.dialect === 'sqlite') return this.sqlitePagesBytes('page_count');
    const [r] = await this.db.all<{ n: string | number }>(
      `SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) AS n FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
       WHERE c.relkind = 'r' AND s.nspname = current_schema() AND c.relname IN (${STORE_TABLES.map((t) => `'${t}'`).join(', ')})`,
    );
    return Number(r?.n ?? 0);
  }

  async stats(): Promise<StoreStats> {
    const [p] = await this.db.all<{ n: number }>('SELECT COUNT(*) AS n FROM pools');
    const [t] = await this.db.all<{ n: number }>('SELECT COUNT(*) AS n FROM transitions');
    const [h] = await this.db.all<{ n: number }>('SELECT COUNT(*) AS n FROM pool_history');
    return { pools: Number(p?.n ?? 0), transitions: Number(t?.n ?? 0), historyRows: Number(h?.n ?? 0) };
  }
}
