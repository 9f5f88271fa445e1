// What the store keeps of a pool's state. An instance row and a drift item name their providerID, and then
// each source's spelling of it: the same 150-character ARM path up to seven times. Stored, a spelling equal to
// the providerID is written as 1, and so is a row's cluster-autoscaler key equal to it (a 100-instance pool:
// 190 KB of JSON down to 77 KB); a different spelling (case drift) or a missing one (null) is kept as it is.
// Reading restores the strings.

import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { PoolDetail } from '@/lib/api-types';
import { stableDetail } from '@/lib/transitions';

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
  return {
    ...stable,
    drift: stable.drift.map((x) => ({ ...x, sources: packSources(x) })),
    instances: stable.instances.map((r) => ({
      ...r,
      sources: packSources(r),
      autoscaler: r.autoscaler.key === r.providerID ? { ...r.autoscaler, key: SAME } : r.autoscaler,
    })),
  };
}

/**
 * A pool's state as the store writes it: the packed document, and its text — the document's JSON with an
 * empty instance table, then each instance row's JSON on a line of its own (JSON text never holds a raw
 * newline). A state with no rows is plain JSON, as states were stored before. Kept by line, the rows of the
 * previous state compare as strings: the store diffs a write without parsing the 100 rows it did not change.
 * The collector fingerprints the text and hands the whole over.
 */
export interface StoredState {
  doc: PackedDetail;
  /** The JSON of each instance row, in the table's order. */
  rows: string[];
  text: string;
}

/**
 * JSON text in ASCII: characters beyond it written as `\u` escapes (the same JSON to a parser). One "≥" in a
 * finding's text makes V8 hold the whole stored text, and every row split from it, two bytes per character:
 * inflating, splitting, comparing and hashing it then cost two to four times as much.
 */
export function asciiJson(json: string): string {
  // Counting UTF-8 bytes is native and several times quicker than a regular expression's scan.
  return Buffer.byteLength(json, 'utf8') !== json.length ? json.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : json;
}

export function storedState(d: PoolDetail): StoredState {
  const doc = packDetail(d);
  let rows = doc.instances.map((r) => JSON.stringify(r));
  const rest = asciiJson(JSON.stringify({ ...doc, instances: [] }));
  let text = rows.length ? `${rest}\n${rows.join('\n')}` : rest;
  // Rows are nearly always ASCII already: checked all at once, escaped one by one only when not.
  if (Buffer.byteLength(text, 'utf8') !== text.length) {
    rows = rows.map(asciiJson);
    text = rows.length ? `${rest}\n${rows.join('\n')}` : rest;
  }
  return { doc, rows, text };
}

/** A stored state's text split: the document without its rows, and each row's key and JSON. */
export interface StoredRows {
  rest: Record<string, unknown>;
  keys: string[];
  rows: string[];
}

const ROW_PREFIX = '{"providerID":"';

/** A row's providerID, read off its JSON (a packed row starts with it) without parsing the row. */
export function rowKey(json: string): string {
  if (json.startsWith(ROW_PREFIX)) {
    const end = json.indexOf('"', ROW_PREFIX.length);
    const raw = json.slice(ROW_PREFIX.length, end);
    if (end > 0 && !raw.includes('\\')) return raw;
  }
  return String((JSON.parse(json) as { providerID: unknown }).providerID);
}

/** Splits a stored state's text (either layout: rows by line, or one JSON document as stored before). */
export function splitStored(text: string): StoredRows {
  const nl = text.indexOf('\n');
  if (nl < 0) {
    const doc = JSON.parse(text) as Record<string, unknown>;
    const rows = Array.isArray(doc.instances) ? doc.instances.map((r) => JSON.stringify(r)) : [];
    return { rest: Array.isArray(doc.instances) ? { ...doc, instances: [] } : doc, keys: rows.map(rowKey), rows };
  }
  const lines = text.split('\n');
  const rows = lines.slice(1);
  return { rest: JSON.parse(lines[0] as string) as Record<string, unknown>, keys: rows.map(rowKey), rows };
}

/** Parses a stored state's text (either layout) into its packed document. */
export function parseStored(text: string): Record<string, unknown> {
  const nl = text.indexOf('\n');
  if (nl < 0) return JSON.parse(text) as Record<string, unknown>;
  const lines = text.split('\n');
  const doc = JSON.parse(lines[0] as string) as Record<string, unknown>;
  doc.instances = lines.slice(1).map((l) => JSON.parse(l) as unknown);
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

export function deflateDoc(json: string): string {
  return DEFLATED + deflateRawSync(json, { level: 3 }).toString('base64');
}

/** Deflated when that is shorter (a patch of a few hundred bytes is not). */
export function deflateIfShorter(json: string): string {
  if (json.length < 512) return json;
  const z = deflateDoc(json);
  return z.length < json.length ? z : json;
}

/** The JSON of a stored document, deflated or (as stored before, or short) plain. */
export function inflateDoc(text: string): string {
  return text.startsWith(DEFLATED) ? inflateRawSync(Buffer.from(text.slice(DEFLATED.length), 'base64')).toString('utf8') : text;
}
