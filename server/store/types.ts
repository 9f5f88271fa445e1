// The store's shared types: the SQL driver interface, what a write takes, and what reads, prunes and writes report.

import type { PoolDetail, TimelineEntry } from '@/lib/api-types';
import type { StoreLocation } from './health';

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
}

/**
 * What this store's committed writes did since start (a write rolled back counts nothing): the cost of writing
 * a pool's state, for metrics and benchmarks.
 */
export interface WriteStats {
  /** Pool states written. */
  states: number;
  /** Of those, how: only the rows the writer changed read and written (`changedRows`), or its whole tables
   * read back and compared (`wholeTables`, also every first write). */
  changedRows: number;
  wholeTables: number;
  /** History rows written: keyframes (the whole state) and patches; and their bytes. */
  keyframes: number;
  patches: number;
  historyBytes: number;
  /** Rows of the pools' instance and drift tables read back while writing, and written (inserted, updated, deleted). */
  rowsRead: number;
  rowsWritten: number;
  /** Timeline entries written by collector cycles. */
  transitions: number;
}

export interface PruneOptions {
  /** Rows deleted in one transaction at most (default ./prune's PRUNE_BATCH_ROWS). */
  batchRows?: number;
  /** Awaited after each transaction (default: one turn of the event loop). */
  pause?: () => Promise<void>;
  /** Stops the prune between two transactions (it then rejects with the signal's reason). */
  signal?: AbortSignal;
  /** Told of each deleted (or unwatched) pool dropped whole, once its transaction committed. */
  onDropped?: (poolKey: string) => void;
  /** Told of the rows each transaction deleted, once it committed (a long prune's progress). */
  onDeleted?: (table: 'transitions' | 'history' | 'cycles', rows: number) => void;
}

/** What a prune deleted, by table, in how many transactions; `pools`: deleted pools dropped whole. */
export interface PruneResult {
  transitions: number;
  history: number;
  cycles: number;
  pools: number;
  batches: number;
}

/** A transition's place in a pool's timeline: its instant, then the order it was stored in. */
export interface Position {
  at: string;
  id: number;
}

export interface StoreStats {
  pools: number;
  transitions: number;
  historyRows: number;
}

/** The PostgreSQL NOTIFY channel for stored changes. */
export const CHANGE_CHANNEL = 'poolscope_changes';

export interface StoreOptions {
  /** Patches between keyframes at most (default ./write's MAX_PATCHES_PER_KEYFRAME). */
  maxPatchesPerKeyframe?: number;
  /** How many times a keyframe's bytes the patches after it may weigh (default ./write's PATCH_WEIGHT_PER_KEYFRAME). */
  patchWeightPerKeyframe?: number;
  /** Where the store is, as the messages of a failing store name it (default: its kind, a SQLite file unnamed). */
  location?: StoreLocation;
  /** Told once, with what SQLite said, when the store is first found corrupt (see ./health). */
  onCorrupt?: (error: string) => void;
}

export const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
