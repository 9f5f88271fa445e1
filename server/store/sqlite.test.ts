// The SQLite driver's transactions: one at a time on the connection, and the error that failed one is the one
// reported (SQLite rolls some back itself, e.g. when the disk is full).

import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSqlite } from './sqlite';

const fresh = () => openSqlite(path.join(mkdtempSync(path.join(os.tmpdir(), 'poolscope-sqlite-')), 'test.db'));

describe('SQLite driver', () => {
  it('runs a transaction started while another one awaits after it, not inside it', async () => {
    const db = fresh();
    await db.run('CREATE TABLE t (x INTEGER)');
    let outsider: Promise<void> | undefined;
    await expect(
      db.tx(async (t) => {
        await t.run('INSERT INTO t VALUES (1)');
        // Another caller (a resync marker, say) writes while this transaction is between statements.
        outsider = db.tx(async (o) => {
          await o.run('INSERT INTO t VALUES (2)');
        });
        await new Promise((r) => setTimeout(r, 10));
        throw new Error('cycle failed');
      }),
    ).rejects.toThrow('cycle failed');
    await outsider;
    // The failed transaction's row is gone; the other caller's, told it was stored, is there.
    expect(await db.all('SELECT x FROM t')).toEqual([{ x: 2 }]);
    // A transaction inside a transaction's function joins it.
    await db.tx(async (t) => {
      await t.tx(async (n) => {
        await n.run('INSERT INTO t VALUES (3)');
      });
      await t.run('INSERT INTO t VALUES (4)');
    });
    expect(await db.all('SELECT x FROM t ORDER BY x')).toEqual([{ x: 2 }, { x: 3 }, { x: 4 }]);
    await db.close();
  });

  it('reports a full database as such, keeps nothing of the transaction, and writes again once there is room', async () => {
    const db = fresh();
    await db.run('CREATE TABLE t (x TEXT)');
    const [{ page_count: pages } = { page_count: 0 }] = await db.all<{ page_count: number }>('PRAGMA page_count');
    // The database may not grow: as a full volume would have it.
    await db.all(`PRAGMA max_page_count = ${pages}`);
    const fill = (n: number) =>
      db.tx(async (t) => {
        for (let i = 0; i < n; i++) await t.run('INSERT INTO t VALUES (?)', ['x'.repeat(1000)]);
      });
    // SQLite has rolled the transaction back itself: the error is the full disk, not the rollback that follows.
    await expect(fill(50)).rejects.toThrow(/database or disk is full/);
    expect(await db.all('SELECT COUNT(*) AS n FROM t')).toEqual([{ n: 0 }]);
    await db.all('PRAGMA max_page_count = 100000');
    await fill(50);
    expect(await db.all('SELECT COUNT(*) AS n FROM t')).toEqual([{ n: 50 }]);
    await db.close();
  });
});
