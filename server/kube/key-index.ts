// Indexes of names by a key — a set per key, dropped once empty — which the lookups of a context's objects by
// pool, cluster and scale set are made of.

export function addTo(index: Map<string, Set<string>>, k: string, name: string): void {
  const set = index.get(k);
  if (set) set.add(name);
  else index.set(k, new Set([name]));
}

export function removeFrom(index: Map<string, Set<string>>, k: string, name: string): void {
  const set = index.get(k);
  if (!set) return;
  set.delete(name);
  if (set.size === 0) index.delete(k);
}
