import { describe, expect, it } from 'vitest';
import { Scheduler } from './scheduler';

const opts = { fastSeconds: 15, slowSeconds: 120, budgetShare: 0.1, random: () => 0.5 };

describe('scheduler', () => {
  it('reads new scale sets at once, then fast while moving and slow when steady', () => {
    const s = new Scheduler(opts);
    s.track('a', 'sub', 0);
    expect(s.due(0)).toEqual(['a']);
    s.record('a', 0, { fast: true, region: 'westeurope', remaining: { HighCostGetVMScaleSet3Min: 189 } });
    expect(s.due(14_000)).toEqual([]);
    expect(s.due(15_000)).toEqual(['a']);
    s.record('a', 15_000, { fast: false, remaining: { HighCostGetVMScaleSet3Min: 188 } });
    expect(s.due(15_000 + 119_000)).toEqual([]);
    expect(s.due(15_000 + 120_000)).toEqual(['a']);
  });

  it('moves a scale set to the fast lane at once on a Kubernetes change', () => {
    const s = new Scheduler(opts);
    s.track('a', 'sub', 0);
    s.due(0);
    s.record('a', 0, { fast: false, remaining: { HighCostGetVMScaleSet3Min: 190 } });
    s.expedite('a', 1000);
    expect(s.due(1000)).toEqual(['a']);
  });

  it('keeps its calls under the configured share of the remaining budget per subscription+region', () => {
    const s = new Scheduler(opts);
    for (let i = 0; i < 50; i++) s.track(`s${i}`, 'sub', 0);
    const first = s.due(0);
    expect(first).toHaveLength(19); // 10% of the assumed 190
    for (const id of first) s.record(id, 0, { fast: true, region: 'westeurope', remaining: { HighCostGetVMScaleSet3Min: 100, GetVMScaleSet3Min: 59 } });
    // Entries not read yet still draw on the subscription's unknown-region budget, which is spent.
    expect(s.due(1000)).toEqual([]);
  });

  it('gives a spent budget back as its calls leave the 3-minute window', () => {
    const s = new Scheduler(opts);
    for (let i = 0; i < 40; i++) s.track(`s${i}`, 'sub', 0);
    const first = s.due(0);
    expect(first).toHaveLength(19);
    for (const id of first) s.record(id, 0, { fast: true });
    expect(s.due(179_999)).toEqual([]);
    // The 19 calls of time 0 are out of the window: the next 19 longest due.
    expect(s.due(180_000)).toEqual(Array.from({ length: 19 }, (_, i) => `s${19 + i}`));
  });

  it('puts a scale set in its region\'s budget from the start when the AzureMachinePool names the region', () => {
    const s = new Scheduler(opts);
    // 60 scale sets of one subscription in two regions: each region gets its own share at once (19 + 19),
    // not the 19 of the cautious unknown-region budget the subscription would otherwise share.
    for (let i = 0; i < 60; i++) s.track(`s${i}`, 'sub', 0, i % 2 ? 'northeurope' : 'westeurope');
    const first = s.due(0);
    expect(first).toHaveLength(38);
    expect(s.budgetsView(0).map((b) => [b.key, b.callsInWindow]).sort()).toEqual([['sub|northeurope', 19], ['sub|westeurope', 19]]);
    // A region learnt later (the AzureMachinePool got its location) moves an unknown-region entry.
    s.track('late', 'sub', 0);
    s.track('late', 'sub', 0, 'uksouth');
    expect(s.due(0)).toEqual(['late']);
  });

  it('stops a whole subscription+region for Retry-After after a 429', () => {
    const s = new Scheduler(opts);
    s.track('a', 'sub', 0);
    s.track('b', 'sub', 0);
    s.due(0);
    s.record('a', 0, { fast: true, region: 'westeurope', remaining: { HighCostGetVMScaleSet3Min: 150 } });
    s.record('b', 0, { fast: true, region: 'westeurope', remaining: { HighCostGetVMScaleSet3Min: 150 } });
    s.expedite('b', 100);
    s.record('a', 100, { fast: true, throttled: true, retryAfterSeconds: 30 });
    expect(s.due(20_000)).toEqual([]);
    expect(s.budgetsView(20_000).find((b) => b.key === 'sub|westeurope')?.blockedUntil).toBe(new Date(30_100).toISOString());
    expect(s.due(30_100).sort()).toEqual(['a', 'b']);
  });
});
