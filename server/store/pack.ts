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

/** A pool's state as the store writes it, packed and as JSON: the collector fingerprints it and hands it over. */
export interface StoredState {
  doc: PackedDetail;
  json: string;
}

export function storedState(d: PoolDetail): StoredState {
  const doc = packDetail(d);
  return { doc, json: JSON.stringify(doc) };
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
