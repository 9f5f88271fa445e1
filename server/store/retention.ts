import 'server-only';
// Retention: history older than POOLSCOPE_RETENTION_DAYS is pruned in the background, at start and then hourly,
// by the process that collects (on several replicas, the leader). One prune at a time; a prune that fails is
// logged, counted and tried again at the next hour; stopping waits for the prune's current transaction only.

import type { Logger } from 'pino';
import type { PruneOptions, PruneResult } from './store';

/** How often the store is pruned. */
export const PRUNE_INTERVAL_MS = 3_600_000;

/** What the metrics and the sources report read of retention. */
export interface RetentionStatus {
  retentionDays: number;
  /** When the last prune that completed ended; until one has, when this process started pruning (RFC 3339). */
  lastPrunedAt: string;
  /** Whether a prune has completed in this process yet. */
  pruned: boolean;
  /** Rows deleted since start, by table; and deleted pools dropped whole. */
  deleted: Pick<PruneResult, 'transitions' | 'history' | 'cycles' | 'pools'>;
  /** Prunes that failed since start, and the last one's reason (null once one completes). */
  failures: number;
  lastError: string | null;
  running: boolean;
}

export interface RetentionOptions {
  store: { prune(before: string, options?: PruneOptions): Promise<PruneResult> };
  retentionDays: number;
  log: Pick<Logger, 'info' | 'error'>;
  intervalMs?: number;
  now?: () => number;
  /** Passed to each prune (tests: small transactions). */
  prune?: Omit<PruneOptions, 'signal'>;
}

export class Retention {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private readonly abort = new AbortController();
  private readonly now: () => number;
  private readonly status: RetentionStatus;

  constructor(private readonly opts: RetentionOptions) {
    this.now = opts.now ?? Date.now;
    this.status = {
      retentionDays: opts.retentionDays,
      lastPrunedAt: new Date(this.now()).toISOString(),
      pruned: false,
      deleted: { transitions: 0, history: 0, cycles: 0, pools: 0 },
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
      const r = await this.opts.store.prune(before, { ...this.opts.prune, signal: this.abort.signal });
      for (const t of ['transitions', 'history', 'cycles', 'pools'] as const) this.status.deleted[t] += r[t];
      this.status.lastPrunedAt = new Date(this.now()).toISOString();
      this.status.pruned = true;
      this.status.lastError = null;
      this.opts.log.info({ before, ...r, ms: this.now() - started }, 'store pruned');
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
