'use client';
// "Now" for a page's durations ("frozen for 3 min"): the read's own time on the first render (what the server
// rendered with, so hydration agrees), then the browser's clock, moving every few seconds, so that a duration keeps
// counting between the changes that refetch the page's data. A view of a past instant keeps its instant.

import { useSyncExternalStore } from 'react';

/** How often a live page's durations move on. */
const LIVE_NOW_TICK_MS = 5_000;

let clock = 0;
let timer: ReturnType<typeof setInterval> | null = null;
const listeners = new Set<() => void>();

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  if (!timer) {
    clock = Date.now();
    timer = setInterval(() => {
      clock = Date.now();
      for (const l of listeners) l();
    }, LIVE_NOW_TICK_MS);
  }
  return () => {
    listeners.delete(listener);
    if (!listeners.size && timer) {
      clearInterval(timer);
      timer = null;
    }
  };
}

const still = () => () => {};
const zero = () => 0;

/**
 * The later of the read's time and the browser's clock (a clock behind the server's never turns time back). Not
 * live, it neither ticks nor re-renders its component.
 */
export function useLiveNow(readAt: string, live = true): string {
  const now = useSyncExternalStore(live ? subscribe : still, live ? () => clock : zero, zero);
  if (!live || now === 0 || now <= Date.parse(readAt)) return readAt;
  return new Date(now).toISOString();
}
