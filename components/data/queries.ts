// Query keys and options for every API read, built by small factories so the server prefetch, the client
// components and the live-update hook agree on them.

import { queryOptions } from '@tanstack/react-query';
import {
  poolKey,
  type FleetResponse,
  type PoolRef,
  type ResyncMode,
  type ResyncRequest,
  type ResyncResult,
  type ResyncStatus,
  type SourcesReport,
} from '@/lib/api-types';
import type { PagePool } from '@/lib/first-rows';
import type { TimelineResponse } from '@/lib/timeline';
import {
  DEFAULT_RANGE,
  RANGES,
  fleetQuery,
  withoutSeverity,
  type FleetFilters,
  type TimeWindow,
} from '@/lib/url-state';
import { fetchJson, postJson } from './fetch-json';

/** A pool's path under /api. */
export const poolApiPath = (ref: PoolRef) =>
  `/api/pools/${encodeURIComponent(ref.context)}/${encodeURIComponent(ref.namespace)}/${encodeURIComponent(ref.name)}`;

/** What identifies a window in a key: a named range that follows "now", or fixed instants. */
export type WindowKey =
  { range: TimeWindow['range']; at: string | null } | { from: string; to: string; at: string | null };

export function windowKey(w: TimeWindow): WindowKey {
  return w.range ? { range: w.range, at: w.at } : { from: w.from, to: w.to, at: w.at };
}

/** The concrete [from, to] of a window key, now. */
export function resolveWindow(k: WindowKey, now = Date.now()): { from: string; to: string } {
  if ('from' in k) return { from: k.from, to: k.to };
  const end = k.at ? Date.parse(k.at) : now;
  return { from: new Date(end - RANGES[k.range ?? '6h']).toISOString(), to: new Date(end).toISOString() };
}

/**
 * A window as the timeline API asks for it: a named range ending now as `range=` (its readers share one answer),
 * anything else as instants.
 */
function timelineQuery(w: WindowKey): string {
  if ('range' in w && !w.at) return `range=${w.range ?? DEFAULT_RANGE}`;
  const { from, to } = resolveWindow(w);
  return `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
}

export const queryKeys = {
  /** The fleet as read: without the severity filter, which the page applies itself (lib/url-state's withoutSeverity). */
  fleet: (f: FleetFilters) => ['fleet', withoutSeverity(f)] as const,
  pool: (ref: PoolRef, at: string | null) => ['pool', poolKey(ref), at] as const,
  timeline: (ref: PoolRef, w: WindowKey) => ['timeline', poolKey(ref), w] as const,
  resync: (ref: PoolRef) => ['resync', poolKey(ref)] as const,
  freshResync: (ref: PoolRef) => ['resync', poolKey(ref), 'fresh'] as const,
  resyncPreview: (ref: PoolRef, mode: ResyncMode, verdictDigest: string | null) =>
    ['resync-preview', poolKey(ref), mode, verdictDigest] as const,
  sources: () => ['sources'] as const,
};

/**
 * How often the pages read the sources again. Stored changes arrive live, but some states come with nothing stored
 * (a store refusing writes stores nothing), so no live event announces them.
 */
export const SOURCES_REFRESH_MS = 30_000;

/** The sources and the store, for pages that do not read the fleet. */
export const sourcesOptions = () =>
  queryOptions({
    queryKey: queryKeys.sources(),
    queryFn: ({ signal }) => fetchJson<SourcesReport>('/api/sources', signal),
    refetchInterval: SOURCES_REFRESH_MS,
  });

export const fleetOptions = (f: FleetFilters) =>
  queryOptions({
    queryKey: queryKeys.fleet(f),
    queryFn: ({ signal }) => fetchJson<FleetResponse>(`/api/pools?${fleetQuery(withoutSeverity(f))}`, signal),
    // The sources come with the fleet (read again while the page is visible).
    refetchInterval: SOURCES_REFRESH_MS,
  });

/**
 * How often a pool's page reads its current state again: an Azure read that changes nothing stores nothing (no live
 * event announces it), and the page says when Azure was last read (a pool in motion: every ~15 s).
 */
export const POOL_REFRESH_MS = 15_000;

export const poolOptions = (ref: PoolRef, at: string | null) =>
  queryOptions({
    queryKey: queryKeys.pool(ref, at),
    queryFn: ({ signal }) =>
      fetchJson<PagePool>(`${poolApiPath(ref)}${at ? `?at=${encodeURIComponent(at)}` : ''}`, signal),
    // A past instant never changes. A page's first-paint copy of a large pool (heldBack) is replaced at once.
    staleTime: (q) => (q.state.data?.heldBack ? 0 : at ? Infinity : 5_000),
    refetchInterval: at ? false : POOL_REFRESH_MS,
  });

export const timelineOptions = (ref: PoolRef, w: WindowKey) =>
  queryOptions({
    queryKey: queryKeys.timeline(ref, w),
    queryFn: ({ signal }) => fetchJson<TimelineResponse>(`${poolApiPath(ref)}/timeline?${timelineQuery(w)}`, signal),
    staleTime: w.at || 'from' in w ? Infinity : 5_000,
  });

/** What the signed-in caller may do to the pool (never cached long: RBAC and running resyncs change). */
export const resyncStatusOptions = (ref: PoolRef) =>
  queryOptions({
    queryKey: queryKeys.resync(ref),
    queryFn: ({ signal }) => fetchJson<ResyncStatus>(`${poolApiPath(ref)}/resync`, signal),
    staleTime: 10_000,
  });

/**
 * The same, with the verdict from fresh reads of the cluster and Azure (for the dialog): never kept once the
 * dialog closes, so opening it always checks again. Live updates refetch it when the pool changes.
 */
export const freshResyncStatusOptions = (ref: PoolRef) =>
  queryOptions({
    queryKey: queryKeys.freshResync(ref),
    queryFn: ({ signal }) => fetchJson<ResyncStatus>(`${poolApiPath(ref)}/resync?fresh=1`, signal),
    staleTime: 0,
    gcTime: 0,
    retry: 1,
  });

/** The server-side dry run of a mode on the verdict a digest names: a new verdict, a new preview. */
export const resyncPreviewOptions = (ref: PoolRef, mode: ResyncMode, verdictDigest: string | null) =>
  queryOptions({
    queryKey: queryKeys.resyncPreview(ref, mode, verdictDigest),
    queryFn: () => postResync(ref, { mode, dryRun: true }, newIdempotencyKey()),
    staleTime: Infinity,
    gcTime: 0,
    retry: false,
  });

/** A random idempotency key (getRandomValues works outside secure contexts too, unlike randomUUID). */
export function newIdempotencyKey(): string {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

export const postResync = (ref: PoolRef, body: ResyncRequest, idempotencyKey: string) =>
  postJson<ResyncResult>(`${poolApiPath(ref)}/resync`, body, idempotencyKey);
