import { describe, expect, it } from 'vitest';
import { EVENT_MEMORY_MS, EVENT_REPLAY_MS, EventMemory, latestEventTime } from './event-memory';

const HOUR = 3_600_000;
const T0 = Date.parse('2026-12-02T10:00:00Z');

describe('EventMemory', () => {
  it("tells a relist's replays from new Events, and forgets what arrived long ago", () => {
    const m = new EventMemory();
    expect(m.news('a:1', T0, true, T0)).toBe(true);
    expect(m.news('a:1', T0, true, T0 + 1000)).toBe(false);
    // The same Event counted again is news.
    expect(m.news('a:2', T0 + 1000, false, T0 + 1000)).toBe(true);
    // A relist an hour later replays both (the API keeps them an hour): not news.
    expect(m.news('a:1', T0, false, T0 + HOUR)).toBe(false);
    expect(m.news('a:2', T0 + 1000, false, T0 + HOUR)).toBe(false);
    expect(m.size).toBe(2);
    // Past the memory, the ids are forgotten as the next Event arrives...
    const later = T0 + EVENT_MEMORY_MS + 1000;
    expect(m.news('b:1', later, false, later)).toBe(true);
    expect(m.size).toBe(1);
    // ...and a replay of one of them (a cluster keeping Events longer) is too old to be news.
    expect(m.news('a:2', T0 + 1000, false, later)).toBe(false);
    expect(m.size).toBe(1);
  });

  it('takes old Events from the first list (the collector checks those against the timeline), not after it', () => {
    const m = new EventMemory();
    const now = T0 + 10 * HOUR;
    const old = now - EVENT_REPLAY_MS - 1000;
    expect(m.news('old:1', old, true, now)).toBe(true);
    expect(m.news('old2:1', old, false, now)).toBe(false);
    // Within the replay horizon, a missed Event is news after the first list too; one with no time at all as well.
    expect(m.news('recent:1', now - EVENT_REPLAY_MS + 1000, false, now)).toBe(true);
    expect(m.news('timeless:1', NaN, false, now)).toBe(true);
  });

  it('holds at most its bound, forgetting the oldest first', () => {
    const m = new EventMemory(EVENT_MEMORY_MS, EVENT_REPLAY_MS, 3);
    for (const id of ['a', 'b', 'c', 'd']) expect(m.news(id, T0, false, T0)).toBe(true);
    expect(m.size).toBe(3);
    expect(m.news('a', T0, false, T0)).toBe(true);
    expect(m.news('d', T0, false, T0)).toBe(false);
  });

  it("reads an Event's latest time from whichever timestamps it has", () => {
    expect(latestEventTime({ firstTimestamp: '2026-12-02T09:00:00Z', lastTimestamp: '2026-12-02T10:00:00Z' })).toBe(T0);
    expect(latestEventTime({ eventTime: '2026-12-02T10:00:00.000000Z' })).toBe(T0);
    expect(latestEventTime({ lastTimestamp: 'not a time', firstTimestamp: '2026-12-02T10:00:00Z' })).toBe(T0);
    expect(latestEventTime({})).toBeNaN();
  });
});
