import { describe, expect, it } from 'vitest';
import { analyzePool } from './analyze';
import { buildScenario } from './fixtures/scenarios';
import { INITIAL_LIVE_STATE, applySummary, reduceLive, type LiveState } from './live';

const change = (seq: number, poolKey = 'ctx/ns/p') => ({
  type: 'change' as const,
  change: { seq, poolKey, at: '2026-11-29T10:00:00.000Z', fields: ['amp.ready'] },
});

describe('reduceLive', () => {
  it('refetches on the first hello, then applies changes in sequence', () => {
    let r = reduceLive(INITIAL_LIVE_STATE, { type: 'hello', hello: { stream: 's1', seq: 7 } });
    expect(r.effects).toEqual([{ type: 'refetch-all' }]);
    r = reduceLive(r.state, change(8));
    expect(r.effects).toEqual([{ type: 'pool-changed', poolKey: 'ctx/ns/p' }]);
    expect(r.state).toEqual({ stream: 's1', seq: 8 });
  });

  it('ignores stale and duplicate changes, and changes before the hello', () => {
    const s: LiveState = { stream: 's1', seq: 8 };
    expect(reduceLive(s, change(8))).toEqual({ state: s, effects: [] });
    expect(reduceLive(s, change(3))).toEqual({ state: s, effects: [] });
    expect(reduceLive(INITIAL_LIVE_STATE, change(1))).toEqual({ state: INITIAL_LIVE_STATE, effects: [] });
  });

  it('refetches everything on a gap in sequence numbers', () => {
    const r = reduceLive({ stream: 's1', seq: 8 }, change(10));
    expect(r).toEqual({ state: { stream: 's1', seq: 10 }, effects: [{ type: 'refetch-all' }] });
  });

  it('refetches after a reconnect that missed changes or reached a restarted server, not after a quiet one', () => {
    const s: LiveState = { stream: 's1', seq: 8 };
    expect(reduceLive(s, { type: 'hello', hello: { stream: 's1', seq: 8 } }).effects).toEqual([]);
    expect(reduceLive(s, { type: 'hello', hello: { stream: 's1', seq: 9 } }).effects).toEqual([
      { type: 'refetch-all' },
    ]);
    expect(reduceLive(s, { type: 'hello', hello: { stream: 's2', seq: 0 } })).toEqual({
      state: { stream: 's2', seq: 0 },
      effects: [{ type: 'refetch-all' }],
    });
  });
});

describe('applySummary', () => {
  const a = analyzePool(buildScenario('s01-scale-up-pre-fix').input, { now: '2026-11-29T10:00:00.000Z' }).summary;
  const older = { ...a, lastChange: '2026-11-29T10:00:00.000Z' };
  const newer = { ...a, lastChange: '2026-11-29T10:05:00.000Z', ampReady: true };
  const other = { ...a, key: 'a/b/c', ref: { context: 'a', namespace: 'b', name: 'c' } };

  it('replaces the pool with a newer summary and keeps the others', () => {
    expect(applySummary([other, older], newer)).toEqual([other, newer]);
  });
  it('keeps a newer summary over a stale one', () => {
    expect(applySummary([newer], older)).toEqual([newer]);
  });
  it('adds a new pool in key order', () => {
    expect(applySummary([older], other).map((p) => p.key)).toEqual(['a/b/c', a.key]);
  });
});
