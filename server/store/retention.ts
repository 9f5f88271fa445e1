import 'server-only';
// Retention: history older than POOLSCOPE_RETENTION_DAYS is pruned in the background, at start and then hourly,
// by the process that collects (on several replicas, the leader). With POOLSCOPE_RETENTION_MAX_SIZE (SQLite), a
// store still larger than that is pruned further, oldest first, down to its last hour: the oldest history goes
// before the volume fills and recording stops. One prune at a time; a prune that fails is logged, counted and
// tried again at the next hour; stopping waits for the prune's current transaction only. After a prune that left
// much of a SQLite file free (a shorter retention, pools gone, the size limit), the file gives that room back.

import type { Logger } from 'pino';
import type { PruneOptions, PruneResult } from './store';

/** How often the store is pruned. */
const PRUNE_INTERVAL_MS = 3_600_000;

/** What a size limit never prunes: the last hour. */
const MIN_KEPT_MS = 3_600_000;

/**
 * How much free room a SQLite file keeps when it shrinks: a tenth of the file, and 64 MiB at least. It shrinks after
 * a prune that left twice that free. In steady state an hourly prune frees about what the next hour's rows take
 * (1/720 of a 30-day store), which stays inside; what a shorter retention, pools gone or the size limit freed is
 * given back.
 */
const SHRINK_KEEP = { fraction: 0.1, minBytes: 64 * 2 ** 20 };

/** What the metrics and the sources report read of retention. */
export interface RetentionStatus {
  retentionDays: number;
  /** When the last prune that completed ended; until one has, when this process started pruning (RFC 3339). */
  lastPrunedAt: string;
  /** Whether a prune has completed in this process yet. */
  pruned: boolean;
  /** Rows deleted since start, by table; and deleted pools dropped whole. */
  deleted: Pick<PruneResult, 'transitions' | 'history' | 'cycles' | 'pools'>;
  /** Where the last prune cut: POOLSCOPE_RETENTION_DAYS ago, or later when the size limit made it prune more. */
  cutoff: string | null;
  /** The size limit (bytes), and the store's bytes in use (its size less its free pages) after the last prune. */
  maxBytes: number | null;
  usedBytes: number | null;
  /** Bytes the SQLite file gave back to the file system since start (free room past {@link SHRINK_KEEP}). */
  shrunkBytes: number;
  /** Prunes that failed since start, and the last one's reason (null once one completes). */
  failures: number;
  lastError: string | null;
  running: boolean;
}

export interface RetentionOptions {
  store: {
    prune(before: string, options?: PruneOptions): Promise<PruneResult>;
    sizeBytes?(): Promise<number>;
    freeBytes?(): Promise<number | null>;
    shrink?(keepBytes: number, options?: Pick<PruneOptions, 'pause' | 'signal'>): Promise<number | null>;
  };
  retentionDays: number;
  /** The store's size limit in bytes (SQLite), past which the oldest history is pruned too. */
  maxBytes?: number;
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
  intervalMs?: number;
  now?: () => number;
  /** Passed to each prune (tests: small transactions; the collector, to forget the pools dropped whole). */
  prune?: Omit<PruneOptions, 'signal'>;
  /** How much free room the file keeps after a prune (default {@link SHRINK_KEEP}). */
  shrinkKeep?: { fraction: number; minBytes: number };
}

export class Retention {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private readonly abort = new AbortController();
  private readonly now: () => number;
  private readonly status: RetentionStatus;
  /** Where the last prune the size limit forced cut (ms; 0: none yet). */
  private sizeCutoff = 0;
  /** Whether the log has said that the file cannot give its free room back (once a process). */
  private toldNoShrink = false;

  constructor(private readonly opts: RetentionOptions) {
    this.now = opts.now ?? Date.now;
    this.status = {
      retentionDays: opts.retentionDays,
      lastPrunedAt: new Date(this.now()).toISOString(),
      pruned: false,
      deleted: { transitions: 0, history: 0, cycles: 0, pools: 0 },
      cutoff: null,
      maxBytes: opts.maxBytes ?? null,
      usedBytes: null,
      shrunkBytes: 0,
      failures: 0,
      lastError: null,
      running: false,
    };
  }

  /** Prunes now, then every interval. */
  start(): void {
    if (this.timer || this.abort.signal.aborted) return;
    void this.pruneNow();
    this.timer = setInterval(() => void this.pruneNow(), this.opts.intervalMs ?? PRUNE_INTERVAL_MS);
    this.timer.unref();
  }

  /** Runs a prune, or waits for the one running; never rejects (a failure is logged and counted). */
  pruneNow(): Promise<void> {
    this.running ??= this.run().finally(() => {
      this.running = null;
      this.status.running = false;
    });
    return this.running;
  }

  private async run(): Promise<void> {
    if (this.abort.signal.aborted) return;
    this.status.running = true;
    const started = this.now();
    const before = new Date(started - this.opts.retentionDays * 86_400_000).toISOString();
    try {
      const r = await this.prune(before);
      this.status.cutoff = before;
      this.opts.log.info({ before, ...r, ms: this.now() - started }, 'store pruned');
      if (this.opts.maxBytes !== undefined) await this.pruneToSize(before, started);
      await this.shrink();
      this.status.lastPrunedAt = new Date(this.now()).toISOString();
      this.status.pruned = true;
      this.status.lastError = null;
    } catch (e) {
      if (this.abort.signal.aborted) {
        this.opts.log.info({ before }, 'store prune stopped');
        return;
      }
      this.status.failures++;
      this.status.lastError = (e as Error).message;
      this.opts.log.error({ before, err: (e as Error).message }, 'store prune failed');
    }
  }

  /** One prune; what it deletes counts as each of its transactions commits (a long prune's progress shows). */
  private prune(before: string): Promise<PruneResult> {
    const { onDropped, onDeleted } = this.opts.prune ?? {};
    return this.opts.store.prune(before, {
      ...this.opts.prune,
      signal: this.abort.signal,
      onDeleted: (table, rows) => {
        this.status.deleted[table] += rows;
        onDeleted?.(table, rows);
      },
      onDropped: (key) => {
        this.status.deleted.pools++;
        onDropped?.(key);
      },
    });
  }

  /** The store's bytes in use: its size less the free pages that new rows take first. */
  private async usedBytes(): Promise<number> {
    const { sizeBytes, freeBytes } = this.opts.store;
    if (!sizeBytes || !freeBytes)
      throw new Error('this store cannot report its size: POOLSCOPE_RETENTION_MAX_SIZE needs SQLite');
    const used = (await sizeBytes.call(this.opts.store)) - ((await freeBytes.call(this.opts.store)) ?? 0);
    this.status.usedBytes = used;
    return used;
  }

  /**
   * While the store uses more than its limit, prunes further: the cutoff moves forward a quarter of the way to the
   * last hour each time (at least an hour), from where the last limited prune stopped. The last hour stays.
   */
  private async pruneToSize(before: string, started: number): Promise<void> {
    const max = this.opts.maxBytes as number;
    const floor = started - MIN_KEPT_MS;
    let cutoff = Math.max(Date.parse(before), this.sizeCutoff);
    const from = cutoff;
    while ((await this.usedBytes()) > max) {
      if (cutoff >= floor) {
        this.opts.log.error(
          { usedBytes: this.status.usedBytes, maxBytes: max },
          'store over its size limit with only its last hour left: raise POOLSCOPE_RETENTION_MAX_SIZE (and the volume)',
        );
        break;
      }
      cutoff = Math.min(floor, cutoff + Math.max(MIN_KEPT_MS, (floor - cutoff) / 4));
      await this.prune(new Date(cutoff).toISOString());
    }
    if (cutoff > Date.parse(before)) {
      this.sizeCutoff = cutoff;
      this.status.cutoff = new Date(cutoff).toISOString();
      if (cutoff > from)
        this.opts.log.warn(
          { before: this.status.cutoff, usedBytes: this.status.usedBytes, maxBytes: max },
          'store pruned to its size limit: history before this is gone',
        );
    }
  }

  /**
   * Gives the free room past {@link SHRINK_KEEP} back to the file system, once twice that is free. A file that
   * cannot (created before poolscope turned incremental vacuum on) is logged once, with how to turn it on.
   */
  private async shrink(): Promise<void> {
    const { sizeBytes, freeBytes, shrink } = this.opts.store;
    if (!sizeBytes || !freeBytes || !shrink) return;
    const free = await freeBytes.call(this.opts.store);
    if (free === null) return;
    const size = await sizeBytes.call(this.opts.store);
    const keep = this.opts.shrinkKeep ?? SHRINK_KEEP;
    // A tenth of the file as it will be: of what is used and what stays free.
    const keepBytes = Math.max(keep.minBytes, Math.round(((size - free) * keep.fraction) / (1 - keep.fraction)));
    if (free <= 2 * keepBytes) return;
    const started = this.now();
    const shrunk = await shrink.call(this.opts.store, keepBytes, { signal: this.abort.signal });
    if (shrunk === null) {
      if (!this.toldNoShrink) {
        this.toldNoShrink = true;
        this.opts.log.warn(
          { freeBytes: free, sizeBytes: size },
          "the store's file has free room it cannot give back: it was created before poolscope turned SQLite's incremental vacuum on. To shrink it, stop poolscope and run: sqlite3 <POOLSCOPE_DB_PATH> 'PRAGMA auto_vacuum = INCREMENTAL; VACUUM' (the README's Sizing says how with poolscope's image)",
        );
      }
      return;
    }
    this.status.shrunkBytes += shrunk;
    if (shrunk > 0)
      this.opts.log.info(
        { shrunkBytes: shrunk, sizeBytes: size - shrunk, ms: this.now() - started },
        'store file shrunk',
      );
  }

  /** A copy of what retention did. */
  get(): RetentionStatus {
    return { ...this.status, deleted: { ...this.status.deleted } };
  }

  /** Stops the timer and a running prune (after its current transaction), and waits for it. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.abort.abort(new Error('retention stopped'));
    await this.running;
  }
}
