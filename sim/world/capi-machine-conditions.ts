// The part of CAPI's Machine controller a MachinePool Machine's readiness rests on: its conditions from its Node and
// its infrastructure (NodeReady, NodeHealthy, InfrastructureReady, Available, UpToDate). Pure functions.

import type { CapiNode } from './capi-behaviour';

export interface MachineCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

export interface MachineConditionsInput {
  deleting: boolean;
  /** The infra machine's (AMPM's) Ready condition, if it reports one. */
  infraReady?: { status: string; reason?: string; message?: string };
  /** Whether the infra machine was ever provisioned (status.ready seen true). */
  infrastructureProvisioned: boolean;
  infraKind: string;
  /** The Node with the Machine's providerID; null when there is none; undefined when the cluster is unreachable. */
  node: CapiNode | null | undefined;
  hadNodeRef: boolean;
  providerID: string;
  /** The Machine's conditions before (kept for the Node while the cluster is unreachable; Ready's age). */
  previous: readonly (MachineCondition & { lastTransitionTime?: string })[];
  minReadySeconds: number;
  now: number;
}

const cond = (type: string, status: MachineCondition['status'], reason: string, message = ''): MachineCondition => ({
  type,
  status,
  reason,
  message,
});

/** The Node's health over Ready and the three pressure conditions (summarizeNodeConditions). */
export function nodeHealth(node: CapiNode): MachineCondition {
  const messages: string[] = [];
  let bad = 0;
  let unknown = 0;
  for (const type of ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure']) {
    const c = node.conditions.find((x) => x.type === type);
    if (!c) {
      messages.push(`* Node.${type}: Condition not yet reported`);
      unknown++;
      continue;
    }
    const healthy = type === 'Ready' ? c.status === 'True' : c.status === 'False';
    if (healthy) continue;
    messages.push(`* Node.${type}: ${c.message || `Condition is ${c.status}`}`);
    if (c.status === 'Unknown') unknown++;
    else bad++;
  }
  if (bad) return cond('NodeHealthy', 'False', 'NodeNotHealthy', messages.join('\n'));
  if (unknown) return cond('NodeHealthy', 'Unknown', 'NodeHealthyUnknown', messages.join('\n'));
  return cond('NodeHealthy', 'True', 'NodeHealthy');
}

/** NodeReady and NodeHealthy, from the Node found by providerID (setNodeHealthyAndReadyConditions). */
function nodeConditions(i: MachineConditionsInput): MachineCondition[] {
  if (i.node === undefined) {
    // Unreachable: the last known state stays; without one, the connection is reported down.
    const kept = i.previous.filter((c) => c.type === 'NodeReady' || c.type === 'NodeHealthy');
    return kept.length === 2
      ? kept.map(({ type, status, reason, message }) => cond(type, status, reason, message))
      : ['NodeReady', 'NodeHealthy'].map((t) => cond(t, 'Unknown', 'ConnectionDown'));
  }
  if (i.node === null) {
    if (i.hadNodeRef) return ['NodeReady', 'NodeHealthy'].map((t) => cond(t, 'False', 'NodeDeleted'));
    return ['NodeReady', 'NodeHealthy'].map((t) =>
      cond(t, 'Unknown', 'InspectionFailed', `Waiting for a Node with spec.providerID ${i.providerID} to exist`),
    );
  }
  const r = i.node.conditions.find((c) => c.type === 'Ready');
  const ready = !r
    ? cond('NodeReady', 'Unknown', 'NodeReadyUnknown', '* Node.Ready: Condition not yet reported')
    : cond(
        'NodeReady',
        r.status as MachineCondition['status'],
        r.status === 'True' ? 'NodeReady' : r.status === 'False' ? 'NodeNotReady' : 'NodeReadyUnknown',
        r.status !== 'True' && r.message ? `* Node.Ready: ${r.message}` : '',
      );
  return [ready, nodeHealth(i.node)];
}

/** The infra machine's Ready condition mirrored, or the fallback on its provisioned flag. */
function infrastructureReady(i: MachineConditionsInput): MachineCondition {
  const r = i.infraReady;
  if (r && (r.status === 'True' || r.status === 'False' || r.status === 'Unknown')) {
    const reason = r.reason || (r.status === 'True' ? 'Ready' : 'NoReasonReported');
    return cond('InfrastructureReady', r.status, reason, r.message ?? '');
  }
  return i.infrastructureProvisioned
    ? cond('InfrastructureReady', 'True', 'Ready')
    : cond('InfrastructureReady', 'False', 'NotReady', `${i.infraKind} status.initialization.provisioned is false`);
}

/**
 * The v1beta2 conditions of a MachinePool Machine (machine_controller_status.go for a Machine with bootstrap data
 * given, whose Cluster is provisioned and initialized; UpToDate as the MachinePool controller's
 * setMachinesUptoDate sets it). Ready summarizes Deleting, Updating, BootstrapConfigReady, InfrastructureReady and
 * NodeHealthy; Available is Ready held for minReadySeconds.
 */
export function machinePoolMachineConditions(i: MachineConditionsInput): MachineCondition[] {
  const parts = [
    cond('BootstrapConfigReady', 'True', 'DataSecretProvided'),
    infrastructureReady(i),
    ...nodeConditions(i),
    i.deleting ? cond('Deleting', 'True', 'Deleting') : cond('Deleting', 'False', 'NotDeleting'),
    cond('Updating', 'False', 'NotUpdating'),
  ];
  const gates = parts.filter((c) => c.type !== 'NodeReady');
  const issue = gates.some((c) =>
    c.type === 'Deleting' || c.type === 'Updating' ? c.status === 'True' : c.status === 'False',
  );
  const unknown = gates.some((c) => c.status === 'Unknown');
  const ready = issue
    ? cond('Ready', 'False', 'NotReady')
    : unknown
      ? cond('Ready', 'Unknown', 'ReadyUnknown')
      : cond('Ready', 'True', 'Ready');
  return [...parts, ready, available(ready, i), upToDate(i.deleting)];
}

/** Ready for minReadySeconds since Ready last changed (setAvailableCondition). */
function available(ready: MachineCondition, i: MachineConditionsInput): MachineCondition {
  if (ready.status !== 'True') return cond('Available', 'False', 'NotReady');
  const before = i.previous.find((c) => c.type === 'Ready');
  const since = before?.status === 'True' ? Date.parse(before.lastTransitionTime ?? '') : NaN;
  const readyFor = i.now - (Number.isFinite(since) ? since : i.now);
  return readyFor >= i.minReadySeconds * 1000
    ? cond('Available', 'True', 'Available')
    : cond('Available', 'False', 'WaitingForMinReadySeconds');
}

/** Set by the MachinePool controller on each of its Machines (setMachinesUptoDate). */
function upToDate(deleting: boolean): MachineCondition {
  return deleting
    ? cond('UpToDate', 'False', 'NotUpToDate', 'Machine is being deleted')
    : cond('UpToDate', 'True', 'UpToDate');
}
