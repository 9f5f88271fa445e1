import 'server-only';
// SQLite driver (better-sqlite3, WAL): the default store, a file under ./data.

import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { SqlDb } from './store';

export function openSqlite(file: string): SqlDb {
  if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const db = new Database(file);
  // A new file keeps a map of its pages, so that retention can give the pages that pruning freed back to the file
  // system (incremental vacuum: TimelineStore.shrink). The mode can only be chosen before the first table: a file
  // created without it keeps it off until a VACUUM (see the README's Sizing).
  if (db.pragma('page_count', { simple: true }) === 0) db.pragma('auto_vacuum = INCREMENTAL');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  const cache = new Map<string, Database.Statement>();
  const stmt = (sql: string) => {
    let s = cache.get(sql);
    if (!s) {
      s = db.prepare(sql);
      cache.set(sql, s);
    }
    return s;
  };
  // One transaction at a time on the connection. A transaction's function awaits between statements, so another
  // caller could otherwise start (or, joining it, write inside) a transaction meanwhile: its writes would be
  // rolled back with a transaction that failed, after it was told they were stored. Statements run inside a
  // transaction through the handle its function gets (`inner`); a `tx` there joins the running one.
  let queue: Promise<unknown> = Promise.resolve();
  const api: SqlDb = {
    dialect: 'sqlite',
    async all<T>(sql: string, params: unknown[] = []) {
      return stmt(sql).all(...params) as T[];
    },
    async run(sql: string, params: unknown[] = []) {
      // Stepped to the end, which a prepared statement's run() does not do: schema statements, and pragmas run for
      // their effect (incremental_vacuum gives back one page a step).
      if (!params.length && /^\s*(CREATE|PRAGMA)\b/i.test(sql)) {
        db.exec(sql);
        return 0;
      }
      return stmt(sql).run(...params).changes;
    },
    tx<T>(fn: (d: SqlDb) => Promise<T>): Promise<T> {
      const run = queue.then(async () => {
        db.exec('BEGIN IMMEDIATE');
        try {
          const r = await fn(inner);
          db.exec('COMMIT');
          return r;
        } catch (e) {
          // SQLite rolls a transaction back itself after some errors (a full disk, I/O errors): roll back only what
          // is still open, so that the error reported is the one that failed the transaction.
          if (db.inTransaction) db.exec('ROLLBACK');
          throw e;
        }
      });
      queue = run.catch(() => {});
      return run;
    },
    async close() {
      db.close();
    },
  };
  const inner: SqlDb = { ...api, tx: (fn) => fn(inner) };
  return api;
}
