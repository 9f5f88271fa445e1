// What the store keeps of a pool's state. An instance row and a drift item name their providerID, and then
// each source's spelling of it: the same 150-character ARM path up to seven times. Stored, a spelling equal to
// the providerID is written as 1, and so is a row's cluster-autoscaler key equal to it (a 100-instance pool:
// 190 KB of JSON down to 77 KB); a different spelling (case drift) or a missing one (null) is kept as it is.
// Reading restores the strings.

import { createHash } from 'node:crypto';
import { deflateRawSync, inflateRawSync, type ZlibOptions } from 'node:zlib';
import type { InstanceRow, PoolDetail } from '@/lib/api-types';
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

/**
 * What a pool's last stored state was made of: a hash of its document without its tables of rows, and each
 * row's hash by key ({@link rowHash}), per table. The collector keeps it per pool (~1.6 KB at 100 instance rows,
 * ~1 KB more at 60 drift items): a new analysis serialises only the rows whose hash differs, and changed nothing
 * when none does.
 */
export interface StoredShape {
  rest: string;
  tables: Record<RowTable, Map<string, number>>;
}

function hashesOf(d: PoolDetail): Record<RowTable, number[]> {
  return { instances: d.instances.map(rowHash), drift: d.drift.map(rowHash) };
}

function shapeFrom(stored: StoredState, hashes: Record<RowTable, readonly number[]>): StoredShape {
  const tables = {} as Record<RowTable, Map<string, number>>;
  for (const t of ROW_TABLES) {
    const m = new Map<string, number>();
    const keys = stored.tables[t].keys;
    for (let i = 0; i < keys.length; i++) m.set(keys[i] as string, hashes[t][i] as number);
    tables[t] = m;
  }
  return { rest: createHash('sha1').update(stored.restText).digest('base64'), tables };
}

/** The shape of a state (as read back from the store at start), serialising none of its rows. */
export function shapeOf(d: PoolDetail): StoredShape {
  return shapeFrom(storedState(d, { instances: () => true, drift: () => true }), hashesOf(d));
}

/**
 * The state to store for an analysis, leaving out the rows `before` has with the same hash, and its shape.
 * `previous` is the analysis `before` was made of, when the caller has it: its drift items that the new
 * analysis took over as they were (the same objects: lib/drift) are not hashed again.
 */
export function toStore(
  d: PoolDetail,
  before: StoredShape | undefined,
  previous?: Pick<PoolDetail, 'drift'> | null,
): { stored: StoredState; shape: StoredShape } {
  const kept = before && previous?.drift.length ? new Set(previous.drift) : null;
  const hashes: Record<RowTable, number[]> = {
    instances: d.instances.map(rowHash),
    drift: d.drift.map((x) => (kept?.has(x) ? before?.tables.drift.get(x.key) : undefined) ?? rowHash(x)),
  };
  const stored = storedState(
    d,
    before && {
      instances: (i) => before.tables.instances.get(d.instances[i]!.providerID) === hashes.instances[i],
      drift: (i) => before.tables.drift.get(d.drift[i]!.key) === hashes.drift[i],
    },
  );
  return { stored, shape: shapeFrom(stored, hashes) };
}

/** Whether a state to store says what `before` did: the same document, the same rows, every row left out. */
export function sameShape(before: StoredShape | undefined, after: StoredShape, stored: StoredState): boolean {
  return (
    before !== undefined &&
    before.rest === after.rest &&
    ROW_TABLES.every(
      (t) => before.tables[t].size === after.tables[t].size && stored.tables[t].rows.every((r) => r === null),
    )
  );
}

/**
 * A hash of a row's content (an instance row or a drift item; 53 bits, over every value its JSON would say), to
 * tell the rows that changed since the last write without serialising any. Rows are compared by key, and a value
 * equal to the row's providerID is hashed as a mark (a row names it up to eight times). An instance row (a
 * hundred a pool, hashed at every analysis) is hashed field by field ({@link instanceRowHash}); anything else key
 * by key, in order.
 */
export function rowHash(row: { providerID: string | null }): number {
  h1 = 0xdeadbeef;
  h2 = 0x41c6ce57;
  const r = row as Partial<InstanceRow>;
  if (r.autoscaler != null && Array.isArray(r.driftKinds)) instanceRowHash(row as InstanceRow);
  else hashValue(row, row.providerID ?? undefined);
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/**
 * The fields of an instance row and of each of its parts, each of which {@link instanceRowHash} must hash: a field
 * added to the row's type and not listed here does not compile, and one listed but not hashed fails pack.test's
 * "every value changed" test.
 */
type Fields<T> = Record<keyof NonNullable<T>, true>;
export const INSTANCE_ROW_PARTS = {
  fields: {
    providerID: true,
    sources: true,
    azure: true,
    ampm: true,
    machine: true,
    node: true,
    autoscaler: true,
    driftKinds: true,
    awaitingAzureRead: true,
  } satisfies Fields<InstanceRow>,
  sources: { azure: true, amp: true, mp: true, ampm: true, machine: true, node: true } satisfies Fields<
    InstanceRow['sources']
  >,
  azure: {
    name: true,
    instanceId: true,
    provisioningState: true,
    powerState: true,
    latestModelApplied: true,
    errorCode: true,
    errorMessage: true,
    computerName: true,
  } satisfies Fields<InstanceRow['azure']>,
  ampm: { name: true, ready: true, provisioningState: true, nodeRef: true } satisfies Fields<InstanceRow['ampm']>,
  machine: { name: true, phase: true, nodeRef: true, deleting: true } satisfies Fields<InstanceRow['machine']>,
  node: { name: true, ready: true, uninitializedTaint: true } satisfies Fields<InstanceRow['node']>,
  autoscaler: { key: true, visible: true } satisfies Fields<InstanceRow['autoscaler']>,
};

/**
 * An instance row's fields read one by one (see {@link INSTANCE_ROW_PARTS}): twice as quick as walking its
 * keys, the row's hash having been a tenth of an analysis. A part that is missing (a row read back from an older
 * store) hashes as a mark of its own.
 */
function instanceRowHash(r: InstanceRow): void {
  const id = r.providerID;
  const s = r.sources;
  if (s == null) mix(s === null ? -201 : -221);
  else {
    mix(-211);
    leaf(s.azure, id);
    leaf(s.amp, id);
    leaf(s.mp, id);
    leaf(s.ampm, id);
    leaf(s.machine, id);
    leaf(s.node, id);
  }
  const a = r.azure;
  if (a == null) mix(a === null ? -202 : -222);
  else {
    mix(-212);
    leaf(a.name, id);
    leaf(a.instanceId, id);
    leaf(a.provisioningState, id);
    leaf(a.powerState, id);
    leaf(a.latestModelApplied, id);
    leaf(a.errorCode, id);
    leaf(a.errorMessage, id);
    leaf(a.computerName, id);
  }
  const m = r.ampm;
  if (m == null) mix(m === null ? -203 : -223);
  else {
    mix(-213);
    leaf(m.name, id);
    leaf(m.ready, id);
    leaf(m.provisioningState, id);
    leaf(m.nodeRef, id);
  }
  const c = r.machine;
  if (c == null) mix(c === null ? -204 : -224);
  else {
    mix(-214);
    leaf(c.name, id);
    leaf(c.phase, id);
    leaf(c.nodeRef, id);
    leaf(c.deleting, id);
  }
  const n = r.node;
  if (n == null) mix(n === null ? -205 : -225);
  else {
    mix(-215);
    leaf(n.name, id);
    leaf(n.ready, id);
    leaf(n.uninitializedTaint, id);
  }
  mix(-216);
  leaf(r.autoscaler.key, id);
  leaf(r.autoscaler.visible, id);
  const kinds = r.driftKinds;
  mix(-217 - kinds.length);
  for (let i = 0; i < kinds.length; i++) leaf(kinds[i], id);
  // Only when set: a row without it hashes as rows did before the field existed.
  if (r.awaitingAzureRead !== undefined) {
    mix(-301);
    leaf(r.awaitingAzureRead, id);
  }
}

/** A value of a known field (a field that is missing has a mark of its own; an object or array is walked). */
function leaf(v: unknown, id: string): void {
  if (v === undefined) mix(-110);
  else if (typeof v === 'string') {
    if (v === id) mix(-101);
    else {
      mix(-102);
      hashString(v);
    }
  } else hashValue(v, id);
}

// cyrb53's state while a row is hashed (module-level: no closure per row).
let h1 = 0;
let h2 = 0;

function mix(c: number): void {
  h1 = Math.imul(h1 ^ c, 2654435761);
  h2 = Math.imul(h2 ^ c, 1597334677);
}

/** Two UTF-16 units a step (half the mixing of one a step; a row's strings were most of its hash's cost). */
function hashString(v: string): void {
  const n = v.length;
  let i = 0;
  for (; i + 1 < n; i += 2) mix(v.charCodeAt(i) | (v.charCodeAt(i + 1) << 16));
  if (i < n) mix(v.charCodeAt(i));
  mix(-1 - n);
}

/**
 * A key's own hash (FNV-1a), remembered: a row's keys are the same few dozen every time, and hashing their
 * characters was a third of a row's hash. Bounded, should rows ever carry keys made from data.
 */
const keyHashes = new Map<string, number>();

function keyHash(k: string): number {
  let h = keyHashes.get(k);
  if (h === undefined) {
    h = 0x811c9dc5;
    for (let i = 0; i < k.length; i++) h = Math.imul(h ^ k.charCodeAt(i), 16777619);
    h = Math.imul(h ^ k.length, 16777619) >>> 0;
    if (keyHashes.size < 1024) keyHashes.set(k, h);
  }
  return h;
}

function hashValue(v: unknown, id: string | undefined): void {
  if (v === null) return mix(-100);
  switch (typeof v) {
    case 'string':
      if (v === id) return mix(-101);
      mix(-102);
      return hashString(v);
    case 'boolean':
      return mix(v ? -103 : -104);
    case 'number':
      mix(-105);
      return hashString(String(v));
    case 'object':
      if (Array.isArray(v)) {
        mix(-106 - v.length);
        for (const x of v) hashValue(x, id);
        return;
      }
      mix(-107);
      for (const k in v) {
        const x = (v as Record<string, unknown>)[k];
        if (x === undefined) continue; // as JSON leaves it out
        mix(keyHash(k));
        hashValue(x, id);
      }
      return mix(-108);
    default:
      return mix(-109); // an array's undefined (JSON writes null): a mark of its own, at worst a row serialised again
  }
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

/**
 * Splits a stored state's text (any layout: rows by line, drift items in the document as stored before they
 * were kept apart, or one JSON document as stored before that).
 */
export function splitStored(text: string): StoredRows {
  const lines = text.split('\n');
  const rest = JSON.parse(lines[0] as string) as Record<string, unknown>;
  const byTable = linesByTable(lines);
  const tables = {} as StoredRows['tables'];
  for (const t of ROW_TABLES) {
    let rows = byTable[t];
    // A table still in the document: as stored before it was kept by line.
    const inDoc = rest[t];
    if (Array.isArray(inDoc)) {
      if (inDoc.length) rows = inDoc.map((r) => JSON.stringify(r));
      rest[t] = [];
    }
    tables[t] = { keys: rows.map((r) => rowKey(r, t)), rows };
  }
  return { rest, tables };
}

/** Parses a stored state's text (any layout) into its packed document. */
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
