import 'server-only';
// Whether the store itself is failing, told apart from a query's own failure: a corrupt SQLite file, or a store
// that cannot be read at all (an I/O error, PostgreSQL unreachable). Every query goes through `watch`, which
// remembers the fault and rethrows it as a StoreFailingError (503 `store-failing`, a message saying what to do).
// Corruption does not heal: once seen, the store stays failing for the life of the process, and refuses writes
// (writing into a corrupt SQLite file can spread the damage). The other faults clear at the next query that works.

import type { StoreHealth } from '@/lib/api-types';
import { HttpError } from '../http/route';
import type { SqlDb } from './store';

/** `corrupt`: the SQLite file is damaged (SQLITE_CORRUPT, SQLITE_NOTADB). `unreadable`: the store cannot be reached or read. */
export type StoreFault = 'corrupt' | 'unreadable';

/** Where the store is, as the messages name it. */
export type StoreLocation = { kind: 'sqlite'; file?: string } | { kind: 'postgres' };

export type StoreReadHealth = { state: 'ok' } | { state: 'failing'; fault: StoreFault; since: string; error: string };

/** PostgreSQL (and network) errors that mean the database cannot be reached or has gone away. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '3D000',
]);

/** Which fault an error from a driver is, or null for a failure of the query itself (a constraint, a busy lock, a bug). */
export function storeFault(e: unknown): StoreFault | null {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') return 'corrupt';
    if (code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_CANTOPEN')) return 'unreadable';
    // SQLSTATE class 08: connection exceptions.
    if (UNREACHABLE.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return 'unreadable';
  }
  // pg's own errors for a connection that ended or never came.
  if (e instanceof Error && /^(Connection terminated|timeout exceeded when trying to connect)/.test(e.message))
    return 'unreadable';
  return null;
}

/** The error's own words, with its code when it has one: "SQLITE_CORRUPT: database disk image is malformed". */
export function faultText(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  const message = e instanceof Error ? e.message : String(e);
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
}

/** What an operator does about a corrupt SQLite file. */
export function corruptAdvice(file = 'the file'): string {
  const side = file === 'the file' ? 'its -wal and -shm files' : `${file}-wal and ${file}-shm`;
  return `With poolscope stopped, restore ${file} from a backup, or move it away together with ${side} (poolscope then starts with an empty store).`;
}

/** The message of a store failing with `fault`, `cause` being what the driver said. */
function faultMessage(where: StoreLocation, fault: StoreFault, cause: string): string {
  if (where.kind === 'postgres')
    return `poolscope cannot read its store, the PostgreSQL database of DATABASE_URL (${cause}). Check that the database is up and reachable.`;
  const store = `poolscope's SQLite store${where.file ? ` ${where.file}` : ''}`;
  if (fault === 'unreadable') return `${store} cannot be read (${cause}). Check the volume it is on.`;
  return `${store} is corrupt (${cause}): nothing more is recorded, and what cannot be read is not shown. ${corruptAdvice(where.file)}`;
}

/**
 * The store as the pages' alert shows it, where a collector writes: its refused writes, or, before it has met one,
 * the store's own failure (which refuses its writes from then on). Null where no collector writes (`writes` null).
 */
export function storeReport(writes: StoreHealth | null, store: StoreReadHealth): StoreHealth | null {
  if (writes === null || writes.state === 'failing' || store.state === 'ok') return writes;
  return { state: 'failing', since: store.since, failingWrites: 0, error: store.error };
}

/** A query that failed because the store is failing: 503 `store-failing`, the message naming the store and what to do. */
export class StoreFailingError extends HttpError {
  constructor(
    readonly fault: StoreFault,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(503, 'store-failing', message);
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/** The store's faults as its queries meet them. */
export class StoreFaults {
  private fault: { kind: StoreFault; since: string; error: string } | null = null;

  constructor(
    private readonly where: StoreLocation,
    private readonly onCorrupt?: (error: string) => void,
    private readonly now = () => new Date(),
  ) {}

  health(): StoreReadHealth {
    return this.fault
      ? { state: 'failing', fault: this.fault.kind, since: this.fault.since, error: this.fault.error }
      : { state: 'ok' };
  }

  /** The driver with every query watched: a fault is remembered and thrown as a StoreFailingError. */
  watch(db: SqlDb): SqlDb {
    const guard = async <T>(write: boolean, op: () => Promise<T>): Promise<T> => {
      if (write && this.fault?.kind === 'corrupt') throw new StoreFailingError('corrupt', this.fault.error);
      try {
        const r = await op();
        if (this.fault?.kind === 'unreadable') this.fault = null;
        return r;
      } catch (e) {
        throw this.failed(e);
      }
    };
    return {
      dialect: db.dialect,
      all: <T>(sql: string, params?: unknown[]) => guard(false, () => db.all<T>(sql, params)),
      run: (sql, params) => guard(true, () => db.run(sql, params)),
      tx: (fn) => guard(true, () => db.tx(fn)),
      close: () => db.close(),
    };
  }

  /** `e` as the query's caller sees it: a fault remembered and turned into a StoreFailingError; anything else as it is. */
  private failed(e: unknown): unknown {
    if (e instanceof StoreFailingError) return e;
    const kind = storeFault(e);
    if (!kind) return e;
    const error = faultMessage(this.where, kind, faultText(e));
    if (this.fault?.kind !== 'corrupt') {
      const since = this.fault?.kind === kind ? this.fault.since : this.now().toISOString();
      this.fault = { kind, since, error };
      if (kind === 'corrupt') this.onCorrupt?.(faultText(e));
    }
    return new StoreFailingError(kind, error, { cause: e });
  }
}
