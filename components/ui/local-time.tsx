'use client';
// A timestamp in the viewer's time zone, with UTC on hover. The server renders UTC; the browser switches to
// local time after hydration, so both agree on the first render.

import { useSyncExternalStore } from 'react';

const subscribe = () => () => {};
const useIsClient = () => useSyncExternalStore(subscribe, () => true, () => false);

export function formatInstant(iso: string, timeZone: string | undefined, withDate = true): string {
  return new Intl.DateTimeFormat('en-GB', {
    ...(withDate ? { year: 'numeric', month: 'short', day: '2-digit' } : {}),
    hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false, timeZone, timeZoneName: 'short',
  }).format(new Date(iso));
}

export function LocalTime({ iso, withDate = true, className }: { iso: string | null; withDate?: boolean; className?: string }) {
  const client = useIsClient();
  if (!iso) return <span className={className}>—</span>;
  const utc = formatInstant(iso, 'UTC');
  return (
    <time dateTime={iso} title={utc} className={className}>
      {client ? formatInstant(iso, undefined, withDate) : formatInstant(iso, 'UTC', withDate)}
    </time>
  );
}

/** "3 min ago", for recent changes. */
export function ago(iso: string | null, now: number): string {
  if (!iso) return '—';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86_400)} d ago`;
}
