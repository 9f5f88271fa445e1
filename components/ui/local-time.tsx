'use client';
// A timestamp in the viewer's time zone, with UTC on hover (to the millisecond where it has them: a pool's states
// can be a few hundred ms apart). The server renders UTC; the browser switches to local time after hydration, so
// both agree on the first render.

import { useSyncExternalStore } from 'react';

const subscribe = () => () => {};
export const useIsClient = () =>
  useSyncExternalStore(
    subscribe,
    () => true,
    () => false,
  );

/**
 * Formatters by their options: making an Intl.DateTimeFormat costs far more than formatting with one (a pool page
 * formats hundreds of instants, each render on the server and again in the browser).
 */
const formatters = new Map<string, Intl.DateTimeFormat>();

export function formatInstant(iso: string, timeZone: string | undefined, withDate = true, withMs = false): string {
  const key = `${timeZone ?? ''}|${withDate}|${withMs}`;
  let f = formatters.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', {
      ...(withDate ? { year: 'numeric', month: 'short', day: '2-digit' } : {}),
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hour12: false,
      timeZone,
      timeZoneName: 'short',
      ...(withMs ? { fractionalSecondDigits: 3 } : {}),
    });
    formatters.set(key, f);
  }
  return f.format(new Date(iso));
}

export function LocalTime({
  iso,
  withDate = true,
  className,
}: {
  iso: string | null;
  withDate?: boolean;
  className?: string;
}) {
  const client = useIsClient();
  if (!iso) return <span className={className}>—</span>;
  const utc = formatInstant(iso, 'UTC', true, new Date(iso).getUTCMilliseconds() !== 0);
  return (
    <time dateTime={iso} title={utc} className={className}>
      {client ? formatInstant(iso, undefined, withDate) : formatInstant(iso, 'UTC', withDate)}
    </time>
  );
}
