import { describe, expect, it } from 'vitest';
import { DRIFT_KIND_LABELS } from './api-types';
import { breakPieces, driftKeyText, formatDuration, listSome, nextReadText, plural } from './format';

describe('format', () => {
  it('cuts text after each / and = and nowhere else, losing nothing', () => {
    const text = 'not ready (ScaleSetDesiredReplicas=False/ScaleSetScalingUp, 3 AMPMs)';
    expect(breakPieces(text)).toEqual(['not ready (ScaleSetDesiredReplicas=', 'False/', 'ScaleSetScalingUp, 3 AMPMs)']);
    expect(breakPieces(text).join('')).toBe(text);
    expect(breakPieces('healthy')).toEqual(['healthy']);
    expect(breakPieces('')).toEqual(['']);
  });

  it.each([
    [0, '0 s'],
    [59_999, '59 s'],
    [60_000, '1 min'],
    [14 * 60_000 + 5_000, '14 min'],
    [3_600_000, '1 h'],
    [75 * 60_000, '1 h 15 min'],
    [24 * 3_600_000, '1 d'],
    [27 * 3_600_000, '1 d 3 h'],
    [-5, '0 s'],
  ])('formatDuration(%d) = %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('pluralises', () => {
    expect([plural(1, 'instance'), plural(2, 'instance'), plural(0, 'ID')]).toEqual([
      '1 instance',
      '2 instances',
      '0 IDs',
    ]);
  });

  it('lists a few and counts the rest', () => {
    expect(listSome(['a', 'b'])).toBe('a, b');
    expect(listSome(['a', 'b', 'c', 'd', 'e'])).toBe('a, b, c and 2 more');
  });

  it('says a drift key in a few words', () => {
    const id =
      '/subscriptions/s/resourcegroups/rg/providers/microsoft.compute/virtualmachinescalesets/workers/virtualmachines/4';
    expect(driftKeyText(`missing-from-machinepool:${id}`, DRIFT_KIND_LABELS)).toBe(
      'missing from MP: virtualmachines/4',
    );
    expect(driftKeyText(`instance-without-node:${id}`)).toBe('instance-without-node: virtualmachines/4');
    expect(driftKeyText('order-only:', DRIFT_KIND_LABELS)).toBe('list order only');
    expect(driftKeyText('no colon')).toBe('no colon');
  });

  it('labels every drift kind, each differently', () => {
    const labels = Object.values(DRIFT_KIND_LABELS);
    expect(new Set(labels).size).toBe(labels.length);
    expect(labels.every((l) => l.length > 0 && l.length <= 20)).toBe(true);
  });
});

describe('nextReadText', () => {
  const now = Date.parse('2026-12-05T10:00:00Z');
  const at = (s: number) => new Date(now + s * 1000).toISOString();
  it('says when, and what the read waits for beyond its lane', () => {
    expect(nextReadText({ at: at(12), waitingFor: 'interval' }, now)).toBe('next read in ~12 s');
    expect(nextReadText({ at: at(0.4), waitingFor: 'interval' }, now)).toBe('next read due now');
    expect(nextReadText({ at: at(-30), waitingFor: 'budget' }, now)).toBe('next read due now');
    expect(nextReadText({ at: at(95), waitingFor: 'budget' }, now)).toBe(
      "next read in ~1 min, waiting its turn at the region's Compute read budget",
    );
    expect(nextReadText({ at: at(40), waitingFor: 'throttled' }, now)).toBe(
      'next read in 40 s: Azure throttles this subscription and region',
    );
  });

  it("names AKS's own budget for an AKS pool's agent pool", () => {
    expect(nextReadText({ at: at(95), waitingFor: 'budget', of: 'agent-pool' }, now)).toBe(
      "next read in ~1 min, waiting its turn at the subscription's AKS read budget",
    );
    expect(nextReadText({ at: at(40), waitingFor: 'throttled', of: 'agent-pool' }, now)).toBe(
      'next read in 40 s: AKS throttles this subscription',
    );
  });
});
