// Where a deleting Machine's deletion stands, read from CAPI's conditions in either API version, and kept by the
// collector's slimmed Machine.

import { describe, expect, it } from 'vitest';
import { slim } from './slim';
import { machineDeletingStage, type KubeObject } from './unstructured';

const machine = (apiVersion: string, status: unknown, deleted = true): KubeObject => ({
  apiVersion,
  kind: 'Machine',
  metadata: {
    name: 'pool0-2',
    namespace: 'default',
    ...(deleted ? { deletionTimestamp: '2026-12-06T05:00:00Z' } : {}),
  },
  status: status as Record<string, unknown>,
});
const deleting = (reason: string) => ({ conditions: [{ type: 'Deleting', status: 'True', reason }] });

describe('machineDeletingStage', () => {
  it('reads the Deleting condition of a v1beta2 Machine and of a v1beta1 one (status.v1beta2)', () => {
    expect(machineDeletingStage(machine('cluster.x-k8s.io/v1beta2', deleting('DrainingNode')))).toBe('DrainingNode');
    expect(
      machineDeletingStage(machine('cluster.x-k8s.io/v1beta1', { v1beta2: deleting('WaitingForVolumeDetach') })),
    ).toBe('WaitingForVolumeDetach');
  });
  it('falls back to a v1beta1 DrainingSucceeded=False reason, and says nothing when neither is there', () => {
    const v1 = machine('cluster.x-k8s.io/v1beta1', {
      conditions: [{ type: 'DrainingSucceeded', status: 'False', reason: 'DrainingFailed' }],
    });
    expect(machineDeletingStage(v1)).toBe('DrainingFailed');
    expect(machineDeletingStage(machine('cluster.x-k8s.io/v1beta2', {}))).toBeNull();
  });
  it('drops a reason that is not a short word (text from a cluster is shown as it is)', () => {
    expect(machineDeletingStage(machine('cluster.x-k8s.io/v1beta2', deleting('Drain; rm -rf /')))).toBeNull();
    expect(machineDeletingStage(machine('cluster.x-k8s.io/v1beta2', deleting('X'.repeat(65))))).toBeNull();
  });
  it('is kept by the slimmed Machine while it is deleted, and not otherwise', () => {
    const kept = slim('machine', machine('cluster.x-k8s.io/v1beta2', deleting('DrainingNode')));
    expect((kept as { deletingStage?: string }).deletingStage).toBe('DrainingNode');
    // Its API-shaped view says the same.
    expect(machineDeletingStage(kept)).toBe('DrainingNode');
    const live = slim('machine', machine('cluster.x-k8s.io/v1beta2', deleting('DrainingNode'), false));
    expect((live as { deletingStage?: string }).deletingStage).toBeUndefined();
  });
});
