import 'server-only';
// PostgreSQL driver (pg), used when DATABASE_URL is set: shared by several replicas.

import pg from 'pg';
import type { SqlDb } from './store';

/** `?` placeholders to `$1, $2, …` (none of our SQL has a literal question mark). */
function numbered(sql: string): string {
  let i = 0;
  return sql.replace(/\?/g, () => `$${++i}`);
}

function wrap(client: pg.Pool | pg.PoolClient, inTx: boolean, pool: pg.Pool): SqlDb {
  const api: SqlDb = {
    dialect: 'postgres',
    async all<T>(sql: string, params: unknown[] = []) {
      return (await client.query(numbered(sql), params)).rows as T[];
    },
    async run(sql: string, params: unknown[] = []) {
      return (await client.query(numbered(sql), params)).rowCount ?? 0;
    },
    async tx<T>(fn: (d: SqlDb) => Promise<T>): Promise<T> {
      if (inTx) return fn(api);
      const c = await pool.connect();
      try {
        await c.query('BEGIN');
        const r = await fn(wrap(c, true, pool));
        await c.query('COMMIT');
        return r;
      } catch (e) {
        await c.query('ROLLBACK').catch(() => {});
        throw e;
      } finally {
        c.release();
      }
    },
    async close() {
      if (!inTx) await pool.end();
    },
  };
  return api;
}

export function openPostgres(url: string): SqlDb {
  const pool = new pg.Pool({ connectionString: url, max: 5 });
  pool.on('error', () => {}); // idle-client errors surface on the next query
  return wrap(pool, false, pool);
}

/** Calls `onChange` for every change another replica commits; returns a function that stops listening. */
export async function listenForChanges(
  url: string,
  channel: string,
  onChange: (change: { poolKey: string; at: string; fields: string[] }) => void,
): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  client.on('notification', (n) => {
    if (n.channel !== channel || !n.payload) return;
    try {
      onChange(JSON.parse(n.payload) as { poolKey: string; at: string; fields: string[] });
    } catch {
      // a malformed payload is not ours; ignore it
    }
  });
  await client.query(`LISTEN ${channel}`);
  return async () => {
    await client.end().catch(() => {});
  };
}
