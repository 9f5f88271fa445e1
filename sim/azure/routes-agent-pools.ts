// The AKS routes (Microsoft.ContainerService): GET a managed cluster, GET one agent pool and list a managed cluster's,
// and list an agent pool's machines, as AKS answers them. Read-only, as poolscope uses them; each read is charged to
// the subscription's AKS budget.

import { enter, type ArmCall, type ArmServer } from './arm-call';
import { page } from './answers';
import { ArmError, send } from './arm-http';
import { charge } from './charge';

/** AKS's per-subscription budget is not regional: its bucket is keyed by this in place of a region. */
const AKS_BUDGET = 'aks';

function aksNotFound(what: string, name: string, rg: string): ArmError {
  return new ArmError(
    404,
    'ResourceNotFound',
    `The Resource 'Microsoft.ContainerService/${what}/${name}' under resource group '${rg}' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix`,
  );
}

/** GET …/managedClusters/{mc}: the cluster, its agent pool profiles taken from its agent pools as they stand. */
export async function getManagedCluster(arm: ArmServer, call: ArmCall, rg: string, cluster: string): Promise<void> {
  if (await enter(arm, call, 'managedClusters.get')) return;
  const rec = arm.state.getManagedCluster(call.sub, rg, cluster);
  const headers = charge(arm.throttler, { subscriptionId: call.sub, location: AKS_BUDGET }, ['AksReads'], false);
  if (!rec) throw aksNotFound('managedClusters', cluster, rg);
  const profiles = arm.state.listAgentPools(call.sub, rg, cluster).map((p) => ({
    name: p.name,
    ...(p.body.properties as Record<string, unknown>),
  }));
  const props = rec.body.properties as Record<string, unknown>;
  send(call.res, 200, { ...rec.body, properties: { ...props, agentPoolProfiles: profiles } }, headers);
}

/** GET …/managedClusters/{mc}/agentPools/{pool} */
export async function getAgentPool(arm: ArmServer, call: ArmCall, rg: string, cluster: string): Promise<void> {
  if (await enter(arm, call, 'agentPools.get')) return;
  const name = call.seg[9] as string;
  const rec = arm.state.getAgentPool(call.sub, rg, cluster, name);
  const headers = charge(arm.throttler, { subscriptionId: call.sub, location: AKS_BUDGET }, ['AksReads'], false);
  if (!rec) throw aksNotFound('managedClusters/agentPools', `${cluster}/${name}`, rg);
  send(call.res, 200, rec.body, headers);
}

/** GET …/managedClusters/{mc}/agentPools */
export async function listAgentPools(arm: ArmServer, call: ArmCall, rg: string, cluster: string): Promise<void> {
  if (await enter(arm, call, 'agentPools.list')) return;
  const recs = arm.state.listAgentPools(call.sub, rg, cluster);
  const headers = charge(arm.throttler, { subscriptionId: call.sub, location: AKS_BUDGET }, ['AksReads'], false);
  if (recs.length === 0) throw aksNotFound('managedClusters', cluster, rg);
  send(call.res, 200, { value: recs.map((r) => r.body) }, headers);
}

/** GET …/managedClusters/{mc}/agentPools/{pool}/machines: a page of the pool's machines (`nextLink` for more). */
export async function listMachines(arm: ArmServer, call: ArmCall, rg: string, cluster: string): Promise<void> {
  if (await enter(arm, call, 'machines.list')) return;
  const name = call.seg[9] as string;
  const rec = arm.state.getAgentPool(call.sub, rg, cluster, name);
  const headers = charge(arm.throttler, { subscriptionId: call.sub, location: AKS_BUDGET }, ['AksReads'], false);
  if (!rec) throw aksNotFound('managedClusters/agentPools', `${cluster}/${name}`, rg);
  page(arm, call, arm.state.machinesOf(rec), headers);
}
