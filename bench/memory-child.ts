// Runs under `node --expose-gc` (see memory.ts): heap bytes per cached object, full and slimmed, for the kinds a
// collector holds by the hundred thousand. Each VM's AMPM, Machine and Node carry the same providerID, each
// parsed from its own JSON (as three watch events would), so sharing strings shows.

import { makeAmpm, makeMachine, makeNode } from '../lib/fixtures/objects';
import { itemKey, slim } from '../lib/slim';
import type { KubeObject } from '../lib/unstructured';

const gc = (globalThis as { gc?: () => void }).gc as () => void;
const N = 20_000;
const pid = (i: number) =>
  `azure:///subscriptions/0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9/resourceGroups/prod-weu/providers/Microsoft.Compute/virtualMachineScaleSets/pool${i % 100}/virtualMachines/${i}`;
const parse = (o: unknown) => JSON.parse(JSON.stringify(o)) as KubeObject;
// CAPI names a MachinePool's Machine after its AMPM.
const ampmName = (i: number) => `pool${i % 100}-${i}`;
const raw = {
  ampm: (i: number) =>
    parse(
      makeAmpm({
        ampName: `pool${i % 100}`,
        mpName: `pool${i % 100}`,
        namespace: 'default',
        clusterName: 'prod-weu',
        providerID: pid(i),
        member: String(i),
        ready: true,
        createdAt: '2026-11-29T10:00:00Z',
      } as never),
    ),
  machine: (i: number) =>
    parse(
      makeMachine({
        name: ampmName(i),
        namespace: 'default',
        clusterName: 'prod-weu',
        mpName: `pool${i % 100}`,
        providerID: pid(i),
        ampmName: ampmName(i),
        nodeName: `n${i}`,
      }),
    ),
  node: (i: number) => parse(makeNode({ name: `n${i}`, providerID: pid(i), ready: true, clusterName: 'prod-weu' })),
};

/** Heap bytes per VM of three caches (AMPMs, Machines, Nodes) filled by `put`, keys included. */
type Caches = [Map<string, KubeObject>, Map<string, KubeObject>, Map<string, KubeObject>];

function perVm(put: (i: number, caches: Caches) => void): number {
  gc();
  gc();
  const h0 = process.memoryUsage().heapUsed;
  const caches: Caches = [new Map(), new Map(), new Map()];
  for (let i = 0; i < N; i++) put(i, caches);
  gc();
  gc();
  const bytes = (process.memoryUsage().heapUsed - h0) / N;
  if (caches.some((c) => c.size !== N)) throw new Error('a cache lost objects: the keys are not unique');
  return Math.round(bytes);
}

const out = {
  objectsPerKind: N,
  bytesPerVm: {
    // AMPM + Machine + Node of one VM with their cache keys, as the API sends them and as the collector caches them
    // (a Machine slimmed after its AMPM takes the AMPM's key string, as the informer gives it: `keysFrom`).
    full: perVm((i, [a, m, n]) => {
      for (const [cache, o] of [
        [a, raw.ampm(i)],
        [m, raw.machine(i)],
        [n, raw.node(i)],
      ] as const)
        cache.set(itemKey(o), o);
    }),
    slim: perVm((i, [a, m, n]) => {
      const ampm = slim('ampm', raw.ampm(i));
      a.set(itemKey(ampm), ampm);
      const machine = slim('machine', raw.machine(i), ampm);
      m.set(itemKey(machine), machine);
      const node = slim('node', raw.node(i));
      n.set(itemKey(node), node);
    }),
  },
};
console.log(JSON.stringify(out));
