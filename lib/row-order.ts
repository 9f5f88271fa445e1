// The order of a pool's tables of rows. The store keeps the current tables one row apart from the next and
// restores their order on reading, so each must be a total order on the rows' keys.
//
// The instance table: by providerID, the numbers in it compared as numbers ("…/9" before "…/10"); IDs the
// collator holds equal are ordered by their code units. The drift items: by key (`<kind>:<join key>`), as code
// units — sorting 60 keys with the collator would cost ten times as much at every analysis, and the UI shows
// them in an order of its own.

const collator = new Intl.Collator('en', { numeric: true });

export function compareRowKeys(a: string, b: string): number {
  return collator.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);
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
