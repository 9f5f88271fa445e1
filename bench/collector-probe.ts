// The collector benchmark's latency probe: a pool paused through the Kubernetes API, timed until the collector
// stores the transition, and split where the pool's watch event reached the collector.

import { CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { PoolDetail } from '../lib/api-types';
import type { Collector } from '../server/collector/collector';
import type { MemoryTrace } from './collector-memory';

export type Probe = {
  seen: { requestMs: number; latencyMs: number; arrival: { deliveryMs: number; storeMs: number } | null } | null;
  timedOut: boolean;
  errors: string[];
};

/**
 * Pauses a pool through the Kubernetes API, waits (up to 10 s) for the collector to store the `paused`
 * transition, and resumes it. Pausing is a change the collector records without making the world scale anything.
 */
export type ProbeFn = (p: PoolDetail) => Promise<Probe>;

/** The probe of this collector; from now on its watch events are watched for the probed pool's. */
export function probes(col: Collector, trace: MemoryTrace | null): ProbeFn {
  // When the watch event of the pool being patched reached the collector (its sources call onKubeChange): splits
  // the latency into the API server's delivery and the collector's own part.
  const arrival: { watching: string | null; at: number } = { watching: null, at: 0 };
  const inside = col as unknown as { onKubeChange(ctx: string, pools: string[], urgent?: boolean): void };
  const onKubeChange = inside.onKubeChange.bind(col);
  inside.onKubeChange = (ctx, changed, urgent) => {
    if (arrival.watching && !arrival.at && urgent && changed.some((p) => `${ctx}/${p}` === arrival.watching))
      arrival.at = Date.now();
    onKubeChange(ctx, changed, urgent);
  };
  return async (p) => {
    const errors: string[] = [];
    let seen: Probe['seen'] = null;
    let timedOut = false;
    trace?.mark('probe: client');
    const patch = pausePatch(p.summary.ref);
    const t = Date.now();
    arrival.watching = p.summary.key;
    arrival.at = 0;
    const stored = storedPause(col, p.summary.key);
    try {
      trace?.mark('probe: pause');
      await patch(true);
      trace?.mark('probe: paused');
      // The change is committed when the API server answers: from then on the wait is the collector's (the
      // API server itself can take seconds when the simulator's controllers are busy with a 100k-VM fleet).
      const committed = Date.now();
      await Promise.race([stored.got, new Promise((r) => setTimeout(r, 10_000))]);
      trace?.mark('probe: stored');
      const seenAt = stored.at();
      if (seenAt)
        seen = {
          requestMs: seenAt - t,
          latencyMs: Math.max(0, seenAt - committed),
          arrival: arrival.at
            ? { deliveryMs: Math.max(0, arrival.at - committed), storeMs: seenAt - arrival.at }
            : null,
        };
      else timedOut = true;
    } catch (err) {
      errors.push((err as Error).message);
    } finally {
      stored.off();
      arrival.watching = null;
    }
    await resume(patch, errors, trace);
    return { seen, timedOut, errors };
  };
}

/** Sets or removes a pool's `paused` annotation through the API server (a client of its own, as a user's). */
function pausePatch(ref: PoolDetail['summary']['ref']): (paused: boolean) => Promise<unknown> {
  const k = new KubeConfig();
  k.loadFromDefault();
  k.setCurrentContext(ref.context);
  const api = k.makeApiClient(CustomObjectsApi);
  return (paused) =>
    api.patchNamespacedCustomObject(
      {
        group: 'cluster.x-k8s.io',
        version: 'v1beta2',
        plural: 'machinepools',
        namespace: ref.namespace,
        name: ref.name,
        body: { metadata: { annotations: { 'cluster.x-k8s.io/paused': paused ? 'true' : null } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
}

/** Waits for the collector's change event storing the pool's `paused` field: when it came (0 until then). */
function storedPause(col: Collector, poolKey: string): { got: Promise<void>; at(): number; off(): void } {
  let seenAt = 0;
  let seen = () => {};
  const got = new Promise<void>((resolve) => {
    seen = resolve;
  });
  const on = (ev: { poolKey: string; fields: string[] }) => {
    if (ev.poolKey === poolKey && ev.fields.includes('paused')) {
      seenAt = Date.now();
      seen();
    }
  };
  col.bus.on('change', on);
  return { got, at: () => seenAt, off: () => col.bus.off('change', on) };
}

/** Undone (also after a failed request, which may have been applied), retried until the API server takes it. */
async function resume(
  patch: (paused: boolean) => Promise<unknown>,
  errors: string[],
  trace: MemoryTrace | null,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await patch(false);
      trace?.mark('probe: resumed');
      break;
    } catch (err) {
      if (attempt >= 5) throw err;
      errors.push((err as Error).message);
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}
