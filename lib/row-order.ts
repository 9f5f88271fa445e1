// The order of a pool's tables of rows. The store keeps the current tables one row apart from the next and
// restores their order on reading, so each must be a total order on the rows' keys.
//
// The instance table: by providerID, the numbers in it compared as numbers ("…/9" before "…/10"); IDs the
// collator holds equal are ordered by their code units. The drift items: by key (`<kind>:<join key>`), as code
// units — sorting 60 keys with the collator would cost ten times as much at every analysis, and the UI shows
// them in an order of its own.

const collator = new Intl.Collator('en', { numeric: true });

export function compareRowKeys(a: string, b: string): number {
  const gen = generation;
  const x = placeOf(a);
  const y = placeOf(b);
  // Places from one generation of the tables only (a parent's number is only good within one).
  return byPlaces(a, b, x, y, gen === generation);
}

/** The order of two IDs given their places (see placeOf): by number within one parent, else the collator's. */
function byPlaces(a: string, b: string, x: number, y: number, sameGeneration: boolean): number {
  // The same parent, different numbers.
  if (sameGeneration && x >= 0 && y >= 0 && x !== y && Math.floor(x / TAIL_SPAN) === Math.floor(y / TAIL_SPAN))
    return x < y ? -1 : 1;
  return collatorRowOrder(a, b);
}

/** Each key's place, looked up once, and whether the tables did not start afresh meanwhile. */
function placesOf(keys: readonly string[]): { places: number[]; sameGeneration: boolean } {
  const gen = generation;
  const places = keys.map(placeOf);
  return { places, sameGeneration: gen === generation };
}

/**
 * Items in row order by their keys (each key's place looked up once, not at every comparison: the places' table
 * is large, and a lookup in it costs a few cache misses).
 */
export function sortByRowKey<T>(items: readonly T[], keyOf: (item: T) => string): T[] {
  const keys = items.map(keyOf);
  const { places, sameGeneration } = placesOf(keys);
  const order = keys.map((_, i) => i);
  order.sort((i, j) =>
    byPlaces(keys[i] as string, keys[j] as string, places[i] as number, places[j] as number, sameGeneration),
  );
  return order.map((i) => items[i] as T);
}

/** The same order asked of the collator alone (the shortcut below is tested against it). */
export function collatorRowOrder(a: string, b: string): number {
  return collator.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);
}

/** A string's tail from `from` on as a number when it is all digits (and exact as a double); -1 otherwise. */
function numericTail(s: string, from: number): number {
  const n = s.length - from;
  if (n <= 0 || n > 15) return -1;
  let v = 0;
  for (let i = from; i < s.length; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

/*
 * The shortcut for the common case — two instances of one scale set, `…/virtualMachines/<n>` — gives the
 * collator's answer without asking it: the same text up to the last `/` collates the same, so the numbers after
 * it decide (the collator decides when the parents differ, a tail is not a number, or the numbers are equal:
 * "01" and "1").
 *
 * Each ID's place for it is remembered: its parent (the text before the last `/`) as a small number and its
 * numeric tail, packed into one number (exact as a double), or -1 where the shortcut cannot apply. An analysis
 * sorts a pool's hundred rows and the store checks their order at every write; working out and comparing two
 * 130-character parents at every comparison was a tenth of an analysis. The IDs are the same strings from one
 * analysis to the next (lib/slim interns them), so a lookup costs a hash the string already holds. Bounded: past
 * the limit (about 12 MB) both tables start afresh.
 */
const TAIL_SPAN = 2 ** 32;
const PARENTS_MAX = 2 ** 20;
const places = new Map<string, number>();
const parentIds = new Map<string, number>();
let placesMax = 250_000;
/** How many times the tables started afresh (a parent's number is only good within one generation). */
let generation = 0;

function placeOf(s: string): number {
  let p = places.get(s);
  if (p !== undefined) return p;
  if (places.size >= placesMax || parentIds.size >= PARENTS_MAX) startAfresh();
  p = -1;
  const i = s.lastIndexOf('/');
  const n = i < 0 ? -1 : numericTail(s, i + 1);
  if (n >= 0 && n < TAIL_SPAN) {
    const parent = s.slice(0, i);
    let g = parentIds.get(parent);
    if (g === undefined) {
      g = parentIds.size;
      parentIds.set(parent, g);
    }
    p = g * TAIL_SPAN + n;
  }
  places.set(s, p);
  return p;
}

/** The places' table's size and bound, and a way to empty both tables (for benchmarks, like lib/slim's internTable). */
export function rowPlaces(): { size: number; limit: number; clear: () => void } {
  return { size: places.size, limit: placesMax, clear: startAfresh };
}

/** Drops an ID's place (lib/forget: a deleted VM's; the parents' numbers stay as they are). */
export function forgetPlace(id: string): void {
  places.delete(id);
}

function startAfresh(): void {
  places.clear();
  parentIds.clear();
  generation++;
}

/** For tests: how many IDs the tables may hold before they start afresh; returns the limit it replaces. */
export function setRowOrderTableLimit(n: number): number {
  const was = placesMax;
  placesMax = n;
  return was;
}

export function compareDriftKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Each table's order, by the table's name in a pool's state. */
export const TABLE_ORDER = { instances: compareRowKeys, drift: compareDriftKeys } as const;

/** Whether keys are in an order, each once (by default the instance table's). */
export function inRowOrder(
  keys: readonly string[],
  compare: (a: string, b: string) => number = compareRowKeys,
): boolean {
  if (compare === compareRowKeys) {
    const { places, sameGeneration } = placesOf(keys);
    for (let i = 1; i < keys.length; i++)
      if (
        byPlaces(
          keys[i - 1] as string,
          keys[i] as string,
          places[i - 1] as number,
          places[i] as number,
          sameGeneration,
        ) >= 0
      )
        return false;
    return true;
  }
  for (let i = 1; i < keys.length; i++) if (compare(keys[i - 1] as string, keys[i] as string) >= 0) return false;
  return true;
}
