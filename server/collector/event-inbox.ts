import 'server-only';
// Kubernetes Events about a pool's objects, as the collector takes them in: each recorded once on the pool's
// timeline, across restarts too. After a restart the Event informer relists every Event; those from before the
// last stored cycle (an hour's skew aside) are dropped, and those from around it are checked against the entries
// already on the pool's timeline.

import { createHash } from 'node:crypto';
import type { PoolEvent } from '../kube/context-source';
import type { TimelineStore } from '../store/store';

/** Event times come from the API server's clock: an hour either side of ours covers any sane skew. */
const EVENT_SKEW_MS = 3_600_000;

/** Signatures remembered per pool at most: the restart's overlap. */
const REMEMBERED_PER_POOL = 500;

/** How an Event is recorded on a pool's timeline; the count tells repeats within one second apart. */
export function eventEntry(ev: PoolEvent): { field: string; to: string; detail: string } {
  return {
    field: `event.${ev.reason}`,
    to: ev.object,
    detail: `${ev.type}: ${ev.message} (${ev.time}${ev.count > 1 ? `, ×${ev.count}` : ''})`,
  };
}

/**
 * What tells a recorded Event entry from another, hashed: up to REMEMBERED_PER_POOL are remembered per pool, and
 * the entry's text (message, time, count) is a few hundred bytes.
 */
function eventSignature(field: string, to: string | null, detail: string | null | undefined): string {
  return createHash('sha1').update(`${field}|${to}|${detail}`).digest('base64').slice(0, 16);
}

export class EventInbox {
  /** Events older than this were recorded before a restart (or predate poolscope): the last stored cycle's time. */
  private since = '';
  /** Per pool, the Event entries on its timeline from around the last restart (loaded once, when first asked). */
  private readonly recorded = new Map<string, Promise<Set<string>>>();

  constructor(private readonly store: Pick<TimelineStore, 'timeline'>) {}

  /** From when Events are new: the last stored cycle's time (now, for a store without one). */
  open(since: string): void {
    this.since = since;
  }

  /** Forgets a pool the store no longer has. */
  forget(key: string): void {
    this.recorded.delete(key);
  }

  /** Forgets every pool's recorded Events (the collector benchmark's heap breakdown, at the end of a run). */
  dropAll(): void {
    this.recorded.clear();
  }

  /**
   * Whether an Event about pool `key` is to be recorded. Only an Event from before the restart can be on the
   * timeline already (recorded by the last stored cycle, give or take the API server's clock): those are checked
   * against it, and remembered. A later one is new (the source tells a relist's replays apart), and is not
   * remembered: the sets stay as small as the restart's overlap. Synchronous unless the timeline must be read.
   */
  accept(key: string, ev: PoolEvent): boolean | Promise<boolean> {
    const time = Date.parse(ev.time);
    const since = Date.parse(this.since);
    if (time < Math.floor(since / 1000) * 1000 - EVENT_SKEW_MS) return false;
    if (time > since + EVENT_SKEW_MS) return true;
    const entry = eventEntry(ev);
    const sig = eventSignature(entry.field, entry.to, entry.detail);
    return this.recordedOf(key).then((seen) => {
      if (seen.has(sig)) return false;
      seen.add(sig);
      if (seen.size > REMEMBERED_PER_POOL) seen.delete(seen.values().next().value as string);
      return true;
    });
  }

  private recordedOf(key: string): Promise<Set<string>> {
    let p = this.recorded.get(key);
    if (!p) {
      const from = new Date(Date.parse(this.since) - EVENT_SKEW_MS).toISOString();
      p = this.store
        .timeline(key, from, '9999-12-31T23:59:59.999Z')
        .then(
          (tl) =>
            new Set(tl.filter((t) => t.field.startsWith('event.')).map((t) => eventSignature(t.field, t.to, t.detail))),
        )
        .catch(() => new Set<string>());
      this.recorded.set(key, p);
    }
    return p;
  }
}
