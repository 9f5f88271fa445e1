'use client';
// Whether the tab's change stream is up, for every view to read (the header says it; a view's banner says what it
// means for the data on screen): set by useLiveUpdates, one stream per tab.

import { useSyncExternalStore } from 'react';

export type LiveStatus = 'connecting' | 'live' | 'reconnecting';

interface LiveStatusState {
  status: LiveStatus;
  /** When it became so (ms since the epoch; 0 before the page connects). */
  since: number;
}

const INITIAL: LiveStatusState = { status: 'connecting', since: 0 };
let current = INITIAL;
const listeners = new Set<() => void>();

export function setLiveStatus(status: LiveStatus): void {
  if (current.status === status) return;
  current = { status, since: Date.now() };
  for (const l of listeners) l();
}

function subscribe(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

export function useLiveStatus(): LiveStatusState {
  return useSyncExternalStore(
    subscribe,
    () => current,
    () => INITIAL,
  );
}
