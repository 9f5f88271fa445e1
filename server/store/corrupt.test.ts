// A SQLite store corrupted past its header, as a disk fault or a stray write leaves it: start-up refuses it with a
// message naming the file and what to do; corruption met while running makes the store report itself failing
// (503 `store-failing`), refuse writes, and leave the mark that makes the next start check the whole file.

import { existsSync, renameSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { analyzePool } from '@/lib/analyze';
import { buildPool } from '@/lib/fixtures/pool';
import { at, corruptHeader, corruptTables, healthy, seedStore } from '../testing/corrupt-store';
import { markPath } from './check';
import { StoreFailingError, StoreFaults, type StoreReadHealth } from './health';
import { openStore } from './index';
import { openPostgres } from './postgres';
import { openSqlite } from './sqlite';
import { TimelineStore } from './store';

const failing = (health: StoreReadHealth) =>
  health.state === 'failing' ? { fault: health.fault, error: health.error } : health;

describe('a corrupt SQLite store at start-up', () => {
  it('is refused, the message naming the file, what is wrong and what to do', async () => {
    const file = await seedStore();
    expect(corruptTables(file, ['pool_rows'])).toBeGreaterThan(10);
    const opening = openStore({ sqlitePath: file });
    await expect(opening).rejects.toBeInstanceOf(StoreFailingError);
    await expect(opening).rejects.toThrow(
      new RegExp(
        `^poolscope's SQLite store ${file} is corrupt \\(table pool_rows: .+\\)\\. With poolscope stopped, restore ${file} from a backup, or move it away together with ${file}-wal and ${file}-shm \\(poolscope then starts with an empty store\\)\\.$`,
      ),
    );
  });

  it('is refused when its header is overwritten', async () => {
    const file = await seedStore();
    corruptHeader(file);
    await expect(openStore({ sqlitePath: file })).rejects.toThrow(
      `poolscope's SQLite store ${file} is corrupt (SQLITE_NOTADB: file is not a database). With poolscope stopped, restore`,
    );
  });

  it('opens a sound store, and checks only the tables start-up reads whole', async () => {
    const file = await seedStore();
    const store = await openStore({ sqlitePath: file });
    expect(store.health()).toEqual({ state: 'ok' });
    expect(await store.lastCycle()).toEqual({ id: 'c60', at: at(60) });
    await store.close();
    // History is not read at start: a store corrupt there only opens (and fails when that history is read).
    corruptTables(file, ['pool_history']);
    await (await openStore({ sqlitePath: file })).close();
  });
});

describe('a SQLite store found corrupt while running', () => {
  it('reports itself failing, refuses writes, and the next start fails clearly', async () => {
    const file = await seedStore();
    corruptTables(file, ['pool_history']);
    const store = await openStore({ sqlitePath: file });
    expect(store.health()).toEqual({ state: 'ok' });
    // A read of the damaged history: 503 store-failing, the message naming the file and what to do.
    const read = store.poolAt('mgmt-weu/default/busy', at(30));
    await expect(read).rejects.toBeInstanceOf(StoreFailingError);
    await expect(read).rejects.toMatchObject({ status: 503, code: 'store-failing', fault: 'corrupt' });
    const message = `poolscope's SQLite store ${file} is corrupt (SQLITE_CORRUPT: database disk image is malformed): nothing more is recorded, and what cannot be read is not shown. With poolscope stopped, restore ${file} from a backup, or move it away together with ${file}-wal and ${file}-shm (poolscope then starts with an empty store).`;
    await expect(read).rejects.toThrow(message);
    expect(failing(store.health())).toEqual({ fault: 'corrupt', error: message });
    // What still reads is served; the store stays failing (corruption does not heal).
    expect(await store.lastCycle()).toEqual({ id: 'c60', at: at(60) });
    expect(store.health().state).toBe('failing');
    // Writes are refused before they reach the file: the cycle is not stored.
    const d = analyzePool(
      buildPool({ context: 'mgmt-weu', cluster: 'wl', name: 'pool0', replicas: 41, instances: healthy(41) }).input,
      { now: at(61) },
    );
    await expect(store.writeCycle({ id: 'c61', at: at(61) }, [{ detail: d, transitions: [] }])).rejects.toThrow(
      message,
    );
    expect(await store.lastCycle()).toEqual({ id: 'c60', at: at(60) });
    await store.close();
    // The mark makes the next start check the whole file, and refuse it.
    expect(existsSync(markPath(file))).toBe(true);
    await expect(openStore({ sqlitePath: file })).rejects.toThrow(
      new RegExp(
        `^poolscope's SQLite store ${file} is corrupt \\(.+; found corrupt while running at \\S+: SQLITE_CORRUPT: database disk image is malformed\\)\\. With poolscope stopped, restore`,
      ),
    );
  });

  it('starts afresh once the file is moved away; the mark of the old file is dropped', async () => {
    const file = await seedStore();
    corruptTables(file, ['pool_history']);
    const store = await openStore({ sqlitePath: file });
    await expect(store.poolAt('mgmt-weu/default/busy', at(30))).rejects.toBeInstanceOf(StoreFailingError);
    await store.close();
    renameSync(file, `${file}.bad`);
    const fresh = await openStore({ sqlitePath: file });
    expect(existsSync(markPath(file))).toBe(false);
    expect(await fresh.lastCycle()).toBeNull();
    await fresh.close();
  });
});

describe('a store that cannot be read', () => {
  it('PostgreSQL unreachable: failing with the reason, without the URL', async () => {
    const store = new TimelineStore(openPostgres('postgres://poolscope:s3cret@127.0.0.1:1/poolscope'), {
      location: { kind: 'postgres' },
    });
    const read = store.lastCycle();
    await expect(read).rejects.toMatchObject({ status: 503, code: 'store-failing', fault: 'unreadable' });
    await expect(read).rejects.toThrow(
      /^poolscope cannot read its store, the PostgreSQL database of DATABASE_URL \(.*ECONNREFUSED.*\)\. Check that the database is up and reachable\.$/,
    );
    expect(store.health()).toMatchObject({ state: 'failing', fault: 'unreadable' });
    expect(JSON.stringify(store.health())).not.toContain('s3cret');
    await store.close();
  });

  it('is ok again at the next query that works', async () => {
    // The driver as it is while the database is down (its real error), then up (SQLite standing in for it).
    const refused = await new pg.Client({ connectionString: 'postgres://poolscope@127.0.0.1:1/poolscope' })
      .connect()
      .then(
        () => null,
        (e: unknown) => e,
      );
    const up = openSqlite(':memory:');
    let down = true;
    const faults = new StoreFaults({ kind: 'postgres' });
    const db = faults.watch({ ...up, all: (sql, params) => (down ? Promise.reject(refused) : up.all(sql, params)) });
    await expect(db.all('SELECT 1 AS one')).rejects.toBeInstanceOf(StoreFailingError);
    expect(faults.health()).toMatchObject({ state: 'failing', fault: 'unreadable' });
    down = false;
    expect(await db.all('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    expect(faults.health()).toEqual({ state: 'ok' });
  });

  it('a query that fails for its own reasons is not a store failure', async () => {
    const store = new TimelineStore(openSqlite(':memory:'));
    await store.migrate();
    const bad = store.writeCycle({ id: 'x', at: at(0) }, []).then(() => store.writeCycle({ id: 'x', at: at(0) }, []));
    await expect(bad).rejects.toThrow(/UNIQUE constraint failed/);
    await expect(bad).rejects.not.toBeInstanceOf(StoreFailingError);
    expect(store.health()).toEqual({ state: 'ok' });
    await store.close();
  });
});
