// What a deleted VM's objects leave in lib/'s process-wide tables is dropped with them. The tables are bounded
// and start afresh when full, but their bounds are set for the largest fleets: at 100k VMs the shared strings'
// table held 116k strings after the collector benchmark's window; reaching its 500k would take ~5 hours of the
// benchmark's churn (1% of VMs a minute), holding meanwhile the ID and Node name of every VM gone (by estimate
// ~300 bytes each with the parse and place kept of the ID: up to ~90 MB of heap).
//
// A string taken out of the table may still be held by another live object (a list that still names a ghost, a
// Machine whose Node went): the next object parsed with it interns a copy of its own, so there are at most two.

import type { PoolInput } from './pool-model';
import type { KubeObject } from './unstructured';
import { forgetParse } from './provider-id';
import { forgetPlace } from './row-order';
import { forgetInterned, SlimAmpm, SlimInstance, SlimMachine, SlimNode } from './slim';

/**
 * Forgets what a deleted object leaves: an AMPM's, Machine's or Node's providerID and Node name, a MachinePool's
 * or AzureMachinePool's list of IDs (other objects are left alone).
 */
export function forgetInstance(o: KubeObject): void {
  if (!(o instanceof SlimInstance)) {
    forgetDropped(o, undefined);
    return;
  }
  if (o.providerID !== undefined) forgetProviderId(o.providerID);
  forgetInterned(
    o instanceof SlimNode ? o.name : o instanceof SlimAmpm || o instanceof SlimMachine ? o.nodeRef : undefined,
  );
}

/**
 * Forgets a providerID: its shared string, parse and place. For a VM gone from its scale set as well as for its
 * deleted objects, since whichever of them goes last (an analysis reads the ID until then) leaves it behind.
 */
function forgetProviderId(id: string): void {
  forgetInterned(id);
  forgetParse(id);
  forgetPlace(id);
}

/**
 * Forgets the IDs an update of a MachinePool's or AzureMachinePool's `spec.providerIDList` dropped (`after`:
 * the object that replaced `before`, none when it was deleted). A gone VM's ID is often last read from such a
 * list — a frozen MachinePool's ghost outlives its AMPM, Machine, Node and Azure read — so without this its
 * parse and place stayed until the tables reached their bounds. A list kept as it was (lib/slim keeps the array)
 * costs nothing.
 */
export function forgetDropped(before: KubeObject, after: KubeObject | undefined): void {
  const was = before.spec?.providerIDList;
  const now = after?.spec?.providerIDList;
  if (Array.isArray(was) && was !== now) forgetMissing(was, Array.isArray(now) ? now : []);
}

/** Forgets the providerIDs in `was` that `now` does not have. */
function forgetMissing(was: readonly unknown[], now: readonly unknown[]): void {
  if (!was.length) return;
  const kept = new Set(now);
  for (const id of was) if (typeof id === 'string' && !kept.has(id)) forgetProviderId(id);
}

/** Forgets the providerIDs of the VMs a scale set's earlier read had and its new one has not (`after`: none when it is gone). */
export function forgetGoneVms(before: PoolInput['azure'] | undefined, after: PoolInput['azure'] | undefined): void {
  const ids = (a: PoolInput['azure'] | undefined) =>
    a?.state === 'normalised' && a.azure.state === 'ok' ? a.azure.instances.map((i) => i.providerID) : [];
  forgetMissing(ids(before), ids(after));
}
