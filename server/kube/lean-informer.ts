import 'server-only';
// client-node's ListWatch, fed slimmed objects: its cache and ours then share one small object per item
// instead of a full API object each (a Node is kilobytes; the pool model reads a few fields of it).

import { ListWatch, Watch, type KubeConfig, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { slim, type SlimKind } from '@/lib/slim';
import type { KubeObject } from '@/lib/unstructured';

export function leanInformer(
  kc: KubeConfig,
  path: string,
  kind: SlimKind,
  list: () => Promise<KubernetesListObject<KubernetesObject>>,
  labelSelector?: string,
): ListWatch<KubernetesObject> {
  const watch = new Watch(kc);
  const slimming = {
    watch: (p: string, query: Record<string, string | number | boolean | undefined>, cb: (phase: string, obj: unknown, raw?: unknown) => void, done: (err: unknown) => void) =>
      watch.watch(p, query, (phase, obj, raw) => cb(phase, phase === 'ADDED' || phase === 'MODIFIED' || phase === 'DELETED' ? slim(kind, obj as KubeObject) : obj, raw), done),
  } as unknown as Watch;
  const slimList = async () => {
    const r = await list();
    return { ...r, items: r.items.map((o) => slim(kind, o as KubeObject) as KubernetesObject) };
  };
  return new ListWatch(path, slimming, slimList, false, labelSelector);
}
