// The `fleet` generator: N management clusters × M pools × K instances over S subscriptions and R regions,
// with a churn rate (instances replaced per simulated minute), for benchmarks and load tests.

import { aksAzureOf, buildAksPool, type AksPoolSpec } from '../../lib/fixtures/aks-pool';
import { buildPool, healthyInstances } from '../../lib/fixtures/pool';
import { NOW } from '../../lib/fixtures/objects';
import type { KubeObject } from '../../lib/unstructured';
import type { CapzBehaviour } from './capz-behaviour';
import { shiftTimes, type Scenario } from './scenario';

export interface FleetOptions {
  clusters: number;
  poolsPerCluster: number;
  instancesPerPool: number;
  subscriptions?: number;
  regions?: string[];
  /** Fraction of all instances replaced (deleted out of band, recreated by the controllers) per simulated minute. */
  churnPerMinute?: number;
  /** The churn spread over each minute (a second's share every second) instead of all at the minute. */
  churnSpread?: boolean;
  capz?: CapzBehaviour;
  controllers?: boolean;
  speed?: number;
  /**
   * AKS pools per management cluster, in an AKS cluster of its own (`aks-<c>`): AzureManagedMachinePools and
   * AzureASOManagedMachinePools in turn, each with its agent pool in AKS (all in one subscription, the AKS budget
   * they share) and its scale set in the node resource group. They stand as made: the world does not move them.
   */
  aksPoolsPerCluster?: number;
}

export function parseFleetSpec(spec: string): FleetOptions {
  const [dims, ...opts] = spec.split(',');
  const m = /^(\d+)x(\d+)x(\d+)$/.exec(dims ?? '');
  if (!m)
    throw new Error(
      `fleet spec must look like 50x20x100[,subs=10,regions=westeurope+northeurope,churn=0.01,spread,aks=2], got "${spec}"`,
    );
  const out: FleetOptions = { clusters: Number(m[1]), poolsPerCluster: Number(m[2]), instancesPerPool: Number(m[3]) };
  for (const o of opts) {
    const [k, v = ''] = o.split('=');
    if (k === 'subs') out.subscriptions = Number(v);
    else if (k === 'regions') out.regions = v.split('+');
    else if (k === 'churn') out.churnPerMinute = Number(v);
    else if (k === 'capz') out.capz = v as CapzBehaviour;
    else if (k === 'static') out.controllers = false;
    else if (k === 'spread') out.churnSpread = true;
    else if (k === 'aks') out.aksPoolsPerCluster = Number(v);
    else throw new Error(`unknown fleet option "${k}"`);
  }
  return out;
}

/** A deterministic subscription id for index i. */
function subscriptionId(i: number): string {
  const h = (i + 1).toString(16).padStart(12, '0');
  return `f1ee7000-0000-4000-8000-${h}`;
}

export function fleetScenario(o: FleetOptions, now = Date.now()): Scenario {
  const regions = o.regions ?? ['westeurope', 'northeurope'];
  const subs = o.subscriptions ?? 1;
  const scenario: Scenario = {
    file: `fleet:${o.clusters}x${o.poolsPerCluster}x${o.instancesPerPool}`,
    name: 'fleet',
    description: `${o.clusters} clusters × ${o.poolsPerCluster} pools × ${o.instancesPerPool} instances over ${subs} subscriptions in ${regions.length} regions`,
    controllers: o.controllers ?? true,
    aksControllers: false,
    capz: o.capz ?? 'main',
    speed: o.speed ?? 1,
    delays: {},
    management: new Map(),
    workload: new Map(),
    azure: [],
    aksAgentPools: [],
    throttled: [],
    unreachable: [],
    steps: [],
    churnPerMinute: o.churnPerMinute ?? 0,
    ...(o.churnSpread ? { churnSpread: true } : {}),
  };
  const shift = now - Date.parse(NOW);
  for (let c = 0; c < o.clusters; c++) {
    const mgmt = `mgmt-${c}`;
    const cluster = `wl-${c}`;
    // Every subscription in every region: with c mod R, an even S would put each subscription in one region (and
    // the Azure budgets, per subscription+region, would be half as many).
    const az = {
      subscriptionId: subscriptionId(c % subs),
      resourceGroup: `rg-${cluster}`,
      location: regions[Math.floor(c / subs) % regions.length] as string,
    };
    const objects: KubeObject[] = [];
    const nodes: KubeObject[] = [];
    for (let p = 0; p < o.poolsPerCluster; p++) {
      const { input } = buildPool({
        cluster,
        name: `pool${p}`,
        az,
        replicas: o.instancesPerPool,
        instances: healthyInstances(o.instancesPerPool),
        capzVersion: 'main',
      });
      const i = shiftTimes(input, shift);
      if (p === 0 && i.cluster) objects.push(i.cluster);
      objects.push(
        i.machinePool,
        i.azureMachinePool as KubeObject,
        ...(i.azureMachinePoolMachines ?? []),
        ...(i.machines ?? []),
      );
      if (i.workload?.state === 'ok') nodes.push(...i.workload.nodes);
      if (i.azure?.state === 'ok')
        scenario.azure.push({
          vmss: i.azure.vmss as Record<string, unknown>,
          vms: i.azure.vms as Record<string, unknown>[],
        });
    }
    scenario.management.set(mgmt, objects);
    scenario.workload.set(cluster, nodes);
    addAksPools(scenario, c, o, shift);
  }
  return scenario;
}

/** Management cluster `c`'s AKS pools (FleetOptions.aksPoolsPerCluster), in AKS cluster `aks-<c>`. */
function addAksPools(scenario: Scenario, c: number, o: FleetOptions, shift: number): void {
  const n = o.aksPoolsPerCluster ?? 0;
  if (n <= 0) return;
  const clusterName = `aks-${c}`;
  const mgmt = scenario.management.get(`mgmt-${c}`) as KubeObject[];
  const nodes: KubeObject[] = [];
  const members = Array.from({ length: o.instancesPerPool }, (_, i) => i);
  for (let p = 0; p < n; p++) {
    const spec: AksPoolSpec = {
      flavour: p % 2 === 0 ? 'aks-managed' : 'aks-aso',
      clusterName,
      name: `aks${p}`,
      agentPool: `ap${p}`,
      mpList: members,
    };
    const i = shiftTimes(buildAksPool(spec), shift);
    if (p === 0 && i.cluster) mgmt.push(i.cluster);
    mgmt.push(i.machinePool, ...[i.aks?.infra, i.aks?.asoAgentPool].filter((x): x is KubeObject => !!x));
    if (i.workload?.state === 'ok') nodes.push(...i.workload.nodes);
    const azure = aksAzureOf(spec);
    scenario.aksAgentPools.push(azure.agentPool);
    scenario.azure.push(azure.scaleSet);
  }
  scenario.workload.set(clusterName, nodes);
}
