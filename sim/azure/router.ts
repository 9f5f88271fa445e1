// Routing an authenticated ARM request: the api-version check every request passes (against its resource
// provider's versions), then the path matched segment by segment (case-insensitively, as ARM matches) to the scale
// set, VM and standalone VM routes (Microsoft.Compute) or the agent pool routes (Microsoft.ContainerService).

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ArmCall, ArmServer } from './arm-call';
import { ArmError, methodNotAllowed, noRoute } from './arm-http';
import { getAgentPool, getManagedCluster, listAgentPools, listMachines } from './routes-agent-pools';
import { listStandaloneVms } from './routes-standalone-vms';
import { getOperation, getScaleSet, listAllScaleSets, listScaleSets, updateScaleSet } from './routes-scale-sets';
import { getVm, getVmInstanceView, listVms } from './routes-vms';

/** api-versions Microsoft.Compute serves for these operations (a subset; unknown ones get 400). */
const API_VERSIONS = new Set([
  '2021-03-01',
  '2021-07-01',
  '2021-11-01',
  '2022-03-01',
  '2022-08-01',
  '2022-11-01',
  '2023-03-01',
  '2023-07-01',
  '2023-09-01',
  '2024-03-01',
  '2024-07-01',
  '2024-11-01',
  '2025-04-01',
  '2025-11-01',
  '2026-03-01',
]);

/** api-versions Microsoft.ContainerService serves for agent pools (a subset: the SDKs' defaults and CAPZ's ASO's). */
const AKS_API_VERSIONS = new Set(['2024-09-01', '2025-08-01', '2025-10-01', '2026-01-01', '2026-04-01', '2026-06-01']);

function apiVersionOf(url: URL, versions: Set<string>): string {
  const apiVersion = url.searchParams.get('api-version');
  if (!apiVersion)
    throw new ArmError(
      400,
      'MissingApiVersionParameter',
      'The api-version query parameter (?api-version=) is required for all requests.',
    );
  if (!versions.has(apiVersion)) {
    throw new ArmError(
      400,
      'InvalidApiVersionParameter',
      `The api-version '${apiVersion}' is invalid. The supported versions are '${[...versions].join(',')}'.`,
    );
  }
  return apiVersion;
}

/** Answers an ARM request (a path under /subscriptions/) whose caller is already authenticated. */
export async function routeArm(arm: ArmServer, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const seg = url.pathname.split('/').filter(Boolean);
  const lower = seg.map((s) => s.toLowerCase());
  const aks = lower[2] === 'resourcegroups' && lower[4] === 'providers' && lower[5] === 'microsoft.containerservice';
  const apiVersion = apiVersionOf(url, aks ? AKS_API_VERSIONS : API_VERSIONS);
  const call: ArmCall = { req, res, url, method: req.method ?? 'GET', apiVersion, seg, lower, sub: seg[1] as string };

  // /subscriptions/{sub}/providers/Microsoft.Compute/locations/{loc}/operations/{id}
  if (
    lower[2] === 'providers' &&
    lower[3] === 'microsoft.compute' &&
    lower[4] === 'locations' &&
    lower[6] === 'operations' &&
    seg.length === 8
  )
    return getOperation(arm, call);
  // /subscriptions/{sub}/providers/Microsoft.Compute/virtualMachineScaleSets
  if (
    lower[2] === 'providers' &&
    lower[3] === 'microsoft.compute' &&
    lower[4] === 'virtualmachinescalesets' &&
    seg.length === 5 &&
    call.method === 'GET'
  )
    return listAllScaleSets(arm, call);
  if (aks) return routeAks(arm, call, seg[3] as string);
  if (lower[2] !== 'resourcegroups' || lower[4] !== 'providers' || lower[5] !== 'microsoft.compute')
    throw noRoute(url.pathname);
  const rg = seg[3] as string;

  // Flexible members: /subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Compute/virtualMachines
  if (lower[6] === 'virtualmachines' && seg.length === 7 && call.method === 'GET')
    return listStandaloneVms(arm, call, rg);
  if (lower[6] !== 'virtualmachinescalesets') throw noRoute(url.pathname);
  if (seg.length === 7) {
    if (call.method !== 'GET') throw methodNotAllowed();
    return listScaleSets(arm, call, rg);
  }
  return routeScaleSet(arm, call, rg);
}

/** …/resourceGroups/{rg}/providers/Microsoft.Compute/virtualMachineScaleSets/{name}[/virtualMachines[/{id}[/instanceView]]] */
async function routeScaleSet(arm: ArmServer, call: ArmCall, rg: string): Promise<void> {
  const { seg, lower, method } = call;
  // An AKS VirtualMachines pool's VMs are kept as a scale set that Compute does not show.
  const found = arm.state.get(call.sub, rg, seg[7] as string);
  const rec = found?.standalone ? undefined : found;
  if (seg.length === 8) {
    if (method === 'GET') return getScaleSet(arm, call, rg, rec);
    if (method === 'PATCH') return updateScaleSet(arm, call, rg, rec);
    throw methodNotAllowed();
  }
  if (lower[8] !== 'virtualmachines' || method !== 'GET') throw noRoute(call.url.pathname);
  if (seg.length === 9) return listVms(arm, call, rg, rec);
  const vm = rec ? arm.state.findVm(rec, seg[9] as string) : undefined;
  if (seg.length === 10) return getVm(arm, call, rg, rec, vm);
  if (seg.length === 11 && lower[10] === 'instanceview') return getVmInstanceView(arm, call, rg, rec, vm);
  throw noRoute(call.url.pathname);
}

/** …/resourceGroups/{rg}/providers/Microsoft.ContainerService/managedClusters/{mc}[/agentPools[/{pool}[/machines]]] */
async function routeAks(arm: ArmServer, call: ArmCall, rg: string): Promise<void> {
  const { seg, lower, method } = call;
  const cluster = seg[7] as string;
  if (lower[6] !== 'managedclusters' || seg.length < 8 || seg.length > 11) throw noRoute(call.url.pathname);
  if (seg.length > 8 && lower[8] !== 'agentpools') throw noRoute(call.url.pathname);
  if (seg.length === 11 && lower[10] !== 'machines') throw noRoute(call.url.pathname);
  if (method !== 'GET') throw methodNotAllowed();
  if (seg.length === 8) return getManagedCluster(arm, call, rg, cluster);
  if (seg.length === 11) return listMachines(arm, call, rg, cluster);
  return seg.length === 9 ? listAgentPools(arm, call, rg, cluster) : getAgentPool(arm, call, rg, cluster);
}
