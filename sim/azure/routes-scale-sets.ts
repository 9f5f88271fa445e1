// The scale set routes: list by subscription and by resource group, get, the capacity PATCH, and the status of
// the long-running operation that PATCH starts (both its Azure-AsyncOperation and its Location URL).

import { enter, type ArmCall, type ArmServer } from './arm-call';
import { ArmError, notFound, readText, send } from './arm-http';
import { charge } from './charge';
import type { ScaleSetRecord } from './state';
import type { PolicyName } from './throttle';

const SCALE_SET_READS: PolicyName[] = ['HighCostGetVMScaleSet3Min', 'HighCostGetVMScaleSet30Min'];

/** /subscriptions/{sub}/providers/Microsoft.Compute/locations/{loc}/operations/{id} */
export function getOperation(arm: ArmServer, call: ArmCall): void {
  const { res, url } = call;
  const op = arm.state.operations.get(call.seg[7] as string);
  if (!op) throw new ArmError(404, 'NotFound', 'The operation was not found.');
  arm.count('operations.get');
  if (url.searchParams.get('monitor') === 'true') {
    // The Location URL: 202 while running, then the resource itself, as Compute answers it.
    const rec = arm.state.scaleSets.get(op.scaleSetKey);
    if (op.status === 'InProgress' || !rec) send(res, 202, {}, { 'Retry-After': '1', Location: url.toString() });
    else send(res, 200, rec.body);
    return;
  }
  send(res, 200, {
    startTime: op.startTime,
    ...(op.endTime ? { endTime: op.endTime } : {}),
    status: op.status,
    name: op.name,
  });
}

/** /subscriptions/{sub}/providers/Microsoft.Compute/virtualMachineScaleSets */
export async function listAllScaleSets(arm: ArmServer, call: ArmCall): Promise<void> {
  if (await enter(arm, call, 'vmss.listAll')) return;
  const recs = arm.state.listBySubscription(call.sub).filter((r) => !r.standalone);
  const headers = charge(
    arm.throttler,
    { subscriptionId: call.sub, location: recs[0]?.location ?? 'global' },
    SCALE_SET_READS,
    false,
  );
  send(call.res, 200, { value: recs.map((r) => r.body) }, headers);
}

/** /subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Compute/virtualMachineScaleSets */
export async function listScaleSets(arm: ArmServer, call: ArmCall, rg: string): Promise<void> {
  if (await enter(arm, call, 'vmss.listByResourceGroup')) return;
  const recs = arm.state.listByResourceGroup(call.sub, rg).filter((r) => !r.standalone);
  const headers = charge(
    arm.throttler,
    { subscriptionId: call.sub, location: recs[0]?.location ?? 'global' },
    SCALE_SET_READS,
    false,
  );
  send(call.res, 200, { value: recs.map((r) => r.body) }, headers);
}

/** GET …/virtualMachineScaleSets/{name}; `rec` was looked up before any injected delay. */
export async function getScaleSet(
  arm: ArmServer,
  call: ArmCall,
  rg: string,
  rec: ScaleSetRecord | undefined,
): Promise<void> {
  if (await enter(arm, call, 'vmss.get')) return;
  if (!rec) throw notFound('virtualMachineScaleSets', call.seg[7] as string, rg);
  const headers = charge(arm.throttler, rec, SCALE_SET_READS, true);
  send(call.res, 200, rec.body, headers);
}

/**
 * PATCH …/virtualMachineScaleSets/{name}: only `sku.capacity` is applied. A capacity change is a long-running
 * operation, announced by `Azure-AsyncOperation` and `Location`; the world completes it.
 */
export async function updateScaleSet(
  arm: ArmServer,
  call: ArmCall,
  rg: string,
  rec: ScaleSetRecord | undefined,
): Promise<void> {
  if (await enter(arm, call, 'vmss.update')) return;
  if (!rec) throw notFound('virtualMachineScaleSets', call.seg[7] as string, rg);
  const cap = await readCapacity(call);
  const op = cap === undefined ? null : arm.state.setCapacity(rec, cap);
  const opUrl = op
    ? `${arm.baseUrl()}/subscriptions/${rec.subscriptionId}/providers/Microsoft.Compute/locations/${rec.location}/operations/${op.id}?api-version=${call.apiVersion}`
    : '';
  send(call.res, 200, rec.body, op ? { 'Azure-AsyncOperation': opUrl, Location: `${opUrl}&monitor=true` } : {});
}

/** The PATCH body's `sku.capacity`, if it sets one, checked as Compute checks it. */
async function readCapacity(call: ArmCall): Promise<number | undefined> {
  const invalid = () =>
    new ArmError(400, 'InvalidRequestContent', 'The request content was invalid and could not be deserialized.');
  let body: unknown;
  try {
    body = JSON.parse(await readText(call.req));
  } catch {
    throw invalid();
  }
  // A scale set's PATCH body is an object (null, a number or a list is not one).
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid();
  const cap = (body as { sku?: { capacity?: unknown } }).sku?.capacity;
  if (cap !== undefined && (!Number.isInteger(cap) || (cap as number) < 0 || (cap as number) > 1000)) {
    throw new ArmError(
      400,
      'InvalidParameter',
      `The value ${String(cap)} of parameter 'sku.capacity' is out of range. The value must be between '0' and '1000', inclusive.`,
    );
  }
  return cap as number | undefined;
}
