import 'server-only';
// The API's reads and the pages' server rendering share one answer per version of what it reads (see
// ./http/answer-cache): the fleet per stored cycle, a pool and its timeline per version of the pool as stored. A
// read of "now" states its instant (`at`, a window's `to`), so such an answer is shared for a short while only
// (LIVE_MAX_AGE_MS; a long window's end, about a pixel of its chart); a past instant or a fixed window keeps its
// answer longer; and a change stored for a pool replaces its answers at once.

import { poolKey, type FleetResponse, type PoolRef, type PoolResponse } from '@/lib/api-types';
import type { TimelineResponse } from '@/lib/timeline';
import { RANGES, type FleetFilters, type RangeName } from '@/lib/url-state';
import { runtime, type Runtime } from './runtime';
import { AnswerCache, Gate, type Answer } from './http/answer-cache';
import { countShed } from './metrics-registry';
import { readFleet, readPool, readTimeline } from './read-model';

/** How long an answer that states "now" is shared: a reader may see an instant up to this old. */
const LIVE_MAX_AGE_MS = 5_000;
/** How long an answer about a fixed past instant or window is kept while its pool stores nothing new. */
const FIXED_MAX_AGE_MS = 60_000;

const KEY = Symbol.for('poolscope.sharedAnswers');

/** The process's shared answers (one cache, kept on globalThis like the other process-wide state). */
function cache(): AnswerCache {
  const g = globalThis as { [KEY]?: AnswerCache };
  g[KEY] ??= new AnswerCache(
    new Gate({ running: 2, waiting: 48, waitMs: 2_000, runMs: 15_000, perClient: 16 }, countShed),
  );
  return g[KEY];
}

/**
 * A pool's version, as stored: its states and the entries stored without one ('-' when the store has no such pool).
 * Read from the store, so a change another replica stored counts as soon as it is committed.
 */
async function poolVersion(rt: Runtime, key: string): Promise<string> {
  return (await rt.store.poolVersion(key)) ?? '-';
}

/** The fleet, per stored cycle (a cycle stores every summary that changed). */
export async function fleetAnswer(filters: FleetFilters, client?: string): Promise<Answer<FleetResponse>> {
  const rt = await runtime();
  const cycle = (await rt.store.lastCycle())?.id ?? '-';
  return cache().get(`fleet ${JSON.stringify(filters)}`, cycle, LIVE_MAX_AGE_MS, () => readFleet(filters), client);
}

export async function poolAnswer(ref: PoolRef, at: string | null, client?: string): Promise<Answer<PoolResponse>> {
  const rt = await runtime();
  const key = poolKey(ref);
  return cache().get(
    `pool ${key} ${at ?? 'now'}`,
    await poolVersion(rt, key),
    at ? FIXED_MAX_AGE_MS : LIVE_MAX_AGE_MS,
    () => readPool(ref, at),
    client,
  );
}

/**
 * How long a live window's answer is shared while its pool stores nothing new: about a pixel of its chart (a
 * 30-day window's end a minute old draws the same), between LIVE_MAX_AGE_MS and a minute. A change stored for
 * the pool makes a new answer at once.
 */
function liveWindowMaxAge(spanMs: number): number {
  return Math.min(FIXED_MAX_AGE_MS, Math.max(LIVE_MAX_AGE_MS, Math.round(spanMs / 1500)));
}

/** A timeline's window: fixed instants, or a span ending now (`from` then fixed or the span before now). */
export type TimelineWindow = { from: string; to: string } | { live: true; from?: string; range: RangeName };

export async function timelineAnswer(
  ref: PoolRef,
  w: TimelineWindow,
  client?: string,
): Promise<Answer<TimelineResponse>> {
  const rt = await runtime();
  const key = poolKey(ref);
  const version = await poolVersion(rt, key);
  if ('live' in w) {
    const maxAge = liveWindowMaxAge(w.from ? Date.now() - Date.parse(w.from) : RANGES[w.range]);
    const compute = () => {
      const to = Date.now();
      const from = w.from ?? new Date(to - RANGES[w.range]).toISOString();
      return readTimeline(ref, from, new Date(to).toISOString());
    };
    return cache().get(`timeline ${key} live ${w.from ?? w.range}`, version, maxAge, compute, client);
  }
  const compute = () => readTimeline(ref, w.from, w.to);
  return cache().get(`timeline ${key} ${w.from} ${w.to}`, version, FIXED_MAX_AGE_MS, compute, client);
}
