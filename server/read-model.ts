import 'server-only';
// What the API and the pages read: the fleet, one pool (now or at an instant), its timeline for a window, and
// the state of every source. Reads come from the store, so a replica that does not collect answers the same.

import {
  goneSince,
  poolKey,
  type FleetResponse,
  type PoolResponse,
  type PoolSummary,
  type SourcesReport,
} from '@/lib/api-types';
import { ENTRY_LIMIT, buildTimeline, minPeriodMs, type ChangesPage, type TimelineResponse } from '@/lib/timeline';
import { selectPools, type FleetFilters } from '@/lib/url-state';
import { runtime, type Runtime } from './runtime';
import { cursorOf } from './http/api-schemas';
import { HttpError } from './http/route';
import { storeReport } from './store/health';
import type { Position } from './store/store';

export async function sourcesReport(rt: Runtime): Promise<SourcesReport> {
  const c = rt.collector;
  const health = c?.health() ?? { kube: [], azure: [] };
  return {
    collecting: c !== null,
    lastCycle: await rt.store.lastCycle(),
    kube: health.kube,
    azure: health.azure,
    store: storeReport(c?.storeHealth() ?? null, rt.store.health()),
  };
}

/**
 * Every pool's summary, parsed once per stored cycle: many viewers polling or reloading the fleet between two
 * cycles cost one small query each, not a thousand JSON parses.
 */
let summaries: { cycle: string | null; pools: Promise<PoolSummary[]> } | null = null;

export async function currentSummaries(
  rt: Runtime,
  cycle: string | null | undefined = undefined,
): Promise<PoolSummary[]> {
  if (cycle === undefined) cycle = (await rt.store.lastCycle())?.id ?? null;
  if (!summaries || summaries.cycle !== cycle || cycle === null) {
    const pools = rt.store.currentSummaries();
    summaries = { cycle, pools };
    pools.catch(() => {
      summaries = null;
    });
  }
  return summaries.pools;
}

export async function readFleet(filters: FleetFilters): Promise<FleetResponse> {
  const rt = await runtime();
  const sources = await sourcesReport(rt);
  const all = await currentSummaries(rt, sources.lastCycle?.id ?? null);
  const deleted = all.reduce((n, p) => (goneSince(p) ? n + 1 : n), 0);
  return {
    pools: selectPools(all, filters),
    total: filters.deleted ? all.length : all.length - deleted,
    deleted,
    sources,
    at: new Date().toISOString(),
  };
}

/**
 * 404 for a pool poolscope does not know (at `at`, when given). `recordStart` is where its record starts when that
 * is after `at` (a link to before poolscope first saw it, or before retention's cutoff); the message says so too.
 */
export class PoolNotFound extends HttpError {
  constructor(
    ref: { context: string; namespace: string; name: string },
    at?: string | null,
    readonly recordStart: string | null = null,
  ) {
    super(
      404,
      'pool-not-found',
      at
        ? `MachinePool ${ref.namespace}/${ref.name} in context ${ref.context} was not known to poolscope at ${at}.${recordStart ? ` Its record starts at ${recordStart}.` : ''}`
        : `poolscope knows no MachinePool ${ref.namespace}/${ref.name} in context ${ref.context}.`,
    );
  }
}

export async function readPool(
  ref: { context: string; namespace: string; name: string },
  at: string | null,
): Promise<PoolResponse> {
  const rt = await runtime();
  const pool = at ? await rt.store.poolAt(poolKey(ref), at) : await rt.store.currentPool(poolKey(ref));
  if (!pool) {
    const start = at ? await rt.store.recordStart(poolKey(ref)) : null;
    throw new PoolNotFound(ref, at, start && at && start > at ? start : null);
  }
  const live = at === null;
  return {
    pool,
    asOf: at,
    azureReadAt: live ? await rt.store.azureReadAt(poolKey(ref)) : null,
    azureNextRead: live ? (rt.collector?.nextAzureRead(poolKey(ref)) ?? null) : null,
  };
}

export async function readTimeline(
  ref: { context: string; namespace: string; name: string },
  from: string,
  to: string,
): Promise<TimelineResponse> {
  if (from >= to) throw new HttpError(400, 'invalid-range', `"from" (${from}) must be before "to" (${to}).`);
  const rt = await runtime();
  const k = poolKey(ref);
  const [initial, entries] = await Promise.all([rt.store.poolAt(k, from), rt.store.timeline(k, from, to)]);
  const current = initial ? null : await rt.store.currentPool(k);
  if (!initial && entries.length === 0 && !current) throw new PoolNotFound(ref);
  // Periods narrower than about a pixel of the chart as it opens are merged; the raw list is capped to the newest.
  const shortest = minPeriodMs(from, to, initial ? null : (entries[0]?.at ?? null));
  return {
    ...buildTimeline(initial, entries, from, to, {
      minPeriodMs: shortest,
      // A pool's kind does not change; one first seen inside the range has it in its current state.
      flavour: (initial ?? current)?.summary.flavour ?? 'self-managed',
    }),
    entries: entries.slice(-ENTRY_LIMIT),
    entriesTotal: entries.length,
  };
}

export async function readChanges(
  ref: { context: string; namespace: string; name: string },
  from: string,
  to: string,
  before: Position | null,
  limit: number,
): Promise<ChangesPage> {
  const rt = await runtime();
  const k = poolKey(ref);
  if ((await rt.store.poolVersion(k)) === null) throw new PoolNotFound(ref);
  const rows = await rt.store.changesPage(k, from, to, before, limit + 1);
  const kept = rows.slice(0, limit);
  const last = kept.at(-1)?.position;
  return { entries: kept.map((r) => r.entry), next: rows.length > limit && last ? cursorOf(last) : null };
}
