'use client';
// Stale data must not look live: when the change stream is down, or the view's data is older than its refresh
// interval (with slack for the read itself), a banner says so with the data's age.

import { useLiveStatus } from '@/components/data/live-status';
import { formatDuration } from '@/lib/format';
import { LocalTime } from './local-time';
import { useLiveNow } from './use-live-now';

/** A read may take this long beyond the refresh interval before the data counts as stale. */
const READ_SLACK_MS = 5_000;
/** A stream that reconnects within this long is a blip, not an outage. */
const RECONNECT_GRACE_MS = 2_000;

export interface Staleness {
  /** Why the view is not live. */
  why: string;
  /** When its data was read (ms since the epoch). */
  readAt: number;
  ageMs: number;
}

/** Whether a view whose data was read at `updatedAt` (ms) and is read again every `refreshMs` is stale now. */
export function useStaleness(updatedAt: number, refreshMs: number): Staleness | null {
  const live = useLiveStatus();
  const now = Date.parse(useLiveNow(new Date(updatedAt).toISOString(), true));
  const ageMs = Math.max(0, now - updatedAt);
  const streamDown = live.status === 'reconnecting' && now - live.since >= RECONNECT_GRACE_MS;
  const old = updatedAt > 0 && ageMs > refreshMs + READ_SLACK_MS;
  if (!streamDown && !old) return null;
  const why = streamDown
    ? `the connection to poolscope was lost ${formatDuration(Math.max(0, now - live.since))} ago`
    : `poolscope has not answered for ${formatDuration(ageMs)}`;
  return { why, readAt: updatedAt, ageMs };
}

export function StaleBanner({ stale }: { stale: Staleness | null }) {
  if (!stale) return null;
  return (
    <div
      role="alert"
      data-testid="stale-banner"
      className="rounded border border-amber-300 bg-amber-50 p-3 text-amber-950 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100"
    >
      <p className="font-semibold">Not live: {stale.why}.</p>
      <p className="text-sm">
        What you see was read at <LocalTime iso={new Date(stale.readAt).toISOString()} /> ({formatDuration(stale.ageMs)}{' '}
        ago). It updates by itself once poolscope answers again.
      </p>
    </div>
  );
}
