import 'server-only';
// client-node's ListWatch, fed slimmed objects: its cache and ours then share one small object per item
// instead of a full API object each (a Node is kilobytes; the pool model reads a few fields of it). Watches
// are asked the way client-go asks them: with bookmarks, and a server-side timeout of 5–10 minutes.

import { ListWatch, Watch, type KubeConfig, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { slim, type SlimKind } from '@/lib/slim';
import type { KubeObject } from '@/lib/unstructured';

/** client-go's minimum watch timeout; each watch asks for between one and two times it. */
const MIN_WATCH_TIMEOUT_SECONDS = 300;

/**
 * How long a watch may stay silent before the client gives up on its connection. client-node aborts after 30 s
 * of silence, so every quiet watch reconnected (a new TLS handshake) twice a minute: at 100,000 VMs, with a few
 * hundred watches, that was most of the collector's CPU. API servers send a bookmark about every minute to
 * watches that allow them, so three minutes of silence still means a dead connection.
 */
export const WATCH_INACTIVITY_MS = 180_000;

export function watchQuery(query: Record<string, string | number | boolean | undefined>, random = Math.random): Record<string, string | number | boolean | undefined> {
  return { ...query, allowWatchBookmarks: true, timeoutSeconds: Math.floor(MIN_WATCH_TIMEOUT_SECONDS * (1 + random())) };
}

export function leanInformer(
  kc: KubeConfig,
  path: string,
  kind: SlimKind,
  list: () => Promise<KubernetesListObject<KubernetesObject>>,
  labelSelector?: string,
): ListWatch<KubernetesObject> {
  const watch = new Watch(kc);
  // A private field of client-node's Watch (30 s by default): see WATCH_INACTIVITY_MS.
  (watch as unknown as { requestTimeoutMs: number }).requestTimeoutMs = WATCH_INACTIVITY_MS;
  const slimming = {
    watch: (p: string, query: Record<string, string | number | boolean | undefined>, cb: (phase: string, obj: unknown, raw?: unknown) => void, done: (err: unknown) => void) =>
      watch.watch(p, watchQuery(query), (phase, obj, raw) => cb(phase, phase === 'ADDED' || phase === 'MODIFIED' || phase === 'DELETED' ? slim(kind, obj as KubeObject) : obj, raw), done),
  } as unknown as Watch;
  const slimList = async () => {
    const r = await list();
    return { ...r, items: r.items.map((o) => slim(kind, o as KubeObject) as KubernetesObject) };
  };
  return new ListWatch(path, slimming, slimList, false, labelSelector);
}
