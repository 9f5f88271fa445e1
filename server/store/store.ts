import 'server-only';
// The timeline store: transitions (one row per changed field) and each pool's state history as keyframes plus
// patches, so a pool can be shown as it was at any instant without storing repeated snapshots. One
// implementation over a tiny SQL interface, with SQLite (default) and PostgreSQL drivers.

import fjp from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import {
  applyHistory,
  diffChangedRows,
  diffHistory,
  diffStoredRows,
  type HistoryPatch,
  type RowChange,
  type RowsText,
} from './history-patch';
import {
  completeStored,
  deflateDoc,
  deflateIfShorter,
  inflateDoc,
  leavesOut,
  parseStored,
  ROW_TABLES,
  splitStored,
  storedState,
  storedText,
  unpackDetail,
  type RowTable,
  type StoredRows,
  type StoredState,
} from './pack';
import { goneSince, type PoolDetail, type PoolSummary, type TimelineEntry } from '@/lib/api-types';
import { inRowOrder, TABLE_ORDER } from '@/lib/row-order';
import { StoreFaults, type StoreLocation, type StoreReadHealth } from './health';

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
  /**
   * The keys of the rows stored as of `rowsAsOf`, per table, when the writer knows them (the collector's shape of
   * the state it wrote last): the store then counts the stored rows instead of reading every key.
   */
  rowKeysAsOf?: Record<RowTable, { readonly size: number; has(key: string): boolean; keys(): Iterable<string> }>;
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

const noWrites = (): WriteStats => ({
  states: 0,
  changedRows: 0,
  wholeTables: 0,
  keyframes: 0,
  patches: 0,
  historyBytes: 0,
  rowsRead: 0,
  rowsWritten: 0,
  transitions: 0,
});

/** Rows a prune deletes in one transaction at most (a few milliseconds of the event loop's time each). */
const PRUNE_BATCH_ROWS = 1000;

/** SQLite: free pages given back to the file system in one transaction at most when the store shrinks (4 MB of 4 KB pages: ~30 ms). */
const SHRINK_BATCH_PAGES = 1024;

export interface PruneOptions {
  /** Rows deleted in one transaction at most (default {@link PRUNE_BATCH_ROWS}). */
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

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A transition's place in a pool's timeline: its instant, then the order it was stored in. */
export interface Position {
  at: string;
  id: number;
}

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

export interface StoreStats {
  pools: number;
  transitions: number;
  historyRows: number;
}

/** The PostgreSQL NOTIFY channel for stored changes. */
export const CHANGE_CHANNEL = 'poolscope_changes';

/** PostgreSQL refuses a NOTIFY payload of 8,000 bytes or more, and with it the transaction that sends it. */
const NOTICE_MAX_BYTES = 7_000;

/**
 * A change notice's payload: the pool, the instant and the fields that changed, as many of the fields as fit
 * under NOTICE_MAX_BYTES (a field can name an Event's reason, which a cluster chooses). A listener needs the
 * pool; the fields only say what changed.
 */
function changeNotice(poolKey: string, at: string, entries: readonly { field: string }[]): string {
  const fields: string[] = [];
  let bytes = Buffer.byteLength(JSON.stringify({ poolKey, at, fields }));
  for (const f of new Set(entries.map((e) => e.field))) {
    bytes += Buffer.byteLength(JSON.stringify(f)) + 1;
    if (bytes > NOTICE_MAX_BYTES) break;
    fields.push(f);
  }
  return JSON.stringify({ poolKey, at, fields });
}

/**
 * A new keyframe once the patches since the last one weigh this many times as much as it does, or after
 * {@link MAX_PATCHES_PER_KEYFRAME} patches. History then costs its patches and a fourth. (A keyframe each time
 * the patches weighed as much as it would cost twice its patches, and a keyframe written — the whole state read,
 * serialised and deflated — four times as often.) An as-of read replays at most that many patches.
 */
export const PATCH_WEIGHT_PER_KEYFRAME = 4;

/** Patches between keyframes at most: bounds the replay of an as-of read. */
const MAX_PATCHES_PER_KEYFRAME = 256;

export interface StoreOptions {
  /** Patches between keyframes at most (default {@link MAX_PATCHES_PER_KEYFRAME}). */
  maxPatchesPerKeyframe?: number;
  /** How many times a keyframe's bytes the patches after it may weigh (default {@link PATCH_WEIGHT_PER_KEYFRAME}). */
  patchWeightPerKeyframe?: number;
  /** Where the store is, as the messages of a failing store name it (default: its kind, a SQLite file unnamed). */
  location?: StoreLocation;
  /** Told once, with what SQLite said, when the store is first found corrupt (see ./health). */
  onCorrupt?: (error: string) => void;
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
  {
    // A pool's current instance rows one by one (see writeState); pools stored before keep their whole state in
    // `pools.detail` (rows_apart = 0) until their next write.
    version: 4,
    up: () => [
      'CREATE TABLE IF NOT EXISTS pool_rows (pool_key TEXT NOT NULL, row_key TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (pool_key, row_key))',
      'ALTER TABLE pools ADD COLUMN rows_apart INTEGER NOT NULL DEFAULT 0',
    ],
  },
  {
    // Drift items kept one by one too: each row names its table. Rows kept before are instance rows; their
    // pools (rows_apart = 1) keep their drift items in `pools.detail` until their next write.
    version: 5,
    up: () => [
      'CREATE TABLE pool_table_rows (pool_key TEXT NOT NULL, tbl TEXT NOT NULL, row_key TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (pool_key, tbl, row_key))',
      "INSERT INTO pool_table_rows (pool_key, tbl, row_key, body) SELECT pool_key, 'instances', row_key, body FROM pool_rows",
      'DROP TABLE pool_rows',
      'ALTER TABLE pool_table_rows RENAME TO pool_rows',
    ],
  },
  {
    // How many rows each table of a pool's state kept apart has, written with them: a write of the changed rows
    // checks the writer's keys against these instead of counting the pool's rows in the index at every write.
    // Pools stored before (-1) are counted until their next write.
    version: 6,
    up: () => [
      'ALTER TABLE pools ADD COLUMN rows_instances INTEGER NOT NULL DEFAULT -1',
      'ALTER TABLE pools ADD COLUMN rows_drift INTEGER NOT NULL DEFAULT -1',
    ],
  },
  {
    // Retention and the reads that were scans: a pool's keyframes by time (where pruning cuts a pool's history,
    // and where an as-of read starts), without walking its patches; and the cycles by time (the last cycle, read at
    // every readiness probe, metrics scrape and fleet read; and the cycles to prune).
    version: 7,
    up: () => [
      "CREATE INDEX IF NOT EXISTS pool_history_keys ON pool_history (pool_key, at, seq) WHERE kind = 'key'",
      'CREATE INDEX IF NOT EXISTS cycles_at ON cycles (at, id)',
    ],
  },
  {
    // When a pool left poolscope's view (its summary's deletedAt, or unwatchedSince): retention drops the whole pool
    // once that is older than the cutoff.
    version: 8,
    up: () => ['ALTER TABLE pools ADD COLUMN deleted_at TEXT'],
  },
  {
    // When the collector last read each pool's scale set from Azure: a row a pool, overwritten by each read (a read
    // that changes nothing stores no state, so a state's time does not say how fresh its Azure figures are).
    version: 9,
    up: () => ['CREATE TABLE IF NOT EXISTS azure_reads (pool_key TEXT PRIMARY KEY, read_at TEXT NOT NULL)'],
  },
  {
    // Timeline entries stored for a pool without a new state (Events, resync markers) counted on its row, so that
    // a pool's version (seq, entries) changes with everything its answers show.
    version: 10,
    up: () => ['ALTER TABLE pools ADD COLUMN entries INTEGER NOT NULL DEFAULT 0'],
  },
];

/** Every table the migrations create (what the store's size counts on PostgreSQL). */
const STORE_TABLES = [
  'schema_migrations',
  'pools',
  'pool_history',
  'transitions',
  'cycles',
  'pool_summaries',
  'pool_rows',
  'azure_reads',
] as const;

/** The column of `pools` that counts a table's rows in `pool_rows` (-1: not counted yet). */
const ROW_COUNT_COLUMN = { instances: 'rows_instances', drift: 'rows_drift' } as const satisfies Record<
  RowTable,
  string
>;

/**
 * Where a pool's current state is (`pools.rows_apart`): all in `pools.detail` (stores older than version 4, or a
 * table that could not be kept apart); its instance rows in `pool_rows` and the rest in `pools.detail` (written by
 * version 4); or every table of rows in `pool_rows` (ROW_TABLES) and the rest in `pools.detail`.
 */
const WHOLE = 0;
const INSTANCES_APART = 1;
const TABLES_APART = 2;

/** The tables a layout keeps in `pool_rows`. */
function tablesApart(layout: number): readonly RowTable[] {
  return layout === TABLES_APART ? ROW_TABLES : layout === INSTANCES_APART ? ['instances'] : [];
}

/** Whether reading a state kept apart gives its tables back as they are (each in its table's order, keys once). */
function keptApart(state: StoredState): boolean {
  return ROW_TABLES.every((t) => inRowOrder(state.tables[t].keys, TABLE_ORDER[t]));
}

/** How many rows each table of a state kept apart puts in `pool_rows` (none for a state stored whole). */
function rowCounts(apart: StoredState | null): Record<RowTable, number> {
  return { instances: apart?.tables.instances.keys.length ?? 0, drift: apart?.tables.drift.keys.length ?? 0 };
}

/** A row of `pool_rows`. */
interface TableRow {
  tbl: string;
  row_key: string;
  body: string;
}

/** A pool's row in `pools`, as the write path reads it. */
interface PoolRow {
  seq: number;
  detail: string;
  last_change: string;
  key_seq: number;
  key_bytes: number;
  patch_bytes: number;
  rows_apart: number;
  rows_instances: number;
  rows_drift: number;
}

/**
 * A state kept apart, split by row: its document (without the tables `pool_rows` holds) and those tables' rows,
 * each in the table's order.
 */
function apartRows(restText: string, layout: number, rows: readonly TableRow[]): StoredRows {
  const split = splitStored(restText);
  for (const t of tablesApart(layout)) {
    const order = TABLE_ORDER[t];
    const mine = rows.filter((r) => r.tbl === t).sort((a, b) => order(a.row_key, b.row_key));
    split.tables[t] = { keys: mine.map((r) => r.row_key), rows: mine.map((r) => r.body) };
  }
  return split;
}

/**
 * History row kinds: `key` (the whole state, deflated: ./pack), `rows` (a {@link HistoryPatch}: keyed tables
 * by key; deflated when longer than 512 bytes) and `patch` (a JSON Patch, as written before version 3; read).
 */
type HistoryKind = 'key' | 'rows' | 'patch';

export class TimelineStore {
  private readonly maxPatches: number;
  private readonly patchWeight: number;
  private written = noWrites();
  /** Every query goes through `faults` (./health): a corrupt or unreadable store is remembered and reported. */
  private readonly db: SqlDb;
  private readonly faults: StoreFaults;

  constructor(db: SqlDb, options: StoreOptions = {}) {
    this.faults = new StoreFaults(options.location ?? { kind: db.dialect }, options.onCorrupt);
    this.db = this.faults.watch(db);
    this.maxPatches = options.maxPatchesPerKeyframe ?? MAX_PATCHES_PER_KEYFRAME;
    this.patchWeight = options.patchWeightPerKeyframe ?? PATCH_WEIGHT_PER_KEYFRAME;
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
    return { ...this.written };
  }

  /** Applies pending migrations, each in its own transaction. */
  async migrate(): Promise<number[]> {
    await this.db.run(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)',
    );
    const done = new Set(
      (await this.db.all<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => Number(r.version)),
    );
    const applied: number[] = [];
    for (const m of MIGRATIONS) {
      if (done.has(m.version)) continue;
      await this.db.tx(async (t) => {
        for (const stmt of m.up(this.db.dialect)) await t.run(stmt);
        await t.run('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)', [
          m.version,
          new Date().toISOString(),
        ]);
      });
      applied.push(m.version);
    }
    return applied;
  }

  /**
   * Writes one collector cycle atomically: each changed pool's new state (as a keyframe or a patch) and its
   * transitions, and the cycle marker. A crash leaves the previous cycle's consistent state. `writes` is taken one
   * at a time, each written before the next is asked for: a writer can analyse each pool as the store asks for it,
   * so a pool's analysis is garbage once written instead of living until the cycle's last pool is analysed.
   */
  async writeCycle(cycle: { id: string; at: string }, writes: Iterable<PoolWrite>): Promise<void> {
    // Counted as the cycle goes, kept only if it commits (cycles are written one at a time: the collector's never
    // overlap).
    const before = { ...this.written };
    try {
      await this.writeCycleTx(cycle, writes);
    } catch (e) {
      this.written = before;
      throw e;
    }
  }

  private async writeCycleTx(cycle: { id: string; at: string }, writes: Iterable<PoolWrite>): Promise<void> {
    await this.db.tx(async (t) => {
      let transitions = 0;
      let pools = 0;
      const notices: string[] = [];
      for (const w of writes) {
        pools++;
        for (const e of w.transitions) {
          await t.run(
            'INSERT INTO transitions (pool_key, at, field, from_value, to_value, detail) VALUES (?, ?, ?, ?, ?, ?)',
            [e.poolKey, e.at, e.field, e.from, e.to, e.detail ?? null],
          );
          transitions++;
        }
        if (!w.detailUnchanged) await this.writeState(t, cycle.at, w);
        else if (w.transitions.length > 0) await this.countEntries(t, w.detail.summary.key);
        if (this.db.dialect === 'postgres') notices.push(changeNotice(w.detail.summary.key, cycle.at, w.transitions));
      }
      this.written.transitions += transitions;
      await t.run('INSERT INTO cycles (id, at, pools, transitions) VALUES (?, ?, ?, ?)', [
        cycle.id,
        cycle.at,
        pools,
        transitions,
      ]);
      // Other replicas reading the same PostgreSQL learn of the change at commit (LISTEN/NOTIFY).
      for (const payload of notices) await t.all('SELECT pg_notify(?, ?)', [CHANGE_CHANNEL, payload]);
    });
  }

  /**
   * A pool's new state: its history row (a keyframe, or a patch of the previous state) and its current state.
   * The current state is kept apart: the document without its tables of rows in `pools.detail`, each instance
   * row and drift item in `pool_rows` (`rows_apart` = 2). A write whose writer saw the stored state (`rowsAsOf`)
   * and left out most rows then reads and writes only the rows it changed, added or removed; any other write
   * serialises and diffs the whole state. A table the store could not give back in the same order (rows not in
   * the table's order, a key twice) makes the state stored whole in `pools.detail`, as stores older than
   * version 4 keep it (`rows_apart` = 0).
   */
  private async writeState(t: SqlDb, at: string, w: PoolWrite): Promise<void> {
    const d = w.detail;
    const key = d.summary.key;
    const [prev] = await t.all<PoolRow>(
      'SELECT seq, detail, last_change, key_seq, key_bytes, patch_bytes, rows_apart, rows_instances, rows_drift FROM pools WHERE pool_key = ?',
      [key],
    );
    const seq = prev ? Number(prev.seq) + 1 : 1;
    this.written.states++;
    // Rows left out are as the stored state has them only if it is the one their writer saw.
    const rowsKnown = !!prev && w.rowsAsOf === prev.last_change;
    let state = w.stored ?? storedState(d);
    if (prev && Number(prev.rows_apart) === TABLES_APART && rowsKnown && keptApart(state)) {
      let rows = 0;
      let written = 0;
      for (const tbl of ROW_TABLES) {
        for (const r of state.tables[tbl].rows) {
          rows++;
          if (r !== null) written++;
        }
      }
      // A few rows: read those alone (one by one); many: the whole tables at once.
      if (written <= 16 || written * 4 <= rows) {
        if (await this.writeChangedRows(t, at, key, prev, seq, state, w.rowKeysAsOf)) {
          this.written.changedRows++;
          return;
        }
      }
    }
    this.written.wholeTables++;
    let prevRows: StoredRows | null = null;
    const previous = async (p: PoolRow) => (prevRows ??= await this.storedRows(t, key, p));
    if (leavesOut(state))
      state = (prev && rowsKnown ? completeStored(state, await previous(prev)) : null) ?? storedState(d);
    let body: { kind: HistoryKind; text: string } | null = null;
    if (prev && this.patchAllowed(prev, seq)) {
      // Rows compare as text: only those that changed are parsed (a write usually changes a few).
      const patch = diffStoredRows(await previous(prev), {
        rest: state.rest,
        tables: state.tables as Record<RowTable, RowsText>,
      });
      body = patch && this.patchBody(prev, patch);
    }
    body ??= { kind: 'key', text: deflateDoc(storedText(state)) };
    // Kept apart when reading can give the tables back as they are.
    const apart = keptApart(state);
    await this.saveState(
      t,
      at,
      key,
      d,
      prev,
      seq,
      body,
      apart ? state.restText : storedText(state),
      apart ? TABLES_APART : WHOLE,
      state.rest.summary,
      rowCounts(apart ? state : null),
    );
    const layout = prev ? Number(prev.rows_apart) : WHOLE;
    const had = tablesApart(layout);
    if (!apart) {
      if (had.length) this.written.rowsWritten += await t.run('DELETE FROM pool_rows WHERE pool_key = ?', [key]);
      return;
    }
    // Stored whole before (or new): no row of it can be apart, and none must stand in the way.
    if (prev && had.length < ROW_TABLES.length) {
      if (had.length === 0) this.written.rowsWritten += await t.run('DELETE FROM pool_rows WHERE pool_key = ?', [key]);
      else
        for (const tbl of ROW_TABLES)
          if (!had.includes(tbl))
            this.written.rowsWritten += await t.run('DELETE FROM pool_rows WHERE pool_key = ? AND tbl = ?', [key, tbl]);
    }
    // The rows kept apart before, compared as text: only those that differ are written.
    const before = had.length ? await previous(prev as PoolRow) : null;
    for (const tbl of ROW_TABLES) {
      const was = new Map<string, string>();
      const old = before && had.includes(tbl) ? before.tables[tbl] : null;
      if (old) for (let i = 0; i < old.keys.length; i++) was.set(old.keys[i] as string, old.rows[i] as string);
      const mine = state.tables[tbl];
      const written: Pick<RowChange, 'key' | 'text' | 'was'>[] = [];
      for (let i = 0; i < mine.keys.length; i++) {
        const k = mine.keys[i] as string;
        written.push({ key: k, text: mine.rows[i] as string, was: was.get(k) });
        was.delete(k);
      }
      await this.writeRows(t, key, tbl, written, [...was.keys()]);
    }
  }

  /**
   * The write of a state kept apart whose writer left out the rows it did not change: takes the keys of the stored
   * rows from the writer (when it names them and the stored rows are as many) or reads them, reads the previous
   * text of the rows written, and writes only those. False (nothing done) when the stored rows are not what the
   * writer saw after all (a row left out that is not there).
   */
  private async writeChangedRows(
    t: SqlDb,
    at: string,
    key: string,
    prev: PoolRow,
    seq: number,
    state: StoredState,
    known?: PoolWrite['rowKeysAsOf'],
  ): Promise<boolean> {
    const stored = (await this.knownRowKeys(t, key, prev, known)) ?? (await this.storedRowKeys(t, key));
    const changes: { tbl: RowTable; written: RowChange[]; removed: string[] }[] = [];
    for (const tbl of ROW_TABLES) {
      const { keys, rows } = state.tables[tbl];
      const there = stored[tbl];
      const written: RowChange[] = [];
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i] as string;
        const text = rows[i];
        if (text === null || text === undefined) {
          if (!there.has(k)) return false;
          continue;
        }
        const was = there.has(k)
          ? (
              await t.all<{ body: string }>(
                'SELECT body FROM pool_rows WHERE pool_key = ? AND tbl = ? AND row_key = ?',
                [key, tbl, k],
              )
            )[0]?.body
          : undefined;
        if (was !== undefined) this.written.rowsRead++;
        written.push({ key: k, text, was, after: i === 0 ? null : (keys[i - 1] as string) });
      }
      const kept = new Set(keys);
      const removed: string[] = [];
      for (const k of there.keys()) if (!kept.has(k)) removed.push(k);
      changes.push({ tbl, written, removed });
    }
    let body: { kind: HistoryKind; text: string } | null = null;
    if (this.patchAllowed(prev, seq)) {
      const patch = diffHistory(JSON.parse(prev.detail) as object, state.rest);
      if (patch) {
        for (const c of changes) {
          const rows = diffChangedRows(c.written, c.removed);
          if (rows.del || rows.set || rows.edit || rows.add) patch.tables[c.tbl] = rows;
        }
        body = this.patchBody(prev, patch);
      }
    }
    // A keyframe says the whole state: the rows left out are read.
    if (!body) {
      const whole = completeStored(state, await this.storedRows(t, key, prev));
      if (!whole) return false;
      body = { kind: 'key', text: deflateDoc(storedText(whole)) };
    }
    await this.saveState(
      t,
      at,
      key,
      null,
      prev,
      seq,
      body,
      state.restText,
      TABLES_APART,
      state.rest.summary,
      rowCounts(state),
    );
    for (const c of changes) await this.writeRows(t, key, c.tbl, c.written, c.removed);
    return true;
  }

  /** The keys of a pool's rows kept apart, per table, as stored. */
  private async storedRowKeys(t: SqlDb, key: string): Promise<Record<RowTable, Set<string>>> {
    const stored = { instances: new Set<string>(), drift: new Set<string>() } satisfies Record<RowTable, Set<string>>;
    for (const r of await t.all<{ tbl: string; row_key: string }>(
      'SELECT tbl, row_key FROM pool_rows WHERE pool_key = ?',
      [key],
    )) {
      stored[r.tbl as RowTable]?.add(r.row_key);
      this.written.rowsRead++;
    }
    return stored;
  }

  /**
   * The row keys the writer says are stored, when the stored rows are as many per table (else null: read them):
   * as the pool's row counts them (written with the rows), or, for a pool last written before those were, as
   * the index counts them. Reading the keys made a JavaScript object of each of a pool's 160-odd rows; counting
   * them in the index read a few pages at every write (~3% of the 100k collector's main thread).
   */
  private async knownRowKeys(
    t: SqlDb,
    key: string,
    prev: PoolRow,
    known: PoolWrite['rowKeysAsOf'],
  ): Promise<PoolWrite['rowKeysAsOf'] | null> {
    if (!known) return null;
    const counted = (tbl: RowTable) => Number(prev[ROW_COUNT_COLUMN[tbl]]);
    let count = counted;
    if (!ROW_TABLES.every((tbl) => counted(tbl) >= 0)) {
      const inIndex = new Map(
        (
          await t.all<{ tbl: string; n: number }>(
            'SELECT tbl, COUNT(*) AS n FROM pool_rows WHERE pool_key = ? GROUP BY tbl',
            [key],
          )
        ).map((r) => [r.tbl, Number(r.n)]),
      );
      count = (tbl) => inIndex.get(tbl) ?? 0;
    }
    return ROW_TABLES.every((tbl) => count(tbl) === known[tbl].size) ? known : null;
  }

  /** Writes a pool's rows kept apart that differ from what they were (new, changed), and deletes those removed. */
  private async writeRows(
    t: SqlDb,
    key: string,
    tbl: RowTable,
    written: readonly Pick<RowChange, 'key' | 'text' | 'was'>[],
    removed: readonly string[],
  ): Promise<void> {
    for (const r of written) {
      if (r.was === r.text) continue;
      this.written.rowsWritten++;
      if (r.was === undefined)
        await t.run('INSERT INTO pool_rows (pool_key, tbl, row_key, body) VALUES (?, ?, ?, ?)', [
          key,
          tbl,
          r.key,
          r.text,
        ]);
      else
        await t.run('UPDATE pool_rows SET body = ? WHERE pool_key = ? AND tbl = ? AND row_key = ?', [
          r.text,
          key,
          tbl,
          r.key,
        ]);
    }
    for (const k of removed)
      await t.run('DELETE FROM pool_rows WHERE pool_key = ? AND tbl = ? AND row_key = ?', [key, tbl, k]);
    this.written.rowsWritten += removed.length;
  }

  /** Whether the next history row may be a patch (else a keyframe is due). */
  private patchAllowed(prev: PoolRow, seq: number): boolean {
    return Number(prev.key_seq) > 0 && seq - Number(prev.key_seq) <= this.maxPatches;
  }

  /** A patch's history row, or null when a keyframe should say it (the patches since the last would weigh too much). */
  private patchBody(prev: PoolRow, patch: HistoryPatch): { kind: HistoryKind; text: string } | null {
    const text = deflateIfShorter(JSON.stringify(patch));
    return Number(prev.patch_bytes) + text.length < Number(prev.key_bytes) * this.patchWeight
      ? { kind: 'rows', text }
      : null;
  }

  /** The history row, and the pool's row and summary (`detail`: the state, or without its tables when apart). */
  private async saveState(
    t: SqlDb,
    at: string,
    key: string,
    d: PoolDetail | null,
    prev: PoolRow | undefined,
    seq: number,
    body: { kind: HistoryKind; text: string },
    detail: string,
    layout: number,
    summary: PoolSummary,
    counts: Record<RowTable, number>,
  ): Promise<void> {
    const isKey = body.kind === 'key';
    const keySeq = isKey ? seq : Number(prev?.key_seq);
    const keyBytes = isKey ? body.text.length : Number(prev?.key_bytes);
    const patchBytes = isKey ? 0 : Number(prev?.patch_bytes) + body.text.length;
    if (isKey) this.written.keyframes++;
    else this.written.patches++;
    this.written.historyBytes += body.text.length;
    await t.run('INSERT INTO pool_history (pool_key, seq, at, kind, body) VALUES (?, ?, ?, ?, ?)', [
      key,
      seq,
      at,
      body.kind,
      body.text,
    ]);
    if (prev) {
      await t.run(
        'UPDATE pools SET seq = ?, detail = ?, last_change = ?, key_seq = ?, key_bytes = ?, patch_bytes = ?, rows_apart = ?, rows_instances = ?, rows_drift = ?, deleted_at = ? WHERE pool_key = ?',
        [
          seq,
          detail,
          at,
          keySeq,
          keyBytes,
          patchBytes,
          layout,
          counts.instances,
          counts.drift,
          goneSince(summary) ?? null,
          key,
        ],
      );
      await t.run('UPDATE pool_summaries SET summary = ?, last_change = ? WHERE pool_key = ?', [
        JSON.stringify(summary),
        at,
        key,
      ]);
    } else {
      const ref = (d as PoolDetail).summary.ref;
      await t.run(
        'INSERT INTO pools (pool_key, context, namespace, name, first_seen, last_change, seq, detail, key_seq, key_bytes, patch_bytes, rows_apart, rows_instances, rows_drift, deleted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [
          key,
          ref.context,
          ref.namespace,
          ref.name,
          at,
          at,
          seq,
          detail,
          keySeq,
          keyBytes,
          patchBytes,
          layout,
          counts.instances,
          counts.drift,
          goneSince(summary) ?? null,
        ],
      );
      await t.run('INSERT INTO pool_summaries (pool_key, last_change, summary) VALUES (?, ?, ?)', [
        key,
        at,
        JSON.stringify(summary),
      ]);
    }
  }

  /** A pool's stored current state split by row (whatever its layout). */
  private async storedRows(db: SqlDb, key: string, row: Pick<PoolRow, 'detail' | 'rows_apart'>): Promise<StoredRows> {
    const layout = Number(row.rows_apart);
    if (layout === WHOLE) return splitStored(inflateDoc(row.detail));
    const rows = await db.all<TableRow>('SELECT tbl, row_key, body FROM pool_rows WHERE pool_key = ?', [key]);
    this.written.rowsRead += rows.length;
    return apartRows(row.detail, layout, rows);
  }

  /**
   * Records timeline entries outside a collector cycle (a resync marker): the pool's state history is not
   * touched. Other replicas hear of it through PostgreSQL as of any stored change.
   */
  async appendEntries(entries: TimelineEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.db.tx(async (t) => {
      for (const e of entries) {
        await t.run(
          'INSERT INTO transitions (pool_key, at, field, from_value, to_value, detail) VALUES (?, ?, ?, ?, ?, ?)',
          [e.poolKey, e.at, e.field, e.from, e.to, e.detail ?? null],
        );
      }
      for (const key of new Set(entries.map((e) => e.poolKey))) await this.countEntries(t, key);
      if (this.db.dialect === 'postgres') {
        for (const key of new Set(entries.map((e) => e.poolKey))) {
          const mine = entries.filter((e) => e.poolKey === key);
          await t.all('SELECT pg_notify(?, ?)', [
            CHANGE_CHANNEL,
            changeNotice(key, (mine[mine.length - 1] as TimelineEntry).at, mine),
          ]);
        }
      }
    });
  }

  private revive(
    row: { detail: string; last_change: string; rows_apart: number },
    at: string,
    rows: readonly TableRow[] | undefined,
  ): PoolDetail {
    const layout = Number(row.rows_apart);
    let doc: Record<string, unknown>;
    if (layout === WHOLE) doc = parseStored(inflateDoc(row.detail));
    else {
      const split = apartRows(row.detail, layout, rows ?? []);
      doc = split.rest;
      for (const t of ROW_TABLES) doc[t] = split.tables[t].rows.map((r) => JSON.parse(r) as unknown);
    }
    const d = unpackDetail(doc as unknown as PoolDetail);
    return { ...d, summary: { ...d.summary, lastChange: row.last_change }, at };
  }

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
    return pools.map((p) => this.revive(p, now, rows.get(p.pool_key)));
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
    return this.revive(row, now, rows);
  }

  /**
   * Records when each pool's scale set was last read from Azure (pool key, RFC 3339), in one transaction. A time
   * earlier than the one stored leaves it as it is.
   */
  async recordAzureReads(reads: Iterable<readonly [key: string, at: string]>): Promise<void> {
    await this.db.tx(async (t) => {
      for (const [key, at] of reads) {
        await t.run(
          'INSERT INTO azure_reads (pool_key, read_at) VALUES (?, ?) ON CONFLICT (pool_key) DO UPDATE SET read_at = excluded.read_at WHERE azure_reads.read_at < excluded.read_at',
          [key, at],
        );
      }
    });
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

  /** Counts timeline entries stored for a pool without a new state (see poolVersion). */
  private async countEntries(t: SqlDb, key: string): Promise<void> {
    await t.run('UPDATE pools SET entries = entries + 1 WHERE pool_key = ?', [key]);
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
      else doc = fjp.applyPatch(doc, JSON.parse(r.body) as Operation[], false, true).newDocument;
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

  close(): Promise<void> {
    return this.db.close();
  }
}
