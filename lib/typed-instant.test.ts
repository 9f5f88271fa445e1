import { describe, expect, it } from 'vitest';
import { inTimeZone, readTyped as read } from './fixtures/time-zone';

// A viewer in Berlin: an hour ahead of UTC in December, two in July, and a spring-forward gap in March.
inTimeZone('Europe/Berlin');

describe('an instant typed into the picker', () => {
  it('reads the app’s own format in the viewer’s zone, or in the zone written after it', () => {
    expect(read('05 Dec 2026, 21:38:06')).toBe('2026-12-05T20:38:06.000Z');
    expect(read('05 Dec 2026, 21:38:06 UTC')).toBe('2026-12-05T21:38:06.000Z');
    expect(read('5 december 2026 21:38')).toBe('2026-12-05T20:38:00.000Z');
    expect(read('05 Dec 2026, 21:38:06 CET')).toBe('2026-12-05T20:38:06.000Z');
    expect(read('05 Jul 2026, 21:38:06 CEST')).toBe('2026-07-05T19:38:06.000Z');
    expect(read('05 Dec 2026, 21:38:06 GMT+5:30')).toBe('2026-12-05T16:08:06.000Z');
    expect(read('05 Dec 2026, 21:38:06 -03:00')).toBe('2026-12-06T00:38:06.000Z');
  });
  it('reads ISO forms, local unless they carry a zone', () => {
    expect(read('2026-12-05 21:38:06')).toBe('2026-12-05T20:38:06.000Z');
    expect(read('2026-12-05T21:38:06Z')).toBe('2026-12-05T21:38:06.000Z');
    expect(read('2026-12-05T21:38:06.250+02:00')).toBe('2026-12-05T19:38:06.000Z');
  });
  it('says what is wrong rather than rolling a date over or guessing a zone', () => {
    expect(read('31 Feb 2026, 10:00')).toMatch(/February 2026 has 28 days/);
    expect(read('05 Dec 2026, 24:00')).toMatch(/time of day that does not exist/);
    expect(read('05 Foo 2026, 10:00')).toMatch(/names no month/);
    expect(read('yesterday')).toMatch(/write it as 05 Dec 2026, 21:38:06/);
    expect(read('05 Dec 2026, 10:00 EST')).toMatch(/time zone poolscope cannot check \(“EST”\)/);
    expect(read('05 Dec 2026, 10:00 +25:00')).toMatch(/offset that does not exist/);
    expect(read('29 Mar 2026, 02:30')).toMatch(/clocks skip it/);
    // Not 1926, as JavaScript's dates would read year 26.
    expect(read('05 Dec 0026, 10:00 UTC')).toMatch(/year before 1970/);
  });
});
