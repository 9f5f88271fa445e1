// What the pool model reads from Azure: a scale set and its VMs as the ARM REST API returns them (Uniform or
// Flexible, with or without an instance view), normalised once per read (docs/domain.md, "Azure REST shapes").

import type { SourceState } from './api-types';
import { providerIdFromArmId } from './provider-id';
import { intern } from './slim';
import { arr, bool, num, str, toMs } from './unstructured';

/** CAPZ `ProvisioningState` values (api/v1beta1/types.go), in their canonical case. */
export const PROVISIONING_STATES = [
  'Creating',
  'Deleting',
  'Failed',
  'Migrating',
  'Succeeded',
  'Updating',
  'Canceled',
  'Deleted',
] as const;

export interface VmssModel {
  id: string;
  name: string;
  providerID: string;
  capacity: number | null;
  /** Canonical case (Azure may send "succeeded"); null when absent. */
  provisioningState: string | null;
  rawProvisioningState: string | null;
  orchestrationMode: 'Uniform' | 'Flexible';
  location: string | null;
}

export interface InstanceModel {
  providerID: string;
  name: string;
  instanceId: string | null;
  provisioningState: string | null;
  /** From instanceView `PowerState/<x>`; null without an instance view. */
  powerState: string | null;
  latestModelApplied: boolean | null;
  /** From instanceView `ProvisioningState/failed/<code>`. */
  errorCode: string | null;
  errorMessage: string | null;
  computerName: string | null;
  /** properties.timeCreated, milliseconds since the epoch (a number: the text was ~56 bytes per VM kept). */
  createdAt: number | null;
}

export type AzureData =
  | {
      state: 'ok';
      /**
       * The scale set; null for an AKS agent pool without one (type VirtualMachines), whose VMs AKS's machines API
       * lists (normaliseMachines).
       */
      vmss: VmssModel | null;
      instances: InstanceModel[];
      /**
       * When Azure listed the VMs (its response's Date header), milliseconds since the epoch; null when unknown. An
       * instance whose AMPM was made or deleted after it waits for the next read (lib/drift's `awaitsAzureRead`).
       */
      readAt: number | null;
    }
  | Exclude<SourceState, { state: 'ok' }>;

function canonicalState(raw: string | null): string | null {
  if (raw === null) return null;
  return PROVISIONING_STATES.find((s) => s.toLowerCase() === raw.toLowerCase()) ?? raw;
}

export function orchestration(raw: string | null): 'Uniform' | 'Flexible' | null {
  if (raw === null) return null;
  if (raw.toLowerCase() === 'flexible') return 'Flexible';
  if (raw.toLowerCase() === 'uniform') return 'Uniform';
  return null;
}

/** Normalises a VMSS as `GET …/virtualMachineScaleSets/{name}` returns it. */
export function normaliseVmss(raw: unknown): VmssModel | null {
  const id = str(raw, 'id');
  if (!id) return null;
  const state = str(raw, 'properties', 'provisioningState');
  return {
    id,
    name: str(raw, 'name') ?? id.split('/').pop() ?? id,
    providerID: providerIdFromArmId(id),
    capacity: num(raw, 'sku', 'capacity'),
    provisioningState: canonicalState(state),
    rawProvisioningState: state,
    orchestrationMode: orchestration(str(raw, 'properties', 'orchestrationMode')) ?? 'Uniform',
    location: str(raw, 'location'),
  };
}

/**
 * Normalises one VM as the VMSS-VMs list (Uniform, or Flexible through the same API) or the
 * virtualMachines list (Flexible) returns it, with or without `$expand=instanceView`.
 */
export function normaliseInstance(raw: unknown): InstanceModel | null {
  const id = str(raw, 'id');
  if (!id) return null;
  const vmResourceId = str(raw, 'virtualMachineResourceId') ?? str(raw, 'properties', 'virtualMachineResourceId');
  const armId = vmResourceId ?? id;
  let powerState: string | null = null;
  let errorCode: string | null = null;
  let errorMessage: string | null = null;
  for (const s of arr(raw, 'properties', 'instanceView', 'statuses')) {
    const code = str(s, 'code') ?? '';
    if (code.startsWith('PowerState/')) powerState = code.slice('PowerState/'.length);
    const m = /^ProvisioningState\/failed\/(.+)$/i.exec(code);
    if (m) {
      errorCode = m[1] ?? null;
      errorMessage = str(s, 'message');
    }
  }
  return {
    // The same string as the Kubernetes objects' copies (lib/slim interns theirs): a collector keeps a scale
    // set's read between reads, and the join finds the instance by that exact string.
    providerID: intern(providerIdFromArmId(armId)),
    name: str(raw, 'name') ?? armId.split('/').pop() ?? armId,
    instanceId: str(raw, 'instanceId'),
    provisioningState: canonicalState(str(raw, 'properties', 'provisioningState')),
    powerState,
    latestModelApplied: bool(raw, 'properties', 'latestModelApplied'),
    errorCode,
    errorMessage,
    computerName: str(raw, 'properties', 'osProfile', 'computerName'),
    createdAt: toMs(str(raw, 'properties', 'timeCreated')),
  };
}

/** A scale-set read normalised once (see {@link normaliseAzure}), with what normalising it noticed. */
export interface NormalisedAzure {
  state: 'normalised';
  azure: AzureData;
  notes: string[];
}

/**
 * Normalises a VMSS and its VMs as the ARM REST API returns them. A collector analyses the same read many
 * times (every Kubernetes change of the pool until the next read): it normalises it once and keeps only this.
 */
export function normaliseAzure(vmssRaw: unknown, vms: readonly unknown[], readAt?: string | null): NormalisedAzure {
  const notes: string[] = [];
  const vmss = normaliseVmss(vmssRaw);
  if (!vmss)
    return {
      state: 'normalised',
      azure: { state: 'unknown', reason: 'Azure returned a scale set without an id.' },
      notes,
    };
  const instances: InstanceModel[] = [];
  for (const vm of vms) {
    const inst = normaliseInstance(vm);
    if (inst) instances.push(inst);
    else notes.push('Azure returned a VM without an id; it was skipped.');
  }
  return { state: 'normalised', azure: { state: 'ok', vmss, instances, readAt: toMs(readAt ?? undefined) }, notes };
}
