// The conditions CAPI's Machine controller gives a MachinePool Machine (core/reconcilers/machine/
// machine_controller_status.go at ae7ff04), which the MachinePool's v1beta2 counters count.

import { describe, expect, it } from 'vitest';
import { type CapiNode } from './capi-behaviour';
import { machinePoolMachineConditions, nodeHealth, type MachineConditionsInput } from './capi-machine-conditions';

const NOW = Date.parse('2026-08-21T10:00:00Z');
const kubelet = [
  { type: 'MemoryPressure', status: 'False' },
  { type: 'DiskPressure', status: 'False' },
  { type: 'PIDPressure', status: 'False' },
];
const node = (ready: string, pressure = kubelet): CapiNode => ({
  name: 'n',
  providerID: 'azure:///vm/0',
  conditions: [...pressure, { type: 'Ready', status: ready, message: ready === 'True' ? '' : 'kubelet stopped' }],
});

function conditions(o: Partial<MachineConditionsInput>): Record<string, string> {
  const all = machinePoolMachineConditions({
    deleting: false,
    infraReady: { status: 'True' },
    infrastructureProvisioned: true,
    infraKind: 'AzureMachinePoolMachine',
    node: node('True'),
    hadNodeRef: true,
    providerID: 'azure:///vm/0',
    previous: [],
    minReadySeconds: 0,
    now: NOW,
    ...o,
  });
  return Object.fromEntries(all.map((c) => [c.type, `${c.status}/${c.reason}`]));
}

describe("a MachinePool Machine's conditions", () => {
  it('are all True for a Ready Node whose kubelet reports no pressure and a ready AzureMachinePoolMachine', () => {
    expect(conditions({})).toEqual({
      BootstrapConfigReady: 'True/DataSecretProvided',
      InfrastructureReady: 'True/Ready',
      NodeReady: 'True/NodeReady',
      NodeHealthy: 'True/NodeHealthy',
      Deleting: 'False/NotDeleting',
      Updating: 'False/NotUpdating',
      Ready: 'True/Ready',
      Available: 'True/Available',
      UpToDate: 'True/UpToDate',
    });
  });

  it("mirror the AzureMachinePoolMachine's Ready condition: not ready, the Machine is not Ready (L167-253, L744-821)", () => {
    const c = conditions({ infraReady: { status: 'False', reason: 'NodeProvisioning' } });
    expect(c).toMatchObject({
      InfrastructureReady: 'False/NodeProvisioning',
      Ready: 'False/NotReady',
      Available: 'False/NotReady',
      UpToDate: 'True/UpToDate',
    });
  });

  it('follow the Node: NotReady makes NodeHealthy False; a pressure condition the kubelet has not reported makes it Unknown (L443-514)', () => {
    expect(conditions({ node: node('False') })).toMatchObject({
      NodeReady: 'False/NodeNotReady',
      NodeHealthy: 'False/NodeNotHealthy',
      Ready: 'False/NotReady',
    });
    expect(conditions({ node: node('True', kubelet.slice(0, 1)) })).toMatchObject({
      NodeReady: 'True/NodeReady',
      NodeHealthy: 'Unknown/NodeHealthyUnknown',
      Ready: 'Unknown/ReadyUnknown',
    });
    expect(nodeHealth(node('True', kubelet.slice(0, 1))).message).toBe(
      '* Node.DiskPressure: Condition not yet reported\n* Node.PIDPressure: Condition not yet reported',
    );
  });

  it('wait for the Node while there is none, and say it was deleted once it had one (L262-413)', () => {
    expect(conditions({ node: null, hadNodeRef: false })).toMatchObject({
      NodeHealthy: 'Unknown/InspectionFailed',
      Ready: 'Unknown/ReadyUnknown',
    });
    expect(conditions({ node: null, hadNodeRef: true })).toMatchObject({
      NodeHealthy: 'False/NodeDeleted',
      Ready: 'False/NotReady',
    });
  });

  it('keep the last known Node conditions while the workload cluster is unreachable', () => {
    const previous = [
      { type: 'NodeReady', status: 'True' as const, reason: 'NodeReady', message: '' },
      { type: 'NodeHealthy', status: 'True' as const, reason: 'NodeHealthy', message: '' },
    ];
    expect(conditions({ node: undefined, previous })).toMatchObject({
      NodeHealthy: 'True/NodeHealthy',
      Ready: 'True/Ready',
    });
    expect(conditions({ node: undefined })).toMatchObject({
      NodeHealthy: 'Unknown/ConnectionDown',
      Ready: 'Unknown/ReadyUnknown',
    });
  });

  it('make Available wait minReadySeconds after Ready turned True (L868-910)', () => {
    const readySince = (s: number) => [
      {
        type: 'Ready',
        status: 'True' as const,
        reason: 'Ready',
        message: '',
        lastTransitionTime: new Date(NOW - s * 1000).toISOString(),
      },
    ];
    expect(conditions({ minReadySeconds: 30, previous: readySince(10) }).Available).toBe(
      'False/WaitingForMinReadySeconds',
    );
    expect(conditions({ minReadySeconds: 30, previous: readySince(30) }).Available).toBe('True/Available');
    expect(conditions({ minReadySeconds: 30, previous: [] }).Available).toBe('False/WaitingForMinReadySeconds');
  });

  it('while the Machine is being deleted: Deleting True, not Ready, not UpToDate (machinepool_controller.go L450-488)', () => {
    expect(conditions({ deleting: true })).toMatchObject({
      Deleting: 'True/Deleting',
      Ready: 'False/NotReady',
      UpToDate: 'False/NotUpToDate',
    });
  });
});
