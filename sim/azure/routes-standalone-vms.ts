// The standalone VM list (…/resourceGroups/{rg}/providers/Microsoft.Compute/virtualMachines): Flexible scale sets'
// members are ordinary virtual machines, listed by resource group and filtered by `virtualMachineScaleSet/id`.

import { asStandaloneVm, page, shapeVm } from './answers';
import { enter, type ArmCall, type ArmServer } from './arm-call';
import { ArmError } from './arm-http';
import { charge } from './charge';

/** GET /subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Compute/virtualMachines */
export async function listStandaloneVms(arm: ArmServer, call: ArmCall, rg: string): Promise<void> {
  if (await enter(arm, call, 'vm.listByResourceGroup')) return;
  const { url, sub } = call;
  const filter = url.searchParams.get('$filter');
  const fm = filter ? /^'?virtualMachineScaleSet\/id'?\s+eq\s+'([^']+)'$/i.exec(filter.trim()) : null;
  if (filter && !fm)
    throw new ArmError(400, 'InvalidParameter', `The value of parameter $filter is invalid: ${filter}`);
  const recs = arm.state
    .listByResourceGroup(sub, rg)
    .filter((r) => !fm || String(r.body.id).toLowerCase() === (fm[1] as string).toLowerCase());
  const expand = url.searchParams.get('$expand') === 'instanceView';
  const items = recs
    .filter((r) => arm.state.orchestrationMode(r) === 'Flexible')
    .flatMap((r) => [...r.vms.values()].map((vm) => shapeVm(asStandaloneVm(r, vm), expand)));
  const headers = charge(
    arm.throttler,
    { subscriptionId: sub, location: recs[0]?.location ?? 'global' },
    ['VMScaleSetVMViews3Min'],
    false,
  );
  page(arm, call, items, headers);
}
