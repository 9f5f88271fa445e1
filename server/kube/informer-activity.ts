// What the informers did since the process started, by kind (lists, objects listed, watches, events, 410s):
// counted as they go, read by the metrics and the benchmarks.

import type { SlimKind } from '@/lib/slim';

/** What the informers of one kind did since the process started (all contexts and clusters together). */
export interface InformerActivity {
  /** Completed lists (every page of one list counts once), and the objects they brought. */
  lists: number;
  listedObjects: number;
  /** Watch requests made, and the events they delivered (ADDED, MODIFIED, DELETED; bookmarks not counted). */
  watches: number;
  watchEvents: number;
  /** 410 Gone answers (a watch or a continue token too old: a fresh list follows). */
  gone: number;
}

const activity = new Map<SlimKind, InformerActivity>();

export function activityOf(kind: SlimKind): InformerActivity {
  let a = activity.get(kind);
  if (!a) activity.set(kind, (a = { lists: 0, listedObjects: 0, watches: 0, watchEvents: 0, gone: 0 }));
  return a;
}

/** A copy of every informer's activity since the process started, by kind (for metrics and benchmarks). */
export function informerActivity(): Map<SlimKind, InformerActivity> {
  return new Map([...activity].map(([k, a]) => [k, { ...a }]));
}
