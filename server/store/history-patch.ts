// A pool's state history stores a keyframe now and then and, between them, patches. A plain JSON Patch
// (RFC 6902) of a pool diffs its instance table by array index: one instance appearing near the top shifts
// every row below it, and the patch rewrites them all (8.5 KB on average for one changed instance in a
// 100-instance pool). A history patch diffs the keyed tables (instances by providerID, drift items by key)
// by key instead: rows removed, rows changed in place, rows added after the row they follow. Everything else
// is a JSON Patch.

import fjp from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';

/** The tables of a pool's detail diffed by key, and the field that keys their rows. */
export const KEYED_TABLES: Readonly<Record<string, string>> = { instances: 'providerID', drift: 'key' };

export interface TablePatch {
  /** Keys of the rows removed. */
  del?: string[];
  /** Rows changed in place, whole (when that is shorter than saying what changed). */
  set?: unknown[];
  /** Rows changed in place: a JSON Patch of the row, by key (usually one field: a state, a flag). */
  edit?: [key: string, ops: Operation[]][];
  /** New rows, each after the row with the given key (null: first), in the table's order. */
  add?: [after: string | null, row: unknown][];
}

export interface HistoryPatch {
  v: 2;
  /** JSON Patch for everything but the keyed tables. */
  ops: Operation[];
  tables: Record<string, TablePatch>;
}

type Doc = Record<string, unknown>;

/** Whether two JSON values would serialise the same (same keys in the same order); no strings are built. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i] as string;
    if (k !== kb[i] || !sameJson((a as Doc)[k], (b as Doc)[k])) return false;
  }
  return true;
}

function keysOf(rows: unknown[], field: string): string[] | null {
  const keys: string[] = [];
  const seen = new Set<string>();
  for (const r of rows) {
    const k = r !== null && typeof r === 'object' ? (r as Doc)[field] : undefined;
    if (typeof k !== 'string' || seen.has(k)) return null;
    seen.add(k);
    keys.push(k);
  }
  return keys;
}

/** A keyed table of objects: rows compare as JSON values (no text is built), only changed ones are copied. */
function diffTable(prev: unknown[], next: unknown[], field: string): TablePatch | null {
  const pk = keysOf(prev, field);
  const nk = keysOf(next, field);
  if (!pk || !nk) return null;
  return diffKeyed(
    pk,
    nk,
    (i, j) => sameJson(prev[i], next[j]),
    (i) => JSON.parse(JSON.stringify(prev[i])) as unknown,
    (j) => next[j],
  );
}

/**
 * A row changed in place: as a JSON Patch of the row when that is shorter and rebuilds it exactly, else whole.
 * `was` (parsed from text: a copy of our own) is patched in place to check that.
 */
function changed(k: string, was: unknown, row: unknown, set: unknown[], edit: [string, Operation[]][]): void {
  const ops =
    was !== null && typeof was === 'object' && row !== null && typeof row === 'object' ? fjp.compare(was, row) : null;
  // A row's own key order must survive too: a field added to a row goes to its end.
  const rebuilt = ops && fjp.applyPatch(was as object, ops, false, true).newDocument;
  if (ops && sameJson(rebuilt, row) && JSON.stringify(ops).length < JSON.stringify(row).length) edit.push([k, ops]);
  else set.push(row);
}

/** A keyed table given as each row's key and JSON text, in order (see ./pack's StoredRows). */
export interface RowsText {
  keys: readonly string[];
  rows: readonly string[];
}

/**
 * A keyed table's patch from two tables given as text: rows compare as strings, and only the rows that
 * changed are parsed. Null when a keyframe must say it (duplicate keys, rows re-ordered).
 */
function diffRowsText(prev: RowsText, next: RowsText): TablePatch | null {
  return diffKeyed(
    prev.keys,
    next.keys,
    (i, j) => prev.rows[i] === next.rows[j],
    (i) => JSON.parse(prev.rows[i] as string) as unknown,
    (j) => JSON.parse(next.rows[j] as string) as unknown,
  );
}

/** One row of a table as written: its key, its JSON, and its JSON before (undefined: a new row). */
export interface RowChange {
  key: string;
  text: string;
  was: string | undefined;
  /** The key of the row it follows in the new table (null: first). */
  after: string | null;
}

/**
 * A keyed table's patch from what changed alone, the rows written (in the table's order) and the keys of
 * those removed: every other row is the same, in the same order, on both sides. The patch
 * {@link diffRowsText} makes of the whole tables.
 */
export function diffChangedRows(written: readonly RowChange[], removed: readonly string[]): TablePatch {
  const out: TablePatch = {};
  if (removed.length) out.del = [...removed];
  const set: unknown[] = [];
  const edit: [string, Operation[]][] = [];
  const add: [string | null, unknown][] = [];
  for (const r of written) {
    if (r.was === undefined) add.push([r.after, JSON.parse(r.text) as unknown]);
    else if (r.was !== r.text) changed(r.key, JSON.parse(r.was) as unknown, JSON.parse(r.text) as unknown, set, edit);
  }
  if (set.length) out.set = set;
  if (edit.length) out.edit = edit;
  if (add.length) out.add = add;
  return out;
}

/**
 * A keyed table's patch, given each side's keys in order, whether a previous row (by index) is the same as a
 * next one, and each side's row as a value (the previous one a copy of our own: it is patched to check an edit).
 * Null when a keyframe must say it (duplicate keys, rows re-ordered).
 */
function diffKeyed(
  prevKeys: readonly string[],
  nextKeys: readonly string[],
  same: (i: number, j: number) => boolean,
  prevRow: (i: number) => unknown,
  nextRow: (j: number) => unknown,
): TablePatch | null {
  const prevIndex = new Map<string, number>();
  for (let i = 0; i < prevKeys.length; i++) {
    const k = prevKeys[i] as string;
    if (prevIndex.has(k)) return null;
    prevIndex.set(k, i);
  }
  const inNext = new Set(nextKeys);
  if (inNext.size !== nextKeys.length) return null;
  // Rows kept must keep their order: a table re-sorted is not a keyed change (the caller stores it otherwise).
  const keptPrev = prevKeys.filter((k) => inNext.has(k));
  const keptNext = nextKeys.filter((k) => prevIndex.has(k));
  if (keptPrev.some((k, i) => k !== keptNext[i])) return null;
  const out: TablePatch = {};
  const del = prevKeys.filter((k) => !inNext.has(k));
  if (del.length) out.del = del;
  const set: unknown[] = [];
  const edit: [string, Operation[]][] = [];
  const add: [string | null, unknown][] = [];
  nextKeys.forEach((k, j) => {
    const i = prevIndex.get(k);
    if (i === undefined) add.push([j === 0 ? null : (nextKeys[j - 1] as string), nextRow(j)]);
    else if (!same(i, j)) changed(k, prevRow(i), nextRow(j), set, edit);
  });
  if (set.length) out.set = set;
  if (edit.length) out.edit = edit;
  if (add.length) out.add = add;
  return out;
}

/** The patch from `prev` to `next` (neither is changed), or null when only a keyframe can say it. */
export function diffHistory(prev: object, next: object): HistoryPatch | null {
  const restPrev: Doc = { ...(prev as Doc) };
  const restNext: Doc = { ...(next as Doc) };
  const tables: Record<string, TablePatch> = {};
  for (const [name, field] of Object.entries(KEYED_TABLES)) {
    const a = restPrev[name];
    const b = restNext[name];
    if (!Array.isArray(a) || !Array.isArray(b)) continue;
    const t = diffTable(a, b, field);
    if (!t) return null;
    if (t.del || t.set || t.edit || t.add) tables[name] = t;
    delete restPrev[name];
    delete restNext[name];
  }
  // A keyed table must stay at its place among the document's keys for the rebuilt JSON to read the same.
  const order = (d: object) => Object.keys(d).join('\u0000');
  if (order(prev) !== order(next)) return null;
  return { v: 2, ops: fjp.compare(restPrev, restNext), tables };
}

/**
 * The patch between two stored states split by row (./pack's `splitStored`): the tables kept by line diffed as
 * text, everything else as {@link diffHistory} does. The same patch `diffHistory` makes of the whole documents.
 */
export function diffStoredRows(
  prev: { rest: object; tables: Readonly<Record<string, RowsText>> },
  next: { rest: object; tables: Readonly<Record<string, RowsText>> },
): HistoryPatch | null {
  const patch = diffHistory(prev.rest, next.rest);
  if (!patch) return null;
  for (const [name, rows] of Object.entries(next.tables)) {
    const t = diffRowsText(prev.tables[name] ?? { keys: [], rows: [] }, rows);
    if (!t) return null;
    if (t.del || t.set || t.edit || t.add) patch.tables[name] = t;
  }
  return patch;
}

function applyTable(rows: unknown[], t: TablePatch, field: string, name: string): unknown[] {
  const del = new Set(t.del ?? []);
  const set = new Map((t.set ?? []).map((r) => [(r as Doc)[field] as string, r]));
  const edit = new Map(t.edit ?? []);
  const out = rows
    .filter((r) => !del.has((r as Doc)[field] as string))
    .map((r) => {
      const k = (r as Doc)[field] as string;
      const ops = edit.get(k);
      if (ops) {
        edit.delete(k);
        return fjp.applyPatch(r as object, ops, false, true).newDocument;
      }
      return set.get(k) ?? r;
    });
  if (edit.size) throw new Error(`history patch: ${name} has no row ${[...edit.keys()][0]} to edit`);
  for (const [after, row] of t.add ?? []) {
    const i = after === null ? 0 : out.findIndex((r) => (r as Doc)[field] === after) + 1;
    if (i === 0 && after !== null) throw new Error(`history patch: ${name} has no row ${after} to add after`);
    out.splice(i, 0, row);
  }
  return out;
}

/** Applies a patch to `doc` (changed in place) and returns it. */
export function applyHistory(doc: object, patch: HistoryPatch): object {
  if (patch.v !== 2) throw new Error(`history patch: unknown version ${String(patch.v)}`);
  const d = doc as Doc;
  // The keyed tables leave the document while the JSON Patch applies, as when it was made.
  const held: Record<string, unknown> = {};
  for (const name of Object.keys(KEYED_TABLES)) {
    if (Array.isArray(d[name])) {
      held[name] = d[name];
      d[name] = null;
    }
  }
  const patched = fjp.applyPatch(d, patch.ops, false, true).newDocument as Doc;
  for (const [name, rows] of Object.entries(held)) {
    const t = patch.tables[name];
    patched[name] = t ? applyTable(rows as unknown[], t, KEYED_TABLES[name] as string, name) : rows;
  }
  return patched;
}
