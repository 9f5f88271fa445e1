// An instant as a person types it into the "Show the state at" box: the app's own format (05 Dec 2026, 21:38:06),
// or an ISO one (2026-12-05 21:38:06), in the viewer's zone unless a zone follows: UTC, GMT, Z, an offset
// (+01:00, GMT+1) or the viewer's zone by the name the app shows (CET). A zone name the browser cannot check
// against the viewer's own is refused, not guessed: EST and IST each name more than one zone.

import { daysIn, MONTHS, type InstantResult } from './url-state';

const APP = /^(\d{1,2}) ([a-z]{3,9})\.? (\d{4}),? (\d{1,2}):(\d{2})(?::(\d{2}))?(?: (.+))?$/i;
const ISO = /^(\d{4})-(\d{2})-(\d{2})[t ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)? ?(.+)?$/i;
const OFFSET = /^(?:utc|gmt)? ?([+-])(\d{1,2})(?::?(\d{2}))?$/i;

export const TYPED_EXAMPLE = '05 Dec 2026, 21:38:06';

interface Fields {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  zone: string | undefined;
}

function fields(text: string): Fields | string {
  const app = APP.exec(text);
  if (app) {
    const name = app[2]!.toLowerCase();
    const month = MONTHS.findIndex((m) => m.toLowerCase().startsWith(name));
    if (month < 0) return `names no month (“${app[2]}”)`;
    const [day, year, hour, minute] = [app[1], app[3], app[4], app[5]].map(Number) as [number, number, number, number];
    return { year, month: month + 1, day, hour, minute, second: Number(app[6] ?? 0), zone: app[7] };
  }
  const iso = ISO.exec(text);
  if (!iso) return `is not a time poolscope can read: write it as ${TYPED_EXAMPLE}`;
  const [year, month, day, hour, minute] = iso.slice(1, 6).map(Number) as [number, number, number, number, number];
  return { year, month, day, hour, minute, second: Number(iso[6] ?? 0), zone: iso[7] };
}

function rangeError(f: Fields): string | null {
  // JavaScript's dates read years 0–99 as 1900–1999; no pool's record is that old anyway.
  if (f.year < 1970) return 'names a year before 1970, older than any record';
  if (f.month < 1 || f.month > 12) return 'names a month that does not exist (months run 01 to 12)';
  if (f.day < 1 || f.day > daysIn(f.year, f.month))
    return `names a day that does not exist (${MONTHS[f.month - 1]} ${f.year} has ${daysIn(f.year, f.month)} days)`;
  if (f.hour > 23 || f.minute > 59 || f.second > 59)
    return 'names a time of day that does not exist (hours run 00 to 23, minutes and seconds 00 to 59)';
  return null;
}

/** The viewer's zone as the app names it at an instant ("CET", "GMT+1", "UTC"). */
function localZoneName(ms: number): string {
  const parts = new Intl.DateTimeFormat('en-GB', { timeZoneName: 'short' }).formatToParts(new Date(ms));
  return parts.find((p) => p.type === 'timeZoneName')?.value ?? '';
}

function inLocalZone(f: Fields): InstantResult {
  const d = new Date(f.year, f.month - 1, f.day, f.hour, f.minute, f.second);
  // A time the clocks skip (a spring-forward hour) comes back as another time of day.
  if (d.getHours() !== f.hour || d.getMinutes() !== f.minute)
    return { ok: false, error: 'does not exist in your time zone: the clocks skip it' };
  return { ok: true, iso: d.toISOString() };
}

/** Reads a typed instant as a UTC ISO string, or says what is wrong with it. */
export function readTypedInstant(typed: string): InstantResult {
  const text = typed.trim().replace(/\s+/g, ' ');
  const f = fields(text);
  if (typeof f === 'string') return { ok: false, error: f };
  const bad = rangeError(f);
  if (bad) return { ok: false, error: bad };
  const zone = f.zone?.trim();
  const utc = Date.UTC(f.year, f.month - 1, f.day, f.hour, f.minute, f.second);
  if (!zone) return inLocalZone(f);
  if (/^(utc|gmt|z)$/i.test(zone)) return { ok: true, iso: new Date(utc).toISOString() };
  const off = OFFSET.exec(zone);
  if (off) {
    const minutes = Number(off[2]) * 60 + Number(off[3] ?? 0);
    if (Number(off[2]) > 23 || Number(off[3] ?? 0) > 59)
      return { ok: false, error: 'has a UTC offset that does not exist (at most ±23:59)' };
    return { ok: true, iso: new Date(utc - (off[1] === '-' ? -1 : 1) * minutes * 60_000).toISOString() };
  }
  const local = inLocalZone(f);
  if (local.ok && localZoneName(Date.parse(local.iso)).toLowerCase() === zone.toLowerCase()) return local;
  return {
    ok: false,
    error: `names a time zone poolscope cannot check (“${zone}”): leave it out for your own zone, or write UTC or an offset such as +01:00`,
  };
}
