// The Azure objects our fixtures (and later the simulated ARM) produce must have the shape the REST API
// documents, and lib/ must read the upstream examples themselves. The examples live in
// ../shared/upstream/azure-rest-api-specs (present in CI, absent in a user's clone): without them this skips.

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_AZURE, makeVm, makeVmss } from '../../lib/fixtures/objects';
import { normaliseAgentPool, normaliseAksMachines } from '../../lib/aks-model';
import { normaliseInstance, normaliseVmss } from '../../lib/azure-model';
import { makeAgentPool, makeAksMachine } from '../../lib/fixtures/aks-objects';
import { findUpstreamDir } from '../kube/crd-schema';

const upstream = findUpstreamDir(path.resolve(import.meta.dirname, '..', '..'));
const specs = upstream ? path.join(upstream, 'azure-rest-api-specs') : null;
const available = specs !== null && existsSync(specs);
const SKIP_REASON =
  'Azure REST examples not found: set POOLSCOPE_UPSTREAM_DIR or place shared/upstream beside the repo (CI has it)';
if (!available) console.warn(`[skipped] Azure REST shape tests: ${SKIP_REASON}`);

function example(file: string): { responses: { '200': { body: Record<string, unknown> } } } {
  return JSON.parse(readFileSync(path.join(specs as string, file), 'utf8')) as {
    responses: { '200': { body: Record<string, unknown> } };
  };
}

const keys = (o: unknown) => Object.keys(o as object).sort();

describe.skipIf(!available)(`Azure REST shapes${available ? '' : ` (skipped: ${SKIP_REASON})`}`, () => {
  it('reads the upstream VMSS Get example, lower-case provisioningState and all', () => {
    const body = example('VirtualMachineScaleSet_Get_WithUserData.json').responses['200'].body;
    expect(normaliseVmss(body)).toMatchObject({
      name: 'myVirtualMachineScaleSet',
      capacity: 4,
      provisioningState: 'Succeeded',
      rawProvisioningState: 'succeeded',
      orchestrationMode: 'Uniform',
      location: 'westus',
      providerID:
        'azure:///subscriptions/{subscription-id}/resourceGroups/myresourcegroup/providers/Microsoft.Compute/virtualMachineScaleSets/myVirtualMachineScaleSet',
    });
  });

  it('reads the upstream Flexible VMSS-VMs list through virtualMachineResourceId', () => {
    const body = example('VirtualMachineScaleSetVM_List_WithVirtualMachineResourceId.json').responses['200'].body;
    const ids = (body.value as unknown[]).map((v) => normaliseInstance(v)?.providerID);
    expect(ids).toEqual([
      'azure:///subscriptions/{subscription-id}/resourceGroups/myresourcegroup/providers/Microsoft.Compute/virtualMachines/{vmss-flex-vm-name}_1',
      'azure:///subscriptions/{subscription-id}/resourceGroups/myresourcegroup/providers/Microsoft.Compute/virtualMachines/{vmss-flex-vm-name}_2',
    ]);
  });

  it('reads the upstream VMSS-VM Get example', () => {
    const body = example('VirtualMachineScaleSetVM_Get_WithVMSizeProperties.json').responses['200'].body;
    expect(normaliseInstance(body)).toMatchObject({
      instanceId: null,
      latestModelApplied: true,
      provisioningState: 'Succeeded',
    });
  });

  it('builds VMs whose fields all exist in the documented VMSS-VM list item', () => {
    const doc = (
      example('VirtualMachineScaleSetVM_List_MaximumSet_Gen.json').responses['200'].body.value as Record<
        string,
        Record<string, unknown>
      >[]
    )[0]!;
    const ours = makeVm({ az: DEFAULT_AZURE, vmss: 'pool0', member: '0' }) as Record<string, Record<string, unknown>>;
    expect(keys(doc)).toEqual(expect.arrayContaining(keys(ours)));
    expect(keys(doc.properties)).toEqual(expect.arrayContaining(keys(ours.properties)));
  });

  it('builds scale sets whose fields all exist in the documented VMSS Get response', () => {
    const doc = example('VirtualMachineScaleSet_Get_WithUserData.json').responses['200'].body as Record<
      string,
      Record<string, unknown>
    >;
    const ours = makeVmss({ az: DEFAULT_AZURE, name: 'pool0', capacity: 3 }) as Record<string, Record<string, unknown>>;
    expect(keys(doc)).toEqual(expect.arrayContaining(keys(ours)));
    // orchestrationMode and timeCreated are documented properties the Uniform example happens to omit.
    expect([...keys(doc.properties), 'orchestrationMode', 'timeCreated']).toEqual(
      expect.arrayContaining(keys(ours.properties)),
    );
  });

  it('reads the upstream AKS agent pool Get example, and builds agent pools with only documented fields', () => {
    const body = example('aks/AgentPoolsGet.json').responses['200'].body as Record<string, Record<string, unknown>>;
    expect(normaliseAgentPool(body)).toMatchObject({
      name: 'agentpool1',
      provisioningState: 'Succeeded',
      count: 3,
      orchestratorVersion: '1.9.6',
      currentOrchestratorVersion: '1.9.6',
      nodeImageVersion: 'AKSUbuntu:1604:2020.03.11',
      provisioningError: null,
    });
    const ours = makeAgentPool({ cluster: 'aks-weu', name: 'user1', state: { count: 3 } }) as Record<
      string,
      Record<string, unknown>
    >;
    expect([...keys(body), 'type']).toEqual(expect.arrayContaining(keys(ours)));
    // The example shows a few of the agent pool's documented properties; these are the others ours sets.
    const documented = ['mode', 'type', 'enableAutoScaling', 'powerState', 'minCount', 'maxCount', 'status'];
    expect([...keys(body.properties), ...documented]).toEqual(expect.arrayContaining(keys(ours.properties)));
  });

  it('reads the upstream AKS machines List example: each machine and its VM as a providerID', () => {
    const body = example('aks/MachineList.json').responses['200'].body as { value: Record<string, unknown>[] };
    expect(normaliseAksMachines(body.value)).toEqual([
      {
        name: 'aks-nodepool1-25481572-vmss000000',
        providerID:
          'azure:///subscriptions/26fe00f8-9173-4872-9134-bb1d2e00343a/resourceGroups/dummyrg/providers/Microsoft.Compute/virtualMachineScaleSets/aks-nodepool1-25481572-vmss/virtualMachines/0',
      },
    ]);
    const ours = makeAksMachine({ cluster: 'aks-weu', agentPool: 'user1', instanceId: 0 }) as Record<
      string,
      Record<string, unknown>
    >;
    expect(keys(body.value[0])).toEqual(expect.arrayContaining(keys(ours)));
    expect(keys((body.value[0] as Record<string, unknown>).properties)).toEqual(
      expect.arrayContaining(keys(ours.properties)),
    );
  });
});
