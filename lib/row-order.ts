// The order of a pool's instance table: by providerID, the numbers in it compared as numbers ("…/9" before
// "…/10"). The store keeps the current table one row apart from the next and restores this order on reading,
// so it must be a total order: IDs the collator holds equal are ordered by their code units.

const collator = new Intl.Collator('en', { numeric: true });

export function compareRowKeys(a: string, b: string): number {
  return collator.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);
}

/** Whether keys are in the table's order, each once. */
export function inRowOrder(keys: readonly string[]): boolean {
  for (let i = 1; i < keys.length; i++) if (compareRowKeys(keys[i - 1] as string, keys[i] as string) >= 0) return false;
  return true;
}
