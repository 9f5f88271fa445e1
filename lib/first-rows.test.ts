// A large pool's page embeds the rows its tables draw first: every row that needs a look, in the answer's order,
// then others up to 100; the count of the rest; and nothing else changed.

import { describe, expect, it } from 'vitest';
import { analyzePool } from './analyze';
import type { PoolResponse } from './api-types';
import { buildPool, healthyInstances } from './fixtures/pool';
import { ROWS_AT_FIRST, firstRows, firstView, needsLook } from './first-rows';

function answerOf(instances: Parameters<typeof buildPool>[0]['instances'], replicas: number): PoolResponse {
  const pool = analyzePool(buildPool({ replicas, instances }).input, { now: '2026-11-29T10:00:00Z' });
  return { pool, asOf: null, azureReadAt: '2026-11-29T09:59:50Z', azureNextRead: null };
}

describe('a 300-instance pool with a Failed VM, a VM not in Azure and a Node missing, far down the list', () => {
  const answer = answerOf(
    [
      ...healthyInstances(297),
      { member: '297', state: 'Failed' },
      { member: '298', node: 'none' },
      { member: '299', inAzure: false },
    ],
    300,
  );
  const view = firstView(answer);
  const member = (id: string) => id.replace(/^.*\//, '');

  it('keeps 100 rows, the three that need a look among them, in the answer order, and counts the 200 others', () => {
    expect(view.pool.instances).toHaveLength(ROWS_AT_FIRST);
    expect(view.heldBack).toBe(200);
    const kept = view.pool.instances.map((r) => member(r.providerID));
    expect(kept.slice(0, 3)).toEqual(['0', '1', '2']);
    expect(kept.slice(-3)).toEqual(['297', '298', '299']);
  });

  it('draws the same first rows as the whole answer, in the same order', () => {
    expect(firstRows(view.pool.instances, false, 300)).toEqual(firstRows(answer.pool.instances, false));
  });

  it('changes nothing else, and leaves the answer itself alone', () => {
    const { instances: _a, ...rest } = view.pool;
    const { instances: _b, ...whole } = answer.pool;
    expect(rest).toEqual(whole);
    expect(answer.pool.instances).toHaveLength(300);
    expect(answer).not.toHaveProperty('heldBack');
  });
});

describe('rows that need a look', () => {
  it('are all kept, even past 100', () => {
    const answer = answerOf(
      [
        ...healthyInstances(150),
        ...Array.from({ length: 150 }, (_, i) => ({ member: String(150 + i), state: 'Failed' })),
      ],
      300,
    );
    const view = firstView(answer);
    expect(view.pool.instances).toHaveLength(150);
    expect(view.heldBack).toBe(150);
    expect(view.pool.instances.every((r) => r.azure?.provisioningState === 'Failed')).toBe(true);
  });
});

describe('a pool of 100 instances or fewer', () => {
  it('is embedded whole, as the same object', () => {
    const answer = answerOf(healthyInstances(100), 100);
    expect(firstView(answer)).toBe(answer);
  });
});

describe('needsLook', () => {
  const [healthy] = answerOf(healthyInstances(1), 1).pool.instances;
  if (!healthy) throw new Error('no row');
  it('passes a healthy row, and stops one with drift or waiting for Azure however healthy its parts', () => {
    expect(needsLook(healthy)).toBe(false);
    expect(needsLook({ ...healthy, driftKinds: ['missing-from-machinepool'] })).toBe(true);
    expect(needsLook({ ...healthy, awaitingAzureRead: true })).toBe(true);
  });
});
