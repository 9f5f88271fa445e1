// The store's schema: its migrations, applied in order, each in its own transaction, and the tables they make.

import type { SqlDb } from './types';

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
export const STORE_TABLES = [
  'schema_migrations',
  'pools',
  'pool_history',
  'transitions',
  'cycles',
  'pool_summaries',
  'pool_rows',
  'azure_reads',
] as const;

/** Applies pending migrations, each in its own transaction. */
export async function migrate(db: SqlDb): Promise<number[]> {
  await db.run('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
  const done = new Set(
    (await db.all<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => Number(r.version)),
  );
  const applied: number[] = [];
  for (const m of MIGRATIONS) {
    if (done.has(m.version)) continue;
    await db.tx(async (t) => {
      for (const stmt of m.up(db.dialect)) await t.run(stmt);
      await t.run('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)', [
        m.version,
        new Date().toISOString(),
      ]);
    });
    applied.push(m.version);
  }
  return applied;
}
