import 'server-only';
// Opens the configured store: PostgreSQL when DATABASE_URL is set, else SQLite at POOLSCOPE_DB_PATH.

import { openPostgres } from './postgres';
import { openSqlite } from './sqlite';
import { TimelineStore } from './store';

export { TimelineStore } from './store';

export async function openStore(opts: { databaseUrl?: string; sqlitePath: string }): Promise<TimelineStore> {
  const store = new TimelineStore(opts.databaseUrl ? openPostgres(opts.databaseUrl) : openSqlite(opts.sqlitePath));
  await store.migrate();
  return store;
}
