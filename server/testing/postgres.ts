// Test helper: a throw-away PostgreSQL database on the machine's server (CI starts one on 127.0.0.1:5432),
// or null — with a loud warning saying how to get one — when none is reachable.

import pg from 'pg';

const ADMIN_URL = process.env.POOLSCOPE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(what: string): Promise<TestDatabase | null> {
  const name = `poolscope_test_${process.pid}_${Date.now()}_${Math.random().toString(36).slice(2, 6)}`;
  const c = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await c.connect();
    await c.query(`CREATE DATABASE ${name}`);
  } catch {
    console.warn(
      `[skipped] ${what}: no PostgreSQL at ${ADMIN_URL}. Start one (e.g. pg_ctlcluster 15 main start) or set POOLSCOPE_TEST_DATABASE_URL; .ci/run starts it in CI.`,
    );
    return null;
  } finally {
    await c.end().catch(() => {});
  }
  return {
    url: ADMIN_URL.replace(/\/[^/]*$/, `/${name}`),
    async drop() {
      const d = new pg.Client({ connectionString: ADMIN_URL });
      await d.connect();
      await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await d.end();
    },
  };
}
