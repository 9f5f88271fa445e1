import 'server-only';
// The SQLite store's check at start-up: a file corrupted past its header stops start-up with a message saying
// what to do, instead of failing somewhere later. `PRAGMA quick_check` of the whole file reads every page: measured
// 17–20 s for a 630 MB store read from disk (1.3 s from the page cache), so minutes at the sizes the README's
// Sizing gives, past the start-up probe's two minutes. Start-up therefore checks the tables it reads whole — the
// fleet's current state and the cycles (~130 MB at 100k VMs: ~5 s from disk, which warms the cache for the
// collector's own read of them) — and the whole file only when this very file was found corrupt while running
// (the mark left beside it), so that a restart after that fails clearly too.

import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { faultText, storeFault } from './health';
import type { SqlDb } from './store';

/** The tables start-up reads whole (migrations, the collector's start, readiness). */
export const STARTUP_TABLES = [
  'schema_migrations',
  'pools',
  'pool_summaries',
  'pool_rows',
  'cycles',
  'azure_reads',
] as const;

/** quick_check's answer: "ok", or its first problem (its lines joined, without SQLite's "*** in database main ***"). */
function problem(rows: Record<string, unknown>[]): string | null {
  const first = rows[0] ? Object.values(rows[0])[0] : undefined;
  if (first === 'ok') return null;
  return String(first ?? 'no answer')
    .split('\n')
    .filter((l) => l && !l.startsWith('***'))
    .join('; ');
}

/**
 * The first problem `PRAGMA quick_check` finds in `tables` (those the file has; each with its indexes), or in the
 * whole file when `tables` is null; null when it finds none. SQLite's refusal to read (SQLITE_CORRUPT,
 * SQLITE_NOTADB) is a problem found too; other errors are thrown.
 */
export async function quickCheck(db: SqlDb, tables: readonly string[] | null): Promise<string | null> {
  let checking: string | null = null;
  try {
    if (tables === null) return problem(await db.all('PRAGMA quick_check(1)'));
    const present = new Set(
      (await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")).map((r) => r.name),
    );
    for (const t of tables) {
      if (!present.has(t)) continue;
      checking = t;
      const p = problem(await db.all(`PRAGMA quick_check(${t})`));
      if (p) return `table ${t}: ${p}`;
    }
    return null;
  } catch (e) {
    if (storeFault(e) === 'corrupt') return `${checking ? `table ${checking}: ` : ''}${faultText(e)}`;
    throw e;
  }
}

/** Where the mark of a SQLite file found corrupt while running is kept. */
export const markPath = (file: string): string => `${file}-corrupt`;

/** The file's identity: a file restored or created at its path since it was marked is another file. */
function identity(file: string): string | null {
  try {
    const s = statSync(file, { bigint: true });
    return `${s.dev}:${s.ino}`;
  } catch {
    return null;
  }
}

/** Leaves the mark beside `file`: it answered `error` while running, so the next start checks all of it. */
export function markCorrupt(file: string, error: string, now = new Date()): void {
  writeFileSync(markPath(file), `${JSON.stringify({ file: identity(file), at: now.toISOString(), error })}\n`);
}

/**
 * The mark of this very file (when it was found corrupt, and what SQLite said), or null. A mark of a file no longer
 * there (moved away, restored as a new file) is removed; one that cannot be read counts as a mark.
 */
export function readMark(file: string): { at: string | null; error: string } | null {
  let text: string;
  try {
    text = readFileSync(markPath(file), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  let mark: { file?: unknown; at?: unknown; error?: unknown } = {};
  try {
    mark = JSON.parse(text) as typeof mark;
  } catch {
    // unreadable: it still says the file was found corrupt
  }
  const id = identity(file);
  if (id === null || (typeof mark.file === 'string' && mark.file !== id)) {
    clearMark(file);
    return null;
  }
  return {
    at: typeof mark.at === 'string' ? mark.at : null,
    error: typeof mark.error === 'string' ? mark.error : 'unknown',
  };
}

export function clearMark(file: string): void {
  rmSync(markPath(file), { force: true });
}
