import 'server-only';
// SQLite driver (better-sqlite3, WAL): the default store, a file under ./data.

import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { SqlDb } from './store';

export function openSqlite(file: string): SqlDb {
  if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const db = new Database(file);
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
  let depth = 0;
  const api: SqlDb = {
    dialect: 'sqlite',
    async all<T>(sql: string, params: unknown[] = []) {
      return stmt(sql).all(...params) as T[];
    },
    async run(sql: string, params: unknown[] = []) {
      if (!params.length && /^\s*CREATE/i.test(sql)) {
        db.exec(sql);
        return 0;
      }
      return stmt(sql).run(...params).changes;
    },
    async tx<T>(fn: (d: SqlDb) => Promise<T>): Promise<T> {
      // better-sqlite3 is synchronous: every statement inside runs before the first await resolves elsewhere,
      // but fn is async, so use explicit BEGIN/COMMIT (nested calls join the outer transaction).
      if (depth > 0) return fn(api);
      depth++;
      db.exec('BEGIN IMMEDIATE');
      try {
        const r = await fn(api);
        db.exec('COMMIT');
        return r;
      } catch (e) {
        db.exec('ROLLBACK');
        throw e;
      } finally {
        depth--;
      }
    },
    async close() {
      db.close();
    },
  };
  return api;
}
