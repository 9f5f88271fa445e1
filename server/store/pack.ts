// What the store keeps of a pool's state. An instance row and a drift item name their providerID, and then
// each source's spelling of it: the same 150-character ARM path up to seven times. Stored, a spelling equal to
// the providerID is written as 1, and so is a row's cluster-autoscaler key equal to it (a 100-instance pool:
// 190 KB of JSON down to 77 KB); a different spelling (case drift) or a missing one (null) is kept as it is.
// Reading restores the strings.

import { deflateRawSync, inflateRawSync, type ZlibOptions } from 'node:zlib';
import type { PoolDetail } from '@/lib/api-types';
import { stableDetail } from '@/lib/transitions';
import { KEYED_TABLES } from './history-patch';

/** A spelling stored as "same as the row's providerID". */
const SAME = 1;

type Sources = Record<string, string | number | null>;
type WithSources = { providerID: string | null; sources: Sources };

function packSources(row: WithSources): Sources {
  const out: Sources = {};
  const id = row.providerID;
  // for…in, not Object.entries: this runs for every row of every pool written.
  for (const k in row.sources) {
    const v = row.sources[k] as string | number | null;
    out[k] = v !== null && v === id ? SAME : v;
  }
  return out;
}

function unpackSources(row: WithSources): void {
  for (const k in row.sources) if (row.sources[k] === SAME) row.sources[k] = row.providerID;
}

/** A pool's state as stored: the rows' and drift items' spellings packed. */
export type PackedDetail = Omit<PoolDetail, 'at' | 'drift' | 'instances'> & { drift: object[]; instances: object[] };

/** The document the store writes for a pool's state (the caller's objects are not changed). */
export function packDetail(d: PoolDetail | Omit<PoolDetail, 'at'>): PackedDetail {
  const stable = 'at' in d ? stableDetail(d) : d;
  return { ...stable, drift: stable.drift.map(packDrift), instances: stable.instances.map(packRow) };
}

/**
 * The tables of a pool's state kept row by row (in the order their rows follow a stored text's first line): a
 * pool's instance rows, and its drift items (at 100k VMs under churn, 60-odd items a pool, most of what the rest
 * of a state weighs). The field that keys each is the history patches' (`KEYED_TABLES`).
 */
export const ROW_TABLES = ['instances', 'drift'] as const;
export type RowTable = (typeof ROW_TABLES)[number];

/** One table of a state to store: each row's key and JSON (ASCII), or null where the previous stored state's row stands. */
interface StoredTable {
  keys: string[];
  rows: (string | null)[];
}

/**
 * A pool's state as the store writes it: the packed document without its tables of rows, and each row's JSON;
 * its text is the document's JSON with those tables empty, then each instance row's JSON on a line of its own
 * (JSON text never holds a raw newline), then, when there are drift items, the line `"drift"` and each item's
 * JSON. A state with no rows is plain JSON, as states were stored before; texts stored before drift items were
 * kept apart have them in the document (both are read). Kept by line, the rows of the previous state compare
 * as strings: the store diffs a write without parsing the rows it did not change.
 *
 * A row left out (null) is as the pool's previous stored state has it: the collector knows which rows did not
 * change (`rowHash`) and does not serialise them; the store takes them from the previous text
 * ({@link completeStored}).
 */
export interface StoredState {
  /** The packed document, its tables of rows empty. */
  rest: PackedDetail;
  /** Its JSON (ASCII). */
  restText: string;
  /** Each table's rows in the table's order. */
  tables: Record<RowTable, StoredTable>;
}

/**
 * JSON text in ASCII: characters beyond it written as `\u` escapes (the same JSON to a parser). One "≥" in a
 * finding's text makes V8 hold the whole stored text, and every row split from it, two bytes per character:
 * inflating, splitting, comparing and hashing it then cost two to four times as much.
 */
export function asciiJson(json: string): string {
  // Counting UTF-8 bytes is native and several times quicker than a regular expression's scan.
  return Buffer.byteLength(json, 'utf8') !== json.length
    ? json.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    : json;
}

function packRow(r: PoolDetail['instances'][number]): object {
  return {
    ...r,
    sources: packSources(r),
    autoscaler: r.autoscaler.key === r.providerID ? { ...r.autoscaler, key: SAME } : r.autoscaler,
  };
}

function packDrift(x: PoolDetail['drift'][number]): object {
  return { ...x, sources: packSources(x) };
}

/** Which rows of each table are as the previous stored state has them (left out, not serialised). */
export type Unchanged = Partial<Record<RowTable, (i: number) => boolean>>;

function storedTable<T>(
  rows: readonly T[],
  keyOf: (r: T) => string,
  pack: (r: T) => object,
  unchanged: ((i: number) => boolean) | undefined,
): StoredTable {
  const keys: string[] = [];
  const texts: (string | null)[] = [];
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i] as T;
    keys.push(keyOf(r));
    texts.push(unchanged?.(i) ? null : asciiJson(JSON.stringify(pack(r))));
  }
  return { keys, rows: texts };
}

/** A pool's state to store, leaving out (null) the rows `unchanged` names. */
export function storedState(d: PoolDetail, unchanged: Unchanged = {}): StoredState {
  const stable = stableDetail(d);
  const rest: PackedDetail = { ...stable, drift: [], instances: [] };
  return {
    rest,
    restText: asciiJson(JSON.stringify(rest)),
    tables: {
      instances: storedTable(stable.instances, (r) => r.providerID, packRow, unchanged.instances),
      drift: storedTable(stable.drift, (x) => x.key, packDrift, unchanged.drift),
    },
  };
}

/** Whether any row of the state is left out. */
export function leavesOut(s: StoredState): boolean {
  return ROW_TABLES.some((t) => s.tables[t].rows.includes(null));
}

/** The line that starts a table's rows in a stored text (the instance rows follow the first line directly). */
const tableLine = (t: RowTable) => `"${t}"`;

/** The text of a state whose rows are all there (see {@link completeStored}). */
export function storedText(s: StoredState): string {
  if (leavesOut(s)) throw new Error('stored state: rows left out (complete it from the previous state first)');
  let text = s.restText;
  for (const t of ROW_TABLES) {
    const rows = s.tables[t].rows;
    if (rows.length === 0) continue;
    text += t === 'instances' ? `\n${rows.join('\n')}` : `\n${tableLine(t)}\n${rows.join('\n')}`;
  }
  return text;
}

/**
 * The state with the rows it left out taken from the previous stored state (split), or null when that has
 * not got them all (the caller then serialises the whole state).
 */
export function completeStored(s: StoredState, prev: StoredRows | null): StoredState | null {
  if (!leavesOut(s)) return s;
  if (!prev) return null;
  const tables = { ...s.tables };
  for (const t of ROW_TABLES) {
    const mine = s.tables[t];
    if (!mine.rows.includes(null)) continue;
    const theirs = prev.tables[t];
    const byKey = new Map<string, string>();
    for (let i = 0; i < theirs.keys.length; i++) byKey.set(theirs.keys[i] as string, theirs.rows[i] as string);
    const rows: string[] = [];
    for (let i = 0; i < mine.rows.length; i++) {
      const row = mine.rows[i] ?? byKey.get(mine.keys[i] as string);
      if (row === undefined) return null;
      rows.push(row);
    }
    tables[t] = { keys: mine.keys, rows };
  }
  return { ...s, tables };
}

/** A stored state's text split: the document without its tables of rows, and each table's row keys and JSON. */
export interface StoredRows {
  rest: Record<string, unknown>;
  tables: Record<RowTable, { keys: string[]; rows: string[] }>;
}

/** A row's key, read off its JSON (a packed row starts with it) without parsing the row. */
export function rowKey(json: string, table: RowTable = 'instances'): string {
  const field = KEYED_TABLES[table] as string;
  const prefix = `{"${field}":"`;
  if (json.startsWith(prefix)) {
    const end = json.indexOf('"', prefix.length);
    const raw = json.slice(prefix.length, end);
    if (end > 0 && !raw.includes('\\')) return raw;
  }
  return String((JSON.parse(json) as Record<string, unknown>)[field]);
}

/** A stored text's lines after the first, by table (see {@link StoredState}). */
function linesByTable(lines: readonly string[]): Record<RowTable, string[]> {
  const out: Record<RowTable, string[]> = { instances: [], drift: [] };
  let table: RowTable = 'instances';
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.startsWith('"')) {
      const name = JSON.parse(line) as string;
      if (!(ROW_TABLES as readonly string[]).includes(name)) throw new Error(`stored state: unknown table ${name}`);
      table = name as RowTable;
    } else out[table].push(line);
  }
  return out;
}

/** Splits a stored state's text (its document's line, then each table's rows by line). */
export function splitStored(text: string): StoredRows {
  const lines = text.split('\n');
  const rest = JSON.parse(lines[0] as string) as Record<string, unknown>;
  const byTable = linesByTable(lines);
  const tables = {} as StoredRows['tables'];
  for (const t of ROW_TABLES) tables[t] = { keys: byTable[t].map((r) => rowKey(r, t)), rows: byTable[t] };
  return { rest, tables };
}

/** Parses a stored state's text into its packed document (a state without rows is its document's line alone). */
export function parseStored(text: string): Record<string, unknown> {
  const nl = text.indexOf('\n');
  if (nl < 0) return JSON.parse(text) as Record<string, unknown>;
  const lines = text.split('\n');
  const doc = JSON.parse(lines[0] as string) as Record<string, unknown>;
  const byTable = linesByTable(lines);
  for (const t of ROW_TABLES) if (byTable[t].length) doc[t] = byTable[t].map((l) => JSON.parse(l) as unknown);
  return doc;
}

/** Restores a stored document in place (documents stored before packing pass through unchanged). */
export function unpackDetail<T extends object>(doc: T): T {
  const d = doc as unknown as { drift?: unknown; instances?: unknown };
  for (const table of [d.drift, d.instances]) {
    if (!Array.isArray(table)) continue;
    for (const row of table as WithSources[]) if (row?.sources) unpackSources(row);
  }
  if (Array.isArray(d.instances)) {
    for (const row of d.instances as { providerID: string; autoscaler?: { key: unknown } }[]) {
      if (row?.autoscaler?.key === SAME) row.autoscaler.key = row.providerID;
    }
  }
  return doc;
}

/**
 * Whole states (a pool's current state, and its keyframes) are stored deflated, as text both databases take:
 * `z1:` and base64. A 100-instance pool's packed state compresses about twelvefold (77 KB → 6.5 KB).
 */
const DEFLATED = 'z1:';

export function deflateDoc(json: string, options: ZlibOptions = WHOLE_STATE): string {
  return DEFLATED + deflateRawSync(json, options).toString('base64');
}

const WHOLE_STATE: ZlibOptions = { level: 3 };

/**
 * A patch (a few KB) deflated with a 4 KB window and a small hash table: zlib's default 32 KB window and tables
 * are ~270 KB to allocate and clear at every call, for a text that fits in 4 KB. On the patches of a churning
 * 100-instance pool (4.5 KB on average) the bytes out are the same and the CPU ~30% less (deflating patches
 * was ~2.4% of the 100k collector's main thread). Any inflater reads it.
 */
const PATCH: ZlibOptions = { level: 3, windowBits: 12, memLevel: 5 };

/** Deflated when that is shorter (a patch of a few hundred bytes is not). */
export function deflateIfShorter(json: string): string {
  if (json.length < 512) return json;
  const z = deflateDoc(json, PATCH);
  return z.length < json.length ? z : json;
}

/** The JSON of a stored document, deflated or (as stored before, or short) plain. */
export function inflateDoc(text: string): string {
  return text.startsWith(DEFLATED)
    ? inflateRawSync(Buffer.from(text.slice(DEFLATED.length), 'base64')).toString('utf8')
    : text;
}
