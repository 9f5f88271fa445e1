// The live-update rules, pure: what a message on the change stream means for the data the page holds.
// Stale or duplicate messages are ignored; a gap in sequence numbers, a reconnect or a restarted server
// means something may have been missed, so everything is fetched again.

import type { PoolSummary } from './api-types';

/** One message of `GET /api/stream` (event `change`). */
export interface ChangeMessage {
  seq: number;
  poolKey: string;
  at: string;
  fields: string[];
  /** The pool's new summary, when the server has it at hand (the collecting replica does). */
  summary?: PoolSummary;
}

/** The first message of every connection (event `hello`): which stream, and its last sequence number. */
export interface HelloMessage {
  stream: string;
  seq: number;
}

export interface LiveState {
  stream: string | null;
  seq: number;
}

export type LiveInput = { type: 'hello'; hello: HelloMessage } | { type: 'change'; change: ChangeMessage };

export type LiveEffect = { type: 'refetch-all' } | { type: 'pool-changed'; poolKey: string; summary?: PoolSummary };

export const INITIAL_LIVE_STATE: LiveState = { stream: null, seq: 0 };

export function reduceLive(state: LiveState, input: LiveInput): { state: LiveState; effects: LiveEffect[] } {
  if (input.type === 'hello') {
    const { stream, seq } = input.hello;
    // A first connection, a reconnect after missed messages, or another server process: fetch everything.
    const same = state.stream === stream && state.seq === seq;
    return { state: { stream, seq }, effects: same ? [] : [{ type: 'refetch-all' }] };
  }
  const c = input.change;
  if (state.stream === null || c.seq <= state.seq) return { state, effects: [] };
  if (c.seq > state.seq + 1) return { state: { ...state, seq: c.seq }, effects: [{ type: 'refetch-all' }] };
  return {
    state: { ...state, seq: c.seq },
    effects: [{ type: 'pool-changed', poolKey: c.poolKey, ...(c.summary ? { summary: c.summary } : {}) }],
  };
}

/** Puts a pool's new summary into the fleet list, unless the list already holds a newer one. */
export function applySummary(pools: readonly PoolSummary[], s: PoolSummary): PoolSummary[] {
  const i = pools.findIndex((p) => p.key === s.key);
  if (i < 0) return [...pools, s].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const cur = pools[i] as PoolSummary;
  if (cur.lastChange && s.lastChange && s.lastChange < cur.lastChange) return [...pools];
  const out = [...pools];
  out[i] = s;
  return out;
}
