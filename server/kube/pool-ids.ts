// The providerIDs a pool's Kubernetes objects name, and what its lists name outside its own scale set: worked out
// once per list, as both a pool's analysis (its Nodes) and Node churn (which pools it concerns) ask at every turn.

import { joinKey, scaleSetKeyOf } from '@/lib/provider-id';
import type { KubeObject } from '@/lib/unstructured';

/** The key of a scale set's resource group's flexible VMs (see scaleSetKeyOf), which a pool's Nodes may be. */
export function flexKeyOf(scaleSetKey: string): string {
  return `${scaleSetKey.slice(0, scaleSetKey.lastIndexOf('/'))}/~flex`;
}

/**
 * Per list: the join keys of its IDs outside a given scale set (and its flexible VMs), with that scale set.
 * A pool's list names its own scale set's VMs, whose Nodes its scale set finds: only the rest (usually none)
 * need looking up by ID, so no list's every ID is kept lower-cased.
 */
const listForeignKeys = new WeakMap<object, { scaleSet: string | null; keys: string[] }>();

export function foreignKeysOf(list: unknown, scaleSetKey: string | null): string[] {
  if (!Array.isArray(list)) return [];
  const hit = listForeignKeys.get(list);
  if (hit && hit.scaleSet === scaleSetKey) return hit.keys;
  const own = scaleSetKey === null ? [] : [scaleSetKey, flexKeyOf(scaleSetKey)];
  const keys = [
    ...new Set(
      list.filter((id): id is string => typeof id === 'string' && !own.includes(scaleSetKeyOf(id))).map(joinKey),
    ),
  ];
  listForeignKeys.set(list, { scaleSet: scaleSetKey, keys });
  return keys;
}

/** A providerID list's strings as a set, built once per list (like {@link foreignKeysOf}). */
const listRawIds = new WeakMap<object, Set<unknown>>();

export function rawIdsOf(list: unknown): Set<unknown> | null {
  if (!Array.isArray(list)) return null;
  let ids = listRawIds.get(list);
  if (!ids) {
    ids = new Set(list);
    listRawIds.set(list, ids);
  }
  return ids;
}

/**
 * Every providerID a pool's Kubernetes objects name: its two lists, and (`providerIdOf`) its AMPMs' and
 * Machines' IDs — read where they are used, not gathered into arrays at every analysis.
 */
export interface PoolIds {
  lists: unknown[];
  objects: readonly (readonly KubeObject[])[];
}

export function poolIds(mp: KubeObject, amp: KubeObject | null, ampms: KubeObject[], machines: KubeObject[]): PoolIds {
  return { lists: [mp.spec?.providerIDList, amp?.spec?.providerIDList], objects: [ampms, machines] };
}
