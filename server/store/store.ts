import 'server-only';
// The timeline store: transitions (one row per changed field) and each pool's state history as keyframes plus
// patches, so a pool can be shown as it was at any instant without storing repeated snapshots. One
// implementation over a tiny SQL interface, with SQLite (default) and PostgreSQL drivers. This is its face; the
// rooms behind it: ./schema (tables, migrations), ./write (a cycle's states and transitions), ./last-written (what
// it wrote last of each pool: writers hand it plain analyses), ./read (pools now and as of an instant,
// timelines), ./prune (retention, SQLite's free space), ./layout (where a pool's state is kept).
// Every query goes through ./health's faults: a corrupt or unreadable store is remembered and reported.

import type { PoolDetail, PoolSummary, TimelineEntry } from '@/lib/api-types';
import { StoreFaults, type StoreReadHealth } from './health';
import { Pruner } from './prune';
import { StoreReader } from './read';
import { migrate } from './schema';
import type {
  PoolWrite,
  Position,
  PruneOptions,
  PruneResult,
  SqlDb,
  StoreOptions,
  StoreStats,
  WriteStats,
} from './types';
import { StateWriter } from './write';

export type { PoolWrite, Position, PruneOptions, PruneResult, SqlDb, StoreOptions, StoreStats, WriteStats };
export { CHANGE_CHANNEL } from './types';
export { PATCH_WEIGHT_PER_KEYFRAME } from './write';

export class TimelineStore {
  private readonly db: SqlDb;
  private readonly faults: StoreFaults;
  private readonly writer: StateWriter;
  private readonly reader: StoreReader;
  private readonly pruner: Pruner;

  constructor(db: SqlDb, options: StoreOptions = {}) {
    this.faults = new StoreFaults(options.location ?? { kind: db.dialect }, options.onCorrupt);
    this.db = this.faults.watch(db);
    this.writer = new StateWriter(this.db, options);
    this.reader = new StoreReader(this.db);
    this.pruner = new Pruner(this.db);
  }

  get dialect(): SqlDb['dialect'] {
    return this.db.dialect;
  }

  /**
   * Whether the store answers: `failing` once a query met a corrupt file (for good: it then refuses writes) or a store
   * it cannot read (until a query works again).
   */
  health(): StoreReadHealth {
    return this.faults.health();
  }

  /** What the committed writes did since start (a copy). */
  writeStats(): WriteStats {
    return this.writer.stats();
  }

  /** Makes a new store's tables, or applies pending migrations; refuses a schema this build does not know. */
  migrate(): Promise<number[]> {
    return migrate(this.db);
  }

  // ---- writes (./write; what was written last: ./last-written)
  /**
   * Every pool's current state, each remembered as the last written: a writer resuming from the store asks for
   * them so that an analysis saying the same as the stored state is not written again.
   */
  async resumeWriting(now?: string): Promise<PoolDetail[]> {
    const states = await this.reader.currentPools(now);
    this.writer.lastWritten.resume(states);
    return states;
  }
  /**
   * Whether an analysis says what its pool's last written state says (then nothing is to be written); when it
   * does not, its write is prepared (only the rows that changed are serialised). `previous`: the analysis last
   * written, when the caller has it (its drift items taken over as they were are not hashed again).
   */
  sameAsWritten(detail: PoolDetail, previous?: Pick<PoolDetail, 'drift'> | null): boolean {
    return this.writer.lastWritten.same(detail, previous);
  }
  writeCycle(cycle: { id: string; at: string }, writes: Iterable<PoolWrite>): Promise<void> {
    return this.writer.writeCycle(cycle, writes);
  }
  appendEntries(entries: TimelineEntry[]): Promise<void> {
    return this.writer.appendEntries(entries);
  }
  recordAzureReads(reads: Iterable<readonly [key: string, at: string]>): Promise<void> {
    return this.writer.recordAzureReads(reads);
  }

  // ---- reads (./read)
  currentPools(now?: string): Promise<PoolDetail[]> {
    return this.reader.currentPools(now);
  }
  currentSummaries(): Promise<PoolSummary[]> {
    return this.reader.currentSummaries();
  }
  currentPool(key: string, now?: string): Promise<PoolDetail | null> {
    return this.reader.currentPool(key, now);
  }
  poolVersion(key: string): Promise<string | null> {
    return this.reader.poolVersion(key);
  }
  azureReadAt(key: string): Promise<string | null> {
    return this.reader.azureReadAt(key);
  }
  timeline(key: string, from: string, to: string): Promise<TimelineEntry[]> {
    return this.reader.timeline(key, from, to);
  }
  changesPage(
    key: string,
    from: string,
    to: string,
    before: Position | null,
    limit: number,
  ): Promise<{ entry: TimelineEntry; position: Position }[]> {
    return this.reader.changesPage(key, from, to, before, limit);
  }
  poolAt(key: string, at: string): Promise<PoolDetail | null> {
    return this.reader.poolAt(key, at);
  }
  recordStart(key: string): Promise<string | null> {
    return this.reader.recordStart(key);
  }
  lastCycle(): Promise<{ id: string; at: string } | null> {
    return this.reader.lastCycle();
  }

  // ---- retention and size (./prune)
  /** Drops history before `before`, and pools gone before it whole (then forgotten as written too). */
  prune(before: string, options: PruneOptions = {}): Promise<PruneResult> {
    return this.pruner.prune(before, {
      ...options,
      onDropped: (key) => {
        this.writer.lastWritten.forget(key);
        options.onDropped?.(key);
      },
    });
  }
  freeBytes(): Promise<number | null> {
    return this.pruner.freeBytes();
  }
  shrink(
    keepBytes: number,
    options?: Pick<PruneOptions, 'pause' | 'signal'> & { batchPages?: number },
  ): Promise<number | null> {
    return this.pruner.shrink(keepBytes, options);
  }
  sizeBytes(): Promise<number> {
    return this.pruner.sizeBytes();
  }
  stats(): Promise<StoreStats> {
    return this.pruner.stats();
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
