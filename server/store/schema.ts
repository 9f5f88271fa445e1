// The store's schema: the tables of a new store, made in one transaction, and the check that an existing store's
// schema is one this build knows. Later changes to the schema go in MIGRATIONS, each applied in its own
// transaction and recorded in `schema_migrations`.

import type { SqlDb } from './types';

/** The schema a new store gets (version 1). */
function tables(d: SqlDb['dialect']): string[] {
  return [
    // A pool's current state (`detail`: the document, without its tables of rows when `rows_apart` = 2, see
    // ./layout), its version (`seq`, and `entries` stored without a new state), where its history's last keyframe
    // is and what the patches since weigh, its rows kept apart per table, and when it left poolscope's view.
    `CREATE TABLE pools (
      pool_key TEXT PRIMARY KEY, context TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,
      first_seen TEXT NOT NULL, last_change TEXT NOT NULL, seq INTEGER NOT NULL, detail TEXT NOT NULL,
      key_seq INTEGER NOT NULL, key_bytes INTEGER NOT NULL, patch_bytes INTEGER NOT NULL,
      rows_apart INTEGER NOT NULL, rows_instances INTEGER NOT NULL, rows_drift INTEGER NOT NULL,
      deleted_at TEXT, entries INTEGER NOT NULL DEFAULT 0)`,
    // The fleet page reads summaries only: a table of their own keeps that read off the pools' large detail rows
    // (SQLite would walk each detail's overflow pages to reach a column stored after it).
    'CREATE TABLE pool_summaries (pool_key TEXT PRIMARY KEY, last_change TEXT NOT NULL, summary TEXT NOT NULL)',
    // A pool's current instance rows and drift items one by one (see StateWriter.writeState).
    'CREATE TABLE pool_rows (pool_key TEXT NOT NULL, tbl TEXT NOT NULL, row_key TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (pool_key, tbl, row_key))',
    // Each state as a history row: a keyframe (`key`) or a patch of the state before (`rows`).
    `CREATE TABLE pool_history (
      pool_key TEXT NOT NULL, seq INTEGER NOT NULL, at TEXT NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL,
      PRIMARY KEY (pool_key, seq))`,
    'CREATE INDEX pool_history_at ON pool_history (pool_key, at)',
    // Where pruning cuts a pool's history and where an as-of read starts, without walking its patches.
    "CREATE INDEX pool_history_keys ON pool_history (pool_key, at, seq) WHERE kind = 'key'",
    `CREATE TABLE transitions (
      id ${d === 'postgres' ? 'BIGSERIAL PRIMARY KEY' : 'INTEGER PRIMARY KEY AUTOINCREMENT'},
      pool_key TEXT NOT NULL, at TEXT NOT NULL, field TEXT NOT NULL, from_value TEXT, to_value TEXT, detail TEXT)`,
    'CREATE INDEX transitions_pool_at ON transitions (pool_key, at)',
    'CREATE TABLE cycles (id TEXT PRIMARY KEY, at TEXT NOT NULL, pools INTEGER NOT NULL, transitions INTEGER NOT NULL)',
    // The last cycle (read at every readiness probe, metrics scrape and fleet read) and the cycles to prune.
    'CREATE INDEX cycles_at ON cycles (at, id)',
    // When the collector last read each pool's scale set from Azure: a read that changes nothing stores no state,
    // so a state's time does not say how fresh its Azure figures are.
    'CREATE TABLE azure_reads (pool_key TEXT PRIMARY KEY, read_at TEXT NOT NULL)',
  ];
}

/** The schema's version: 1, the tables above, plus each of MIGRATIONS. */
const MIGRATIONS: { version: number; up: (d: SqlDb['dialect']) => string[] }[] = [];
const VERSIONS = [1, ...MIGRATIONS.map((m) => m.version)];

/** Every table the schema has (what the store's size counts on PostgreSQL). */
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

/**
 * Makes a new store's tables, or brings an existing store's schema up to date (each pending migration in its own
 * transaction); returns the versions applied. Refuses a store whose schema has a version this build does not know
 * (a later poolscope's, or a pre-release's): reading it would misread what it holds.
 */
export async function migrate(db: SqlDb): Promise<number[]> {
  await db.run('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
  const done = (await db.all<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).map((r) =>
    Number(r.version),
  );
  const unknown = done.filter((v) => !VERSIONS.includes(v));
  if (unknown.length)
    throw new Error(
      `its schema has version ${unknown.join(', ')}, which this poolscope does not know (it knows ${VERSIONS.join(', ')}): ` +
        'another build made this store. Run that build, or point poolscope at a new store.',
    );
  const steps = [{ version: 1, up: tables }, ...MIGRATIONS].filter((m) => !done.includes(m.version));
  for (const m of steps) {
    await db.tx(async (t) => {
      for (const stmt of m.up(db.dialect)) await t.run(stmt);
      await t.run('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)', [
        m.version,
        new Date().toISOString(),
      ]);
    });
  }
  return steps.map((m) => m.version);
}
