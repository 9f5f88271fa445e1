// The routes for a scale set's VMs (…/virtualMachineScaleSets/{name}/virtualMachines): the paged list with the
// `$expand`, `$select` and `$filter` values Compute accepts there, one VM, and one VM's instance view.

import { page, shapeVm } from './answers';
import { enter, type ArmCall, type ArmServer } from './arm-call';
import { ArmError, notFound, send } from './arm-http';
import { charge } from './charge';
import type { Rest, ScaleSetRecord } from './state';

/** The list's query: which VMs it keeps and whether they carry their instance views; 400 for what Compute refuses. */
function listQuery(url: URL): { keep: (vm: Rest) => boolean; withView: boolean } {
  const expand = url.searchParams.get('$expand');
  if (expand && expand !== 'instanceView')
    throw new ArmError(400, 'InvalidParameter', `The value of parameter $expand is invalid: ${expand}`);
  const select = url.searchParams.get('$select');
  if (select && select !== 'instanceView' && select !== 'instanceView/statuses')
    throw new ArmError(400, 'InvalidParameter', `The value of parameter $select is invalid: ${select}`);
  let keep = (_vm: Rest) => true;
  const filter = url.searchParams.get('$filter')?.trim();
  if (filter) {
    const lm = /^properties\/latestModelApplied\s+eq\s+(true|false)$/i.exec(filter);
    const ps = /^startswith\(\s*instanceView\/statuses\/code\s*,\s*'PowerState'\s*\)\s+eq\s+true$/i.exec(filter);
    if (lm)
      keep = (v) =>
        String((v.properties as { latestModelApplied?: boolean }).latestModelApplied) ===
        (lm[1] as string).toLowerCase();
    else if (!ps) throw new ArmError(400, 'InvalidParameter', `The value of parameter $filter is invalid: ${filter}`);
  }
  const withView = expand === 'instanceView' || !!select || /PowerState/i.test(filter ?? '');
  return { keep, withView };
}

/** GET …/virtualMachineScaleSets/{name}/virtualMachines; `rec` was looked up before any injected delay. */
export async function listVms(
  arm: ArmServer,
  call: ArmCall,
  rg: string,
  rec: ScaleSetRecord | undefined,
): Promise<void> {
  if (await enter(arm, call, 'vms.list')) return;
  if (!rec) throw notFound('virtualMachineScaleSets', call.seg[7] as string, rg);
  const { keep, withView } = listQuery(call.url);
  const items = [...rec.vms.values()].filter(keep);
  const headers = charge(arm.throttler, rec, ['VMScaleSetVMViews3Min'], true);
  page(
    arm,
    call,
    items.map((v) => shapeVm(v, withView)),
    headers,
  );
}

/** GET …/virtualMachines/{instanceId}; `rec` and `vm` were looked up before any injected delay. */
export async function getVm(
  arm: ArmServer,
  call: ArmCall,
  rg: string,
  rec: ScaleSetRecord | undefined,
  vm: Rest | undefined,
): Promise<void> {
  if (await enter(arm, call, 'vms.get')) return;
  if (!rec || !vm) throw notFound('virtualMachineScaleSets/virtualMachines', `${call.seg[7]}/${call.seg[9]}`, rg);
  const headers = charge(arm.throttler, rec, ['VMScaleSetVMViews3Min'], true);
  send(call.res, 200, shapeVm(vm, call.url.searchParams.get('$expand') === 'instanceView'), headers);
}

/** GET …/virtualMachines/{instanceId}/instanceView */
export async function getVmInstanceView(
  arm: ArmServer,
  call: ArmCall,
  rg: string,
  rec: ScaleSetRecord | undefined,
  vm: Rest | undefined,
): Promise<void> {
  if (await enter(arm, call, 'vms.instanceView')) return;
  if (!rec || !vm) throw notFound('virtualMachineScaleSets/virtualMachines', `${call.seg[7]}/${call.seg[9]}`, rg);
  const headers = charge(arm.throttler, rec, ['VMScaleSetVMViews3Min'], true);
  send(call.res, 200, (vm.properties as { instanceView?: unknown }).instanceView ?? {}, headers);
}
