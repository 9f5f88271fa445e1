// A stored change in plain words, for the changes list: what changed ("MachinePool list", "Finding:
// vmss-failed"), its values ("4 IDs" rather than a count and a hash), and its kind, by which the list filters.

import { INFRA_KINDS, type PoolFlavour } from './api-types';
import { conditionSourceWords, replicaLabel } from './timeline';

export type ChangeKind = 'finding' | 'drift' | 'condition' | 'state' | 'replicas' | 'event' | 'resync';

export const CHANGE_KINDS: readonly { kind: ChangeKind; label: string }[] = [
  { kind: 'finding', label: 'Findings' },
  { kind: 'drift', label: 'Drift and lists' },
  { kind: 'condition', label: 'Conditions' },
  { kind: 'state', label: 'States' },
  { kind: 'replicas', label: 'Replicas' },
  { kind: 'event', label: 'Events' },
  { kind: 'resync', label: 'Resyncs' },
];

const FIELDS: Record<string, string> = {
  'amp.provisioningState': 'AzureMachinePool provisioning state',
  'amp.ready': 'AzureMachinePool ready',
  'mp.infrastructureReady': 'MachinePool infrastructure ready',
  'mp.phase': 'MachinePool phase',
  paused: 'Paused',
  pool: 'The pool',
  'list.mp': 'MachinePool list',
  'list.amp': 'AzureMachinePool list',
  'source.kube': 'Management cluster read',
  'source.workload': 'Workload cluster read',
  'source.azure': 'Azure read',
  drift: 'Drift',
  resync: 'Resync',
};

export function changeKind(field: string): ChangeKind {
  if (field.startsWith('finding.')) return 'finding';
  if (field === 'drift' || field.startsWith('list.')) return 'drift';
  if (field.startsWith('condition.')) return 'condition';
  if (field.startsWith('replicas.')) return 'replicas';
  if (field.startsWith('event.')) return 'event';
  if (field === 'resync') return 'resync';
  return 'state';
}

/** What changed, in words; the infra object's fields named after the pool's kind. */
export function changeWhat(field: string, flavour: PoolFlavour = 'self-managed'): string {
  const fixed = FIELDS[field];
  if (fixed && flavour !== 'self-managed' && field === 'amp.provisioningState') return 'Agent pool provisioning state';
  if (fixed) return fixed.replace(/^AzureMachinePool\b/, INFRA_KINDS[flavour].kind);
  const [head, ...rest] = field.split('.');
  const tail = rest.join('.');
  if (head === 'finding') return `Finding: ${tail}`;
  if (head === 'event') return `Event: ${tail}`;
  if (head === 'replicas') return `Replicas: ${replicaLabel(tail, flavour)}`;
  if (head === 'condition') {
    const [source, ...type] = rest;
    return `${conditionSourceWords(source, flavour)} condition ${type.join('.')}`;
  }
  return field;
}

/**
 * A value in words: a list's count and hash as its count of IDs (the new one, when the count stayed, saying that
 * the IDs or their order changed); others as they are. `before`: the value it replaced, for the new one.
 */
export function changeValue(field: string, value: string, before?: string | null): string {
  if (field.startsWith('list.')) {
    const count = /^(\d+):/.exec(value)?.[1];
    if (count !== undefined) {
      const same = before !== undefined && before !== null && before !== value && before.startsWith(`${count}:`);
      return `${count} ${count === '1' ? 'ID' : 'IDs'}${same ? ', other IDs or order' : ''}`;
    }
  }
  return value;
}
