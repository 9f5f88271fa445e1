'use client';
// Subscribes to /api/stream and applies what lib/live's reducer decides to the React Query cache: a pool's new
// summary goes straight into the fleet lists; its detail and live timelines are refetched; a gap, a reconnect
// or a restarted server refetches everything live. Views of a past instant are left alone.

import { useQueryClient, type Query, type QueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { goneSince, type FleetResponse } from '@/lib/api-types';
import {
  INITIAL_LIVE_STATE,
  applySummary,
  reduceLive,
  type ChangeMessage,
  type HelloMessage,
  type LiveEffect,
  type LiveState,
} from '@/lib/live';
import { selectPools, type FleetFilters } from '@/lib/url-state';
import { setLiveStatus, type LiveStatus } from './live-status';
import type { WindowKey } from './queries';

/**
 * True for queries that follow "now" (not a past instant or a fixed range). A pool's resync status is one: its
 * verdict and the resync running on it change with the pool.
 */
function isLive(q: Query): boolean {
  const [kind, , third] = q.queryKey as [string, unknown, unknown];
  if (kind === 'pool') return third === null;
  if (kind === 'resync') return true;
  if (kind === 'timeline') {
    const w = third as WindowKey;
    return !w.at && !('from' in w);
  }
  return kind === 'fleet';
}

function apply(client: QueryClient, effect: LiveEffect): void {
  if (effect.type === 'refetch-all') {
    void client.invalidateQueries({ predicate: isLive });
    return;
  }
  const { poolKey, summary } = effect;
  // A pool deleted (or back from deletion) changes the fleet's counts of pools and of deleted ones: read it again.
  if (summary && !goneSince(summary)) {
    for (const [key, data] of client.getQueriesData<FleetResponse>({ queryKey: ['fleet'] })) {
      if (!data) continue;
      const filters = key[1] as FleetFilters;
      const cached = data.pools.find((p) => p.key === poolKey);
      const had = cached !== undefined;
      if (cached && goneSince(cached)) {
        void client.invalidateQueries({ queryKey: key });
        continue;
      }
      const merged = applySummary(data.pools, summary);
      client.setQueryData<FleetResponse>(key, {
        ...data,
        pools: selectPools(merged, filters),
        total: data.total + (had || data.pools.length < data.total ? 0 : 1),
      });
    }
  } else {
    void client.invalidateQueries({ queryKey: ['fleet'] });
  }
  void client.invalidateQueries({
    predicate: (q) => isLive(q) && q.queryKey[0] !== 'fleet' && q.queryKey[1] === poolKey,
  });
}

/**
 * Set once a view of server-rendered data (the fleet table, a pool) has hydrated. A live update applied to its
 * query before then makes it hydrate with other data than the server rendered (React error #418 and a
 * client re-render): the stream waits for it. A page without such a view says so (NoDataView); failing both, the
 * stream waits a few seconds.
 */
let markHydrated: () => void = () => {};
const hydrated = new Promise<void>((resolve) => {
  markHydrated = resolve;
});
const HYDRATION_WAIT_MS = 5_000;

/** Called by a view of server-rendered data: once it has hydrated, live updates may change its data. */
export function useHydratedView(): void {
  useEffect(() => markHydrated(), []);
}

export function useLiveUpdates(): LiveStatus {
  const client = useQueryClient();
  const [status, setLocalStatus] = useState<LiveStatus>('connecting');
  useEffect(() => {
    const setStatus = (s: LiveStatus) => {
      setLocalStatus(s);
      setLiveStatus(s);
    };
    let state: LiveState = INITIAL_LIVE_STATE;
    let es: EventSource | null = null;
    const feed = (input: Parameters<typeof reduceLive>[1]) => {
      const r = reduceLive(state, input);
      state = r.state;
      for (const e of r.effects) apply(client, e);
    };
    const connect = () => {
      es = new EventSource('/api/stream');
      es.addEventListener('hello', (m) => {
        setStatus('live');
        feed({ type: 'hello', hello: JSON.parse(m.data) as HelloMessage });
      });
      es.addEventListener('change', (m) => feed({ type: 'change', change: JSON.parse(m.data) as ChangeMessage }));
      es.onerror = () => setStatus('reconnecting');
    };
    // Connect once the page has loaded and its data view has hydrated: a refetch while streamed parts of the
    // page are still hydrating would make them hydrate with other data than the server rendered.
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const onLoad = () => {
      void Promise.race([hydrated, new Promise((r) => setTimeout(r, HYDRATION_WAIT_MS))]).then(() => {
        if (!cancelled) timer = setTimeout(connect, 0);
      });
    };
    if (document.readyState === 'complete') onLoad();
    else window.addEventListener('load', onLoad, { once: true });
    return () => {
      cancelled = true;
      window.removeEventListener('load', onLoad);
      if (timer) clearTimeout(timer);
      es?.close();
    };
  }, [client]);
  return status;
}
