import 'server-only';
// Opens the configured store: PostgreSQL when DATABASE_URL is set, else SQLite at POOLSCOPE_DB_PATH, checked first
// (./check): a corrupt file stops start-up with a StoreFailingError saying what to do.

import path from 'node:path';
import type { Logger } from 'pino';
import { clearMark, markCorrupt, markPath, quickCheck, readMark, STARTUP_TABLES } from './check';
import { corruptAdvice, faultText, storeFault, StoreFailingError } from './health';
import { openPostgres } from './postgres';
import { openSqlite } from './sqlite';
import { TimelineStore, type SqlDb } from './store';

export { TimelineStore } from './store';
export { StoreFailingError } from './health';

type StoreLog = Pick<Logger, 'info' | 'warn'>;

export async function openStore(opts: {
  databaseUrl?: string;
  sqlitePath: string;
  log?: StoreLog;
}): Promise<TimelineStore> {
  if (!opts.databaseUrl) return openSqliteStore(path.resolve(opts.sqlitePath), opts.log);
  const store = new TimelineStore(openPostgres(opts.databaseUrl), { location: { kind: 'postgres' } });
  await store.migrate();
  return store;
}

/** Why start-up refuses a corrupt SQLite file, and what to do. */
function corruptAtStart(file: string, problem: string): StoreFailingError {
  return new StoreFailingError(
    'corrupt',
    `poolscope's SQLite store ${file} is corrupt (${problem}). ${corruptAdvice(file)}`,
  );
}

async function openSqliteStore(file: string, log?: StoreLog): Promise<TimelineStore> {
  let db: SqlDb;
  try {
    db = openSqlite(file);
  } catch (e) {
    // A damaged header or first page: SQLite refuses the file as it opens it.
    if (storeFault(e) === 'corrupt') throw corruptAtStart(file, faultText(e));
    throw e;
  }
  const mark = readMark(file);
  if (mark)
    log?.warn(
      { file, mark: markPath(file), foundAt: mark.at, error: mark.error },
      'the store was found corrupt while running: checking all of it before starting (this reads the whole file)',
    );
  const t0 = performance.now();
  const problem = await quickCheck(db, mark ? null : STARTUP_TABLES);
  if (problem) {
    await db.close();
    throw corruptAtStart(
      file,
      mark ? `${problem}; found corrupt while running${mark.at ? ` at ${mark.at}` : ''}: ${mark.error}` : problem,
    );
  }
  log?.info(
    { file, checked: mark ? 'all' : STARTUP_TABLES.join(' '), ms: Math.round(performance.now() - t0) },
    'store checked',
  );
  if (mark) clearMark(file);
  const store = new TimelineStore(db, {
    location: { kind: 'sqlite', file },
    // The next start checks the whole file, so that a restart fails clearly too.
    onCorrupt: (error) => {
      try {
        markCorrupt(file, error);
      } catch (e) {
        log?.warn(
          { file, mark: markPath(file), err: (e as Error).message },
          'cannot mark the store as corrupt: the next start checks only the tables it reads whole',
        );
      }
    },
  });
  await store.migrate();
  return store;
}
