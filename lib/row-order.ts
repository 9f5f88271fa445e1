// The order of a pool's tables of rows. The store keeps the current tables one row apart from the next and
// restores their order on reading, so each must be a total order on the rows' keys.
//
// The instance table: by providerID, the numbers in it compared as numbers ("…/9" before "…/10"); IDs the
// collator holds equal are ordered by their code units. The drift items: by key (`<kind>:<join key>`), as code
// units — sorting 60 keys with the collator would cost ten times as much at every analysis, and the UI shows
// them in an order of its own.

const collator = new Intl.Collator('en', { numeric: true });

export function compareRowKeys(a: string, b: string): number {
  return sameParentOrder(a, b) || collatorRowOrder(a, b);
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

/**
 * The shortcut for the common case — two instances of one scale set, `…/virtualMachines/<n>` — that gives the
 * collator's answer without asking it (a pool's sort made a hundred collator calls of two 130-character IDs per
 * analysis): the same text up to the last `/` collates the same, so the numbers after it decide. 0 (ask the
 * collator) when the parents differ, a tail is not a number, or the numbers are equal ("01" and "1").
 */
function sameParentOrder(a: string, b: string): number {
  const i = a.lastIndexOf('/');
  if (i < 0 || b.lastIndexOf('/') !== i) return 0;
  const x = numericTail(a, i + 1);
  const y = numericTail(b, i + 1);
  if (x < 0 || y < 0 || x === y) return 0;
  for (let k = i - 1; k >= 0; k--) if (a.charCodeAt(k) !== b.charCodeAt(k)) return 0;
  return x < y ? -1 : 1;
}

export function compareDriftKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Each table's order, by the table's name in a pool's state. */
export const TABLE_ORDER = { instances: compareRowKeys, drift: compareDriftKeys } as const;

/** Whether keys are in an order, each once (by default the instance table's). */
export function inRowOrder(keys: readonly string[], compare: (a: string, b: string) => number = compareRowKeys): boolean {
  for (let i = 1; i < keys.length; i++) if (compare(keys[i - 1] as string, keys[i] as string) >= 0) return false;
  return true;
}
