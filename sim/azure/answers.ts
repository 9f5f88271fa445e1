// Shaping ARM's answers from the stored REST objects: a VM with or without its instance view, a Flexible member
// as a standalone virtual machine, and lists cut into pages linked by `nextLink`.

import type { ArmCall, ArmServer } from './arm-call';
import { send } from './arm-http';
import type { Rest, ScaleSetRecord } from './state';

/** The VM as stored (with its instance view), or without the instance view when the caller did not ask for it. */
export function shapeVm(vm: Rest, withInstanceView: boolean): Rest {
  if (withInstanceView) return vm;
  const { instanceView: _iv, ...props } = vm.properties as Record<string, unknown>;
  return { ...vm, properties: props };
}

/** The VM as a standalone `Microsoft.Compute/virtualMachines` resource (Flexible members). */
export function asStandaloneVm(rec: ScaleSetRecord, vm: Rest): Rest {
  const id = String(vm.virtualMachineResourceId ?? vm.id);
  const { virtualMachineResourceId: _v, instanceId: _i, ...rest } = structuredClone(vm);
  return {
    ...rest,
    id,
    type: 'Microsoft.Compute/virtualMachines',
    properties: { ...(rest.properties as object), virtualMachineScaleSet: { id: rec.body.id } },
  } as Rest;
}

/** Answers one page of `items`, from `$skiptoken` on, with a `nextLink` when more follow. */
export function page(arm: ArmServer, call: ArmCall, items: unknown[], headers: Record<string, string>): void {
  const size = arm.pageSize();
  const skip = Number(call.url.searchParams.get('$skiptoken') ?? 0) || 0;
  const slice = items.slice(skip, skip + size);
  const body: Record<string, unknown> = { value: slice };
  if (skip + size < items.length) {
    const next = new URL(call.url.toString());
    next.searchParams.set('$skiptoken', String(skip + size));
    body.nextLink = `${arm.baseUrl()}${next.pathname}${next.search}`;
  }
  send(call.res, 200, body, headers);
}
