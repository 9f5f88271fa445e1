import { describe, expect, it } from 'vitest';
import { machinePoolToV1beta1, machinePoolToV1beta2 } from './capi-conversion';
import { DEFAULT_AZURE, makeMachinePool, makeVm, makeVmss } from './fixtures/objects';
import { buildPool, healthyInstances } from './fixtures/pool';
import { normaliseAzure, normaliseInstance, normaliseVmss } from './azure-model';
import { buildPoolModel } from './pool-model';

const mpOpts = {
  name: 'pool0',
  namespace: 'default',
  clusterName: 'prod-weu',
  replicas: 3,
  providerIDList: ['azure:///a', 'azure:///b'],
  phase: 'Provisioned',
  infrastructureProvisioned: false,
  statusReplicas: 2,
  nodeReadyReplicas: 1,
  v1beta1Conditions: [
    {
      type: 'InfrastructureReady',
      status: 'False' as const,
      reason: 'WaitingForInfrastructure',
      lastTransitionTime: '2026-11-29T11:00:00Z',
    },
  ],
};

describe('MachinePool normalisation (docs/domain.md, "The v1beta1 and v1beta2 field map")', () => {
  it('reads the same state from v1beta2 and v1beta1 into the same model, except the version', () => {
    const b2 = makeMachinePool(mpOpts);
    const b1 = machinePoolToV1beta1(b2);
    const m2 = buildPoolModel({ context: 'c', machinePool: b2 }).mp;
    const m1 = buildPoolModel({ context: 'c', machinePool: b1 }).mp;
    expect(m2.apiVersion).toBe('v1beta2');
    expect(m1.apiVersion).toBe('v1beta1');
    expect({ ...m1, apiVersion: null }).toEqual({ ...m2, apiVersion: null });
    expect(m2).toMatchObject({
      replicas: 3,
      infrastructureReady: false,
      bootstrapReady: true,
      statusReplicas: 2,
      nodeReadyReplicas: 1,
      nodeUnavailableReplicas: 1,
      phase: 'Provisioned',
      minReadySeconds: 0,
      infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'AzureMachinePool', name: 'pool0' },
      conditions: [
        {
          type: 'InfrastructureReady',
          status: 'False',
          reason: 'WaitingForInfrastructure',
          message: null,
          severity: 'Warning',
          lastTransitionTime: '2026-11-29T11:00:00Z',
        },
      ],
    });
    expect(m2.v1beta2Conditions.map((c) => c.type)).toEqual(['Paused']);
  });

  it('converts v1beta2 → v1beta1 → v1beta2 without loss', () => {
    const b2 = makeMachinePool(mpOpts);
    expect(machinePoolToV1beta2(machinePoolToV1beta1(b2))).toEqual(b2);
  });

  it('writes v1beta1 fields where v1beta1 keeps them', () => {
    const b1 = machinePoolToV1beta1(makeMachinePool(mpOpts));
    expect(b1.spec).toMatchObject({ minReadySeconds: 0 });
    expect(b1.spec?.template).toMatchObject({
      spec: {
        infrastructureRef: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
          kind: 'AzureMachinePool',
          name: 'pool0',
          namespace: 'default',
        },
      },
    });
    expect(b1.status).toMatchObject({
      infrastructureReady: false,
      bootstrapReady: true,
      readyReplicas: 1,
      unavailableReplicas: 1,
      v1beta2: { readyReplicas: 2 },
    });
    expect(b1.status).not.toHaveProperty('deprecated');
    expect(b1.status).not.toHaveProperty('initialization');
  });

  it('tolerates a MachinePool with almost nothing in it', () => {
    const model = buildPoolModel({
      context: 'c',
      machinePool: {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'MachinePool',
        metadata: { name: 'x', namespace: 'n' },
      },
    });
    expect(model.mp).toMatchObject({
      replicas: null,
      providerIDList: [],
      phase: null,
      infrastructureReady: null,
      conditions: [],
    });
    expect(model.notes).toEqual([
      'MachinePool spec.replicas is not set.',
      "No AzureMachinePool was found for this MachinePool's infrastructureRef.",
    ]);
    expect(model.azure).toEqual({ state: 'unknown', reason: 'Azure not read' });
  });

  it('surfaces an unknown phase, an unknown apiVersion, wrong types and malformed or duplicate IDs as notes', () => {
    const model = buildPoolModel({
      context: 'c',
      machinePool: {
        apiVersion: 'cluster.x-k8s.io/v1alpha9',
        metadata: { name: 'x', namespace: 'n' },
        spec: { replicas: 'three', providerIDList: ['azure:///a', 'azure:///a', 'nope', 7] },
        status: { phase: 'Exploding' },
      },
    });
    expect(model.mp.phase).toBe('Unknown');
    expect(model.mp.replicas).toBeNull();
    expect(model.mp.providerIDList).toEqual(['azure:///a', 'azure:///a', 'nope']);
    expect(model.notes).toEqual(
      expect.arrayContaining([
        'MachinePool apiVersion "cluster.x-k8s.io/v1alpha9" is not one poolscope knows; reading it as v1beta2.',
        'MachinePool phase "Exploding" is not a phase CAPI defines; shown as Unknown.',
        'MachinePool spec.providerIDList has duplicate entries.',
        'MachinePool spec.providerIDList has a malformed entry (does not start with azure://): nope',
      ]),
    );
  });

  it('surfaces unknown AzureMachinePool condition types and states', () => {
    const b = buildPool({
      replicas: 1,
      instances: healthyInstances(1),
      amp: { provisioningState: 'Wobbling', conditions: [{ type: 'Frobnicated', status: 'True' }] },
    });
    const model = buildPoolModel(b.input);
    expect(model.notes).toEqual([
      'AzureMachinePool has a condition type poolscope does not interpret: Frobnicated.',
      'AzureMachinePool provisioningState "Wobbling" is not one CAPZ defines.',
    ]);
  });

  it('reads an object once: the same MachinePool and AzureMachinePool again give the same models and notes; a replaced one is read anew', () => {
    const b = buildPool({ replicas: 1, instances: healthyInstances(1), amp: { provisioningState: 'Wobbling' } });
    const mp = { ...b.input.machinePool, status: { ...b.input.machinePool.status, phase: 'Exploding' } };
    const first = buildPoolModel({ ...b.input, machinePool: mp });
    const again = buildPoolModel({ ...b.input, machinePool: mp });
    expect(again.mp).toBe(first.mp);
    expect(again.amp).toBe(first.amp);
    // Each model has its own notes, those of reading the two objects among them.
    expect(again.notes).not.toBe(first.notes);
    expect(again.notes).toEqual(first.notes);
    expect(again.notes).toEqual(
      expect.arrayContaining([
        'MachinePool phase "Exploding" is not a phase CAPI defines; shown as Unknown.',
        'AzureMachinePool provisioningState "Wobbling" is not one CAPZ defines.',
      ]),
    );
    const updated = buildPoolModel({ ...b.input, machinePool: { ...mp, status: { ...mp.status, phase: 'Running' } } });
    expect(updated.mp.phase).toBe('Running');
    expect(updated.notes.some((n) => n.includes('Exploding'))).toBe(false);
    expect(updated.notes).toContain('AzureMachinePool provisioningState "Wobbling" is not one CAPZ defines.');
  });

  it('reads pause from the Cluster and from the annotation', () => {
    const paused = buildPoolModel(
      buildPool({ replicas: 1, instances: healthyInstances(1), clusterPaused: true }).input,
    );
    expect(paused.cluster).toMatchObject({ paused: true });
    const annotated = buildPoolModel(
      buildPool({ replicas: 1, instances: healthyInstances(1), mp: { annotations: { 'cluster.x-k8s.io/paused': '' } } })
        .input,
    );
    expect(annotated.mp.pausedAnnotation).toBe(true);
  });
});

describe('Azure normalisation (docs/domain.md, "Azure REST shapes")', () => {
  it('canonicalises a lower-case VMSS provisioningState and keeps the raw one', () => {
    const vmss = normaliseVmss(
      makeVmss({ az: DEFAULT_AZURE, name: 'pool0', capacity: 4, provisioningState: 'succeeded' }),
    );
    expect(vmss).toEqual({
      id: `/subscriptions/${DEFAULT_AZURE.subscriptionId}/resourceGroups/prod-weu/providers/Microsoft.Compute/virtualMachineScaleSets/pool0`,
      name: 'pool0',
      providerID: `azure:///subscriptions/${DEFAULT_AZURE.subscriptionId}/resourceGroups/prod-weu/providers/Microsoft.Compute/virtualMachineScaleSets/pool0`,
      capacity: 4,
      provisioningState: 'Succeeded',
      rawProvisioningState: 'succeeded',
      orchestrationMode: 'Uniform',
      location: 'westeurope',
    });
  });

  it('defaults orchestrationMode to Uniform when Azure omits it', () => {
    const raw = makeVmss({ az: DEFAULT_AZURE, name: 'pool0', capacity: 1 });
    delete (raw.properties as Record<string, unknown>).orchestrationMode;
    expect(normaliseVmss(raw)?.orchestrationMode).toBe('Uniform');
  });

  it('reads the error code and power state from the instance view', () => {
    const vm = makeVm({
      az: DEFAULT_AZURE,
      vmss: 'pool0',
      member: '2',
      provisioningState: 'Failed',
      errorCode: 'OSProvisioningTimedOut',
      errorMessage: 'OS Provisioning for VM did not finish in the allotted time.',
      powerState: 'running',
    });
    expect(normaliseInstance(vm)).toMatchObject({
      name: 'pool0_2',
      instanceId: '2',
      provisioningState: 'Failed',
      powerState: 'running',
      errorCode: 'OSProvisioningTimedOut',
      errorMessage: 'OS Provisioning for VM did not finish in the allotted time.',
    });
  });

  it("reads a VM's timeCreated as milliseconds since the epoch (null when absent or not a time)", () => {
    const vm = makeVm({
      az: DEFAULT_AZURE,
      vmss: 'pool0',
      member: '3',
      createdAt: '2026-11-29T10:00:00.1234567+00:00',
    });
    expect(normaliseInstance(vm)?.createdAt).toBe(Date.parse('2026-11-29T10:00:00.123Z'));
    const props = (vm as { properties: Record<string, unknown> }).properties;
    expect(normaliseInstance({ ...vm, properties: { ...props, timeCreated: 'not a time' } })?.createdAt).toBeNull();
    expect(normaliseInstance({ ...vm, properties: { ...props, timeCreated: undefined } })?.createdAt).toBeNull();
  });

  it('reads a VM without an instance view, leaving power state unknown', () => {
    const vm = makeVm({ az: DEFAULT_AZURE, vmss: 'pool0', member: '0', instanceView: false });
    expect(normaliseInstance(vm)).toMatchObject({ powerState: null, errorCode: null, provisioningState: 'Succeeded' });
  });

  it('uses the standalone VM ID for Flexible members', () => {
    const vm = makeVm({
      az: { ...DEFAULT_AZURE, resourceGroup: 'Prod-WEU' },
      vmss: 'pool0',
      member: 'pool0_1a2b3c4d',
      mode: 'Flexible',
    });
    expect(normaliseInstance(vm)?.providerID).toBe(
      `azure:///subscriptions/${DEFAULT_AZURE.subscriptionId}/resourceGroups/prod-weu/providers/Microsoft.Compute/virtualMachines/pool0_1a2b3c4d`,
    );
  });

  it('returns null (and the pool model notes it) for a VM without an id', () => {
    expect(normaliseInstance({ name: 'x' })).toBeNull();
    const b = buildPool({ replicas: 1, instances: healthyInstances(1) });
    if (b.input.azure?.state !== 'ok') throw new Error('expected Azure data');
    b.input.azure.vms.push({ name: 'broken' });
    expect(buildPoolModel(b.input).notes).toContain('Azure returned a VM without an id; it was skipped.');
  });
});

describe('conversion is idempotent', () => {
  it('leaves an object already in the target version as it is', () => {
    const b2 = makeMachinePool(mpOpts);
    const b1 = machinePoolToV1beta1(b2);
    expect(machinePoolToV1beta1(b1)).toEqual(b1);
    expect(machinePoolToV1beta2(b2)).toEqual(b2);
  });
});

describe('Azure reads normalised once (normaliseAzure)', () => {
  it('give the same model as the raw read, notes included', () => {
    const b = buildPool({ replicas: 3, instances: healthyInstances(3) });
    const raw = b.input.azure as { state: 'ok'; vmss: unknown; vms: unknown[] };
    expect(raw.state).toBe('ok');
    // One VM without an id: skipped, with a note, either way.
    const vms = [...raw.vms, { name: 'no-id' }];
    const fromRaw = buildPoolModel({ ...b.input, azure: { ...raw, vms } });
    const normalised = normaliseAzure(raw.vmss, vms);
    const fromNormalised = buildPoolModel({ ...b.input, azure: normalised });
    expect(fromNormalised).toEqual(fromRaw);
    expect(fromRaw.notes).toContain('Azure returned a VM without an id; it was skipped.');
    expect(fromRaw.azure.state === 'ok' && fromRaw.azure.instances).toHaveLength(3);
    expect(normaliseAzure({ name: 'no id' }, []).azure).toEqual({
      state: 'unknown',
      reason: 'Azure returned a scale set without an id.',
    });
  });
});

describe('providerID lists read once per list', () => {
  it('reuse an unchanged list across analyses, and read a replaced one afresh', () => {
    const b = buildPool({ replicas: 3, instances: healthyInstances(3) });
    const first = buildPoolModel(b.input);
    const again = buildPoolModel(b.input);
    expect(again.mp.providerIDList).toBe(first.mp.providerIDList);
    expect(again.amp?.providerIDList).toBe(first.amp?.providerIDList);
    // A list replaced (as an informer's update replaces it) is read, and checked, afresh.
    const mp = b.input.machinePool;
    const replaced = { ...mp, spec: { ...mp.spec, providerIDList: [...(mp.spec?.providerIDList as string[]), 'bad'] } };
    const after = buildPoolModel({ ...b.input, machinePool: replaced });
    expect(after.mp.providerIDList).toHaveLength(4);
    expect(after.notes).toContain(
      'MachinePool spec.providerIDList has a malformed entry (does not start with azure://): bad',
    );
    expect(first.notes.some((n) => n.includes('malformed'))).toBe(false);
  });
});
