// Which Kubernetes Events are news. The Event informer delivers every Event the API server still keeps again when
// it lists afresh (after a 410 or an error), and Events are not cached (only their arrival matters), so what was
// seen is remembered by id — for a while, not for the life of the process. Remembered by the 20,000 instead,
// a management cluster's ids filled ~1.6 MB each (80 MB for a fleet of 50) after ~16 hours of the 100k benchmark's
// churn (20 Events a minute a cluster), far past any benchmark window; for 3 hours, ~4,000 a cluster at that rate.

/**
 * How long an Event is remembered after it arrived. kube-apiserver keeps Events an hour by default
 * (`--event-ttl`); beyond {@link EVENT_REPLAY_MS}, an hour more for the API server's clock against ours.
 */
export const EVENT_MEMORY_MS = 3 * 3_600_000;

/**
 * After the first list, an Event whose latest time is older than this is not news: an Event the memory has
 * forgotten, replayed by a relist (a cluster that keeps Events longer than the default), or one missed while the
 * watch was down longer than this. The first list (the collector checks those against the timeline) takes them all.
 */
export const EVENT_REPLAY_MS = 2 * 3_600_000;

/** Ids remembered at most, whatever their age (a burst's oldest are forgotten first). */
const EVENT_MEMORY_MAX = 20_000;

export class EventMemory {
  /** Id (`uid:count`) → when it arrived (ms), oldest first. */
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly memoryMs = EVENT_MEMORY_MS,
    private readonly replayMs = EVENT_REPLAY_MS,
    private readonly max = EVENT_MEMORY_MAX,
  ) {}

  /**
   * Whether the Event `id` (its uid and count), whose latest timestamp is `eventTime` (ms; NaN when it has none),
   * is news at `now`; remembers it when it is. `firstList`: the informer's first list is being delivered.
   */
  news(id: string, eventTime: number, firstList: boolean, now: number): boolean {
    for (const [k, at] of this.seen) {
      if (now - at < this.memoryMs && this.seen.size < this.max) break;
      this.seen.delete(k);
    }
    if (this.seen.has(id)) return false;
    if (!firstList && now - eventTime > this.replayMs) return false;
    this.seen.set(id, now);
    return true;
  }

  /** Ids remembered. */
  get size(): number {
    return this.seen.size;
  }
}

/** An Event's latest time (ms; NaN when it has none of the three). */
export function latestEventTime(e: { lastTimestamp?: string; eventTime?: string; firstTimestamp?: string }): number {
  const times = [e.lastTimestamp, e.eventTime, e.firstTimestamp]
    .map((s) => (s === undefined ? NaN : Date.parse(s)))
    .filter((t) => !Number.isNaN(t));
  return times.length ? Math.max(...times) : NaN;
}
