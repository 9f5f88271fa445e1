// Azure's side of the living world: a scale set brought to its capacity (VMs created, or scaled in highest
// instance id first), each VM's provisioning or deletion completed when due, and the scale set's state and
// long-running operations settled.

import { providerIdFromArmId } from '../../lib/provider-id';
import type { Rest, ScaleSetRecord } from '../azure/state';
import { vmKey, type WorldState } from './world-state';

export function azureScaleSet(w: WorldState, rec: ScaleSetRecord): void {
  const state = w.azure.state;
  const now = w.now();
  const vms = [...rec.vms.values()];
  const stateOf = (vm: Rest) => String((vm.properties as Record<string, unknown>).provisioningState);
  const active = vms.filter((v) => stateOf(v) !== 'Deleting');
  const capacity = state.capacity(rec);
  const ssKey = String(rec.body.id).toLowerCase();
  for (let i = active.length; i < capacity; i++) {
    const vm = state.addVm(rec, { provisioningState: 'Creating', powerState: 'starting', createdAt: w.iso() });
    const pending = w.pendingFailures.get(ssKey);
    let failWith: string | undefined;
    if (pending && pending.count > 0) {
      failWith = pending.errorCode;
      if (--pending.count === 0) w.pendingFailures.delete(ssKey);
    }
    w.plans.set(vmKey(vm), {
      dueAt: now + w.delays.provision * 1000,
      failWith,
      joins: !w.noJoin.has(ssKey),
    });
  }
  if (active.length > capacity) {
    // Azure scales in the highest instance ids first (default scale-in policy).
    const victims = [...active]
      .sort((a, b) => Number(b.instanceId ?? 0) - Number(a.instanceId ?? 0))
      .slice(0, active.length - capacity);
    for (const vm of victims) {
      w.scaledIn.add(providerIdFromArmId(String(vm.virtualMachineResourceId ?? vm.id)));
      state.setVmState(vm, 'Deleting', 'stopping');
      w.plans.set(vmKey(vm), { dueAt: now + w.delays.delete * 1000, joins: false });
    }
  }
  for (const vm of [...rec.vms.values()]) {
    const plan = w.plans.get(vmKey(vm));
    if (!plan || plan.dueAt > now) continue;
    const s = stateOf(vm);
    if (s === 'Creating') {
      if (plan.failWith)
        state.setVmState(vm, 'Failed', 'running', {
          code: plan.failWith,
          message: `Provisioning failed: ${plan.failWith}.`,
        });
      else state.setVmState(vm, 'Succeeded', 'running');
      plan.dueAt = now + w.delays.join * 1000;
    } else if (s === 'Deleting') {
      state.deleteVm(rec, String(vm.instanceId ?? vm.name));
      w.plans.delete(vmKey(vm));
    }
  }
  settleScaleSet(w, rec, capacity, stateOf);
}

/** The scale set's provisioning state from its VMs', and its operations ended once it is no longer Updating. */
function settleScaleSet(w: WorldState, rec: ScaleSetRecord, capacity: number, stateOf: (vm: Rest) => string): void {
  const state = w.azure.state;
  const states = [...rec.vms.values()].map(stateOf);
  const target = states.some((s) => s === 'Creating' || s === 'Deleting')
    ? 'Updating'
    : states.some((s) => s === 'Failed')
      ? 'Failed'
      : 'Succeeded';
  const current = String((rec.body.properties as Record<string, unknown>).provisioningState);
  if (current !== target && !(current === 'Updating' && rec.vms.size !== capacity))
    state.setProvisioningState(rec, target);
  if (target !== 'Updating') {
    for (const op of state.operations.values()) {
      if (
        op.scaleSetKey === `${rec.subscriptionId}/${rec.resourceGroup}/${rec.name}`.toLowerCase() &&
        op.status === 'InProgress'
      ) {
        op.status = target === 'Failed' ? 'Failed' : 'Succeeded';
        op.endTime = new Date().toISOString();
      }
    }
  }
}
