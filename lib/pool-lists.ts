// What the two providerID lists and CAPI's readiness gate say of a pool: whether the gate is closed, and what
// copying the infra pool's list (the AzureMachinePool's, or an AKS pool's infra object's) into the MachinePool
// would change. Read by the diagnosis, the resync verdict and the resync itself.

import type { PoolModel } from './pool-model';

/** The infra pool's list: the AzureMachinePool's, or an AKS pool's infra object's; null without one. */
export function infraList(model: PoolModel): readonly string[] | null {
  return model.amp?.providerIDList ?? model.aks?.infra?.providerIDList ?? null;
}

/** The infra pool's status.ready (null when unset, or without an infra object). */
export function infraReady(model: PoolModel): boolean | null {
  return model.amp?.ready ?? model.aks?.infra?.ready ?? null;
}

/**
 * Whether CAPI's readiness gate is closed: `external.IsReady` reads only `status.ready`, of whichever infra kind
 * (docs/domain.md, "The readiness gate").
 */
export function gateClosed(model: PoolModel): boolean {
  return infraList(model) !== null && infraReady(model) !== true;
}

const EMPTY: readonly string[] = [];

/** The IDs `to` has and `from` lacks (`add`), and the reverse (`remove`), each once, in list order. */
export function idDiff(from: readonly string[], to: readonly string[]): { add: string[]; remove: string[] } {
  const inFrom = new Set(from);
  const inTo = new Set(to);
  return {
    add: [...new Set(to.filter((id) => !inFrom.has(id)))],
    remove: [...new Set(from.filter((id) => !inTo.has(id)))],
  };
}

/**
 * The last diff per MachinePool list, with the AzureMachinePool list it was taken against: an analysis asks up to
 * three times, and the collector's next analyses of the pool mostly see the same two lists (lib/pool-model reads
 * an object's list once). Lists are not changed once read.
 */
const listDiffs = new WeakMap<
  readonly string[],
  { to: readonly string[]; diff: { add: string[]; remove: string[] } }
>();

/** What copying the infra pool's list into the MachinePool would add and remove. */
export function listDiff(model: PoolModel): { add: string[]; remove: string[] } {
  const from = model.mp.providerIDList;
  const to = infraList(model) ?? EMPTY;
  const hit = listDiffs.get(from);
  if (hit?.to === to) return hit.diff;
  const diff = idDiff(from, to);
  listDiffs.set(from, { to, diff });
  return diff;
}

/** Whether the two lists differ as sets (CAPI would change the MachinePool list if it could). */
export function listsDiffer(model: PoolModel): boolean {
  if (infraList(model) === null) return false;
  const { add, remove } = listDiff(model);
  return add.length > 0 || remove.length > 0;
}
