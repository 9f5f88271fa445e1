import 'server-only';
// The API's reads and the pages' server rendering share one answer per version of what it reads (see
// ./http/answer-cache): the fleet per stored cycle, a pool and its timeline per stored state and per change heard
// for it. A read of "now" states its instant (`at`, a window's `to`), so such an answer is shared for a short
// while only (LIVE_MAX_AGE_MS; a long window's end, about a pixel of its chart); a past instant or a fixed window
// keeps its answer longer; and a change heard for a pool replaces its answers at once.

import { poolKey, type FleetResponse, type PoolRef, type PoolResponse } from '@/lib/api-types';
import type { TimelineResponse } from '@/lib/timeline';
import { RANGES, type FleetFilters, type RangeName } from '@/lib/url-state';
import { runtime, type Runtime } from './collector/start';
import { AnswerCache, Gate, type Answer } from './http/answer-cache';
import { countShed } from './metrics-registry';
import { readFleet, readPool, readTimeline } from './read-model';

/** How long an answer that states "now" is shared: a reader may see an instant up to this old. */
const LIVE_MAX_AGE_MS = 5_000;
/** How long an answer about a fixed past instant or window is kept without a change heard for its pool. */
const FIXED_MAX_AGE_MS = 60_000;

interface Shared {
  cache: AnswerCache;
  /** Changes heard per pool (the collector's, or the leader's through PostgreSQL), and in all. */
  heard: Map<string, number>;
  heardAll: number;
  listening: Runtime | null;
}

const KEY = Symbol.for('poolscope.sharedAnswers');

function shared(): Shared {
  const g = globalThis as { [KEY]?: Shared };
  g[KEY] ??= {
    cache: new AnswerCache(new Gate({ running: 2, waiting: 48, waitMs: 2_000 }, countShed)),
    heard: new Map(),
    heardAll: 0,
    listening: null,
  };
  return g[KEY];
}

/** Starts counting the runtime's changes (once per runtime): a change heard for a pool is a new version of it. */
async function listen(): Promise<{ rt: Runtime; s: Shared }> {
  const rt = await runtime();
  const s = shared();
  if (s.listening !== rt) {
    s.listening = rt;
    rt.bus.on('change', (c: { poolKey: string }) => {
      s.heard.set(c.poolKey, (s.heard.get(c.poolKey) ?? 0) + 1);
      s.heardAll++;
    });
  }
  return { rt, s };
}

/** A pool's version: its stored sequence (null: not stored) and the changes heard for it. */
async function poolVersion(rt: Runtime, s: Shared, key: string): Promise<string> {
  return `${(await rt.store.poolSeq(key)) ?? '-'}:${s.heard.get(key) ?? 0}`;
}

export async function fleetAnswer(filters: FleetFilters): Promise<Answer<FleetResponse>> {
  const { rt, s } = await listen();
  const cycle = (await rt.store.lastCycle())?.id ?? '-';
  return s.cache.get(`fleet ${JSON.stringify(filters)}`, `${cycle}:${s.heardAll}`, LIVE_MAX_AGE_MS, () =>
    readFleet(filters),
  );
}

export async function poolAnswer(ref: PoolRef, at: string | null): Promise<Answer<PoolResponse>> {
  const { rt, s } = await listen();
  const key = poolKey(ref);
  return s.cache.get(
    `pool ${key} ${at ?? 'now'}`,
    await poolVersion(rt, s, key),
    at ? FIXED_MAX_AGE_MS : LIVE_MAX_AGE_MS,
    () => readPool(ref, at),
  );
}

/**
 * How long a live window's answer is shared while nothing is heard for its pool: about a pixel of its chart (a
 * 30-day window's end a minute old draws the same), between LIVE_MAX_AGE_MS and a minute. A change heard for
 * the pool makes a new answer at once.
 */
function liveWindowMaxAge(spanMs: number): number {
  return Math.min(FIXED_MAX_AGE_MS, Math.max(LIVE_MAX_AGE_MS, Math.round(spanMs / 1500)));
}

/** A timeline's window: fixed instants, or a span ending now (`from` then fixed or the span before now). */
export type TimelineWindow = { from: string; to: string } | { live: true; from?: string; range: RangeName };

export async function timelineAnswer(ref: PoolRef, w: TimelineWindow): Promise<Answer<TimelineResponse>> {
  const { rt, s } = await listen();
  const key = poolKey(ref);
  const version = await poolVersion(rt, s, key);
  if ('live' in w) {
    const maxAge = liveWindowMaxAge(w.from ? Date.now() - Date.parse(w.from) : RANGES[w.range]);
    return s.cache.get(`timeline ${key} live ${w.from ?? w.range}`, version, maxAge, () => {
      const to = Date.now();
      const from = w.from ?? new Date(to - RANGES[w.range]).toISOString();
      return readTimeline(ref, from, new Date(to).toISOString());
    });
  }
  return s.cache.get(`timeline ${key} ${w.from} ${w.to}`, version, FIXED_MAX_AGE_MS, () =>
    readTimeline(ref, w.from, w.to),
  );
}
