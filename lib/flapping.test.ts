import { describe, expect, it } from 'vitest';
import { readyDrops } from './flapping';

const at = (min: number) => new Date(Date.UTC(2026, 11, 6, 12, min)).toISOString();

describe('readyDrops', () => {
  it('adds one when the infra object was ready and is not', () => {
    expect(readyDrops({ ampReady: true }, false, at(5))).toEqual([at(5)]);
    expect(readyDrops({ ampReady: false }, false, at(5))).toEqual([]);
    expect(readyDrops({ ampReady: null }, false, at(5))).toEqual([]);
    expect(readyDrops(null, false, at(5))).toEqual([]);
  });

  it('keeps the last hour, at most 30, and drops what is not a time or lies ahead', () => {
    const many = Array.from({ length: 40 }, (_, i) => at(20 + i));
    const kept = readyDrops({ ampReady: true, readyDrops: ['junk', at(0), at(90), ...many] }, true, at(70));
    expect(kept).toEqual(many.slice(10));
  });
});
