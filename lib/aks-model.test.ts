// The AKS pools' objects as the model reads them: the flavour from the infrastructureRef's kind, both CAPZ infra
// kinds, ASO's agent pool object and the AKS REST shapes (docs/domain.md, "AKS pools").

import { describe, expect, it } from 'vitest';
import {
  agentPoolOfScaleSetTags,
  aksProviderId,
  flavourOf,
  normaliseAgentPool,
  hasNoScaleSet,
  normaliseAksMachines,
  normaliseAmmp,
  normaliseAsoAgentPool,
  normaliseAsoMp,
  operationInProgress,
} from './aks-model';
import {
  aksVmProviderId,
  makeAgentPool,
  makeAksMachine,
  makeAmmp,
  makeAsoAgentPool,
  makeAsoMp,
} from './fixtures/aks-objects';

const ids = [0, 1, 2].map((instanceId) => aksVmProviderId({ clusterName: 'aks-weu', agentPool: 'user1', instanceId }));

describe('AKS pools in the model', () => {
  it('tells the flavour by the infra kind, and no flavour for a kind it does not read', () => {
    expect(flavourOf('AzureMachinePool')).toBe('self-managed');
    expect(flavourOf('AzureManagedMachinePool')).toBe('aks-managed');
    expect(flavourOf('AzureASOManagedMachinePool')).toBe('aks-aso');
    expect(flavourOf('DockerMachinePool')).toBeNull();
    expect(flavourOf(null)).toBeNull();
  });

  it('reads an AzureManagedMachinePool: ready, replicas, list, agent pool name, conditions and scaling', () => {
    const ammp = makeAmmp({
      name: 'pool1',
      agentPool: 'user1',
      ready: false,
      replicas: 3,
      providerIDList: ids,
      agentPoolsReady: { type: 'AgentPoolsReady', status: 'False', reason: 'Creating', severity: 'Info' },
      scaling: { minSize: 1, maxSize: 5 },
    });
    expect(normaliseAmmp(ammp)).toMatchObject({
      flavour: 'aks-managed',
      name: 'pool1',
      ready: false,
      replicas: 3,
      providerIDList: ids,
      agentPoolName: 'user1',
      scaling: { minSize: 1, maxSize: 5 },
      resources: [],
    });
    const conditions = normaliseAmmp(ammp).conditions.map((c) => [c.type, c.status, c.reason, c.severity]);
    expect(conditions).toEqual([
      ['Ready', 'False', 'Creating', 'Info'],
      ['AgentPoolsReady', 'False', 'Creating', 'Info'],
    ]);
  });

  it('reads an AzureASOManagedMachinePool: its embedded agent pool name and its resources as CAPZ found them', () => {
    const m = normaliseAsoMp(makeAsoMp({ name: 'pool2', agentPool: 'user2', ready: false, resourcesReady: false }));
    expect(m).toMatchObject({
      flavour: 'aks-aso',
      ready: false,
      agentPoolName: 'user2',
      conditions: [],
      scaling: null,
    });
    expect(m.resources).toEqual([{ kind: 'ManagedClustersAgentPool', name: 'aks-weu-user2', ready: false }]);
  });

  it("reads ASO's agent pool: its Ready condition with reason and generation, its policy and its cached count", () => {
    const aso = normaliseAsoAgentPool(
      makeAsoAgentPool({
        name: 'aks-weu-user1',
        ready: {
          type: 'Ready',
          status: 'False',
          reason: 'ReconciliationBlocked',
          severity: 'Warning',
          message: 'Managed cluster agent pool is in provisioning state "Upgrading"',
        },
        state: { count: 3, enableAutoScaling: true, minCount: 1, maxCount: 6, provisioningState: 'Upgrading' },
        reconcilePolicy: 'skip',
      }),
    );
    expect(aso).toMatchObject({
      generation: 1,
      reconcilePolicy: 'skip',
      ready: { status: 'False', reason: 'ReconciliationBlocked', severity: 'Warning', observedGeneration: 1 },
      cached: { count: 3, enableAutoScaling: true, minCount: 1, maxCount: 6, provisioningState: 'Upgrading' },
    });
  });

  it('reads an agent pool as the REST API gives it, with its provisioning error', () => {
    const pool = normaliseAgentPool(
      makeAgentPool({
        cluster: 'aks-weu',
        name: 'user1',
        state: {
          count: 5,
          provisioningState: 'Failed',
          powerState: 'Running',
          provisioningError: {
            code: 'QuotaExceeded',
            message:
              'Operation could not be completed as it results in exceeding approved standardDSv5Family Cores quota.',
          },
        },
      }),
    );
    expect(pool).toMatchObject({
      name: 'user1',
      count: 5,
      provisioningState: 'Failed',
      powerState: 'Running',
      type: 'VirtualMachineScaleSets',
      provisioningError: { code: 'QuotaExceeded' },
    });
    expect(normaliseAgentPool({ name: 'no id' })).toBeNull();
  });

  it('takes any state but Succeeded, Failed and Canceled for an operation in progress, as ASO does', () => {
    expect(['Succeeded', 'failed', 'Canceled', null].map(operationInProgress)).toEqual([false, false, false, false]);
    expect(['Updating', 'Upgrading', 'Scaling', 'Creating', 'Deleting', 'Starting'].map(operationInProgress)).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
    ]);
  });

  it("spells a machine's VM as CAPZ spells an AzureManagedMachinePool's IDs: the resource group lowercased", () => {
    const m = normaliseAksMachines([makeAksMachine({ cluster: 'aks-weu', agentPool: 'user1', instanceId: 2 }), {}]);
    expect(m[0]?.providerID).toBe(ids[2]);
    expect(m[1]).toEqual({ name: '', providerID: null });
    expect(
      aksProviderId(
        '/subscriptions/s/resourceGroups/MC_Rg_C_westeurope/providers/Microsoft.Compute/virtualMachineScaleSets/aks-a-1-vmss/virtualMachines/0',
      ),
    ).toBe(
      'azure:///subscriptions/s/resourceGroups/mc_rg_c_westeurope/providers/Microsoft.Compute/virtualMachineScaleSets/aks-a-1-vmss/virtualMachines/0',
    );
  });
});

describe('agentPoolOfScaleSetTags', () => {
  it("names the agent pool AKS made a scale set for, by either of AKS's tags, and nothing for an untagged one", () => {
    expect(agentPoolOfScaleSetTags({ 'aks-managed-poolName': 'User1', team: 'x' })).toBe('user1');
    expect(agentPoolOfScaleSetTags({ poolName: 'jobs' })).toBe('jobs');
    expect(agentPoolOfScaleSetTags({ 'aks-managed-poolName': '', poolName: 'old' })).toBe('old');
    expect(agentPoolOfScaleSetTags({ 'aks-managed-poolName': 7, team: 'x' })).toBeNull();
  });
});

describe('an agent pool without a scale set', () => {
  it('is one whose type AKS says is VirtualMachines or AvailabilitySet, in any case; an unknown type has one', () => {
    const pool = (type?: unknown) => ({ id: 'x', properties: type === undefined ? {} : { type } });
    expect(['VirtualMachines', 'virtualmachines', 'AvailabilitySet'].map((t) => hasNoScaleSet(pool(t)))).toEqual([
      true,
      true,
      true,
    ]);
    expect(
      ['VirtualMachineScaleSets', 'SomethingNew', 'toString', 7, undefined].map((t) => hasNoScaleSet(pool(t))),
    ).toEqual([false, false, false, false, false]);
  });
});
