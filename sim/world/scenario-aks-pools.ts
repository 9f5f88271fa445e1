// A scenario's AKS pools (`aksPools:`): an AzureManagedMachinePool's or AzureASOManagedMachinePool's pool as the
// unit fixtures describe one (lib/fixtures/aks-pool), built into its MachinePool, infra object, ASO agent pool
// object and labelled Nodes, with its agent pool and node resource group's scale set in Azure, and moved to the
// present. Unless the scenario says `aksControllers: true` (sim/world/world-aks.ts moves them then), each stands in
// the state its spec gives, which for the demo's are states that last (docs/domain.md, "AKS operator scenarios":
// K2 until ASO's resync, K5 until AKS succeeds).

import { hasNoScaleSet } from '../../lib/aks-model';
import { aksAzureOf, buildAksPool, type AksPoolSpec } from '../../lib/fixtures/aks-pool';
import { NOW } from '../../lib/fixtures/objects';
import { addObjects, addWorkload } from './scenario-pools';
import { isObj, shiftTimes, type Reader } from './scenario-types';

const FLAVOURS = ['aks-managed', 'aks-aso'];

/** Reads `aksPools:` into the scenario's clusters. */
export function readAksPools(rd: Reader): void {
  const pools = rd.root.aksPools;
  if (pools === undefined) return;
  if (!Array.isArray(pools)) rd.fail(['aksPools'], 'aksPools must be a list');
  (pools as unknown[]).forEach((p, i) => {
    if (!isObj(p) || typeof p.management !== 'string' || !isObj(p.spec))
      rd.fail(['aksPools', i], 'each AKS pool needs management (a cluster name) and spec');
    const spec = p.spec as unknown as AksPoolSpec;
    if (!FLAVOURS.includes(spec.flavour))
      rd.fail(['aksPools', i, 'spec', 'flavour'], `flavour must be one of ${FLAVOURS.join(', ')}`);
    if (!Array.isArray(spec.mpList)) rd.fail(['aksPools', i, 'spec'], 'mpList must be a list of instance numbers');
    let input;
    try {
      input = buildAksPool(spec);
    } catch (e) {
      rd.fail(['aksPools', i, 'spec'], `invalid AKS pool spec: ${(e as Error).message}`);
    }
    const shifted = shiftTimes(input, rd.now - Date.parse(NOW));
    addObjects(rd, p.management as string, shifted);
    addWorkload(rd, spec.clusterName ?? 'aks-weu', shifted);
    const azure = aksAzureOf(spec);
    rd.scenario.aksAgentPools.push(azure.agentPool);
    // A pool of type VirtualMachines has no scale set: its VMs are kept as one that Compute does not show.
    const standalone = hasNoScaleSet(azure.agentPool);
    rd.scenario.azure.push({ ...azure.scaleSet, ...(standalone ? { standalone } : {}) });
  });
}
