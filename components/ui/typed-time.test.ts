import { describe, expect, it } from 'vitest';
import { inTimeZone, readTyped as read } from '@/lib/fixtures/time-zone';
import { formatInstant } from './local-time';

// A viewer in Berlin: an hour ahead of UTC in December, two in July, and a spring-forward gap in March.
inTimeZone('Europe/Berlin');

describe('the time picker', () => {
  it('reads each instant the app shows back to the same instant, in the viewer’s zone and in UTC', () => {
    for (const iso of ['2026-12-05T20:38:06.000Z', '2026-07-01T00:00:59.000Z', '2026-03-29T01:30:00.000Z']) {
      expect(read(formatInstant(iso, undefined))).toBe(iso);
      expect(read(formatInstant(iso, 'UTC'))).toBe(iso);
    }
  });
});
