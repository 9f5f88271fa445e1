// A pool's stored state as hashes (its shape): a hash of its document without its tables of rows, and a hash of
// each row by key. Comparing an analysis's shape with the last written tells what changed without serialising a
// row (./last-written keeps the shapes; ./pack says what is stored).

import { createHash } from 'node:crypto';
import type { InstanceRow, PoolDetail } from '@/lib/api-types';
import { ROW_TABLES, storedState, type RowTable, type StoredState } from './pack';

/**
 * What a pool's last stored state was made of: a hash of its document without its tables of rows, and each
 * row's hash by key ({@link rowHash}), per table. ./last-written keeps one per pool (~1.6 KB at 100 instance
 * rows, ~1 KB more at 60 drift items): a new analysis serialises only the rows whose hash differs, and changed
 * nothing when none does.
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
  node: { name: true, ready: true, uninitializedTaint: true, agentPool: true } satisfies Fields<InstanceRow['node']>,
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
    // Only when set (an AKS Node): a self-managed pool's row hashes as before the field existed.
    if (n.agentPool !== undefined) {
      mix(-199);
      leaf(n.agentPool, id);
    }
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
