// Runs under `node --expose-gc` (see memory.ts): heap bytes per cached object, full and slimmed, for the kinds a
// collector holds by the hundred thousand. Each VM's AMPM, Machine and Node carry the same providerID, each
// parsed from its own JSON (as three watch events would), so sharing strings shows.

import { makeAmpm, makeMachine, makeNode } from '../lib/fixtures/objects';
import { slim } from '../lib/slim';

const gc = (globalThis as { gc?: () => void }).gc as () => void;
const N = 20_000;
const pid = (i: number) => `azure:///subscriptions/0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9/resourceGroups/prod-weu/providers/Microsoft.Compute/virtualMachineScaleSets/pool${i % 100}/virtualMachines/${i}`;
const parse = (o: unknown) => JSON.parse(JSON.stringify(o)) as Record<string, unknown>;
const raw = {
  ampm: (i: number) => parse(makeAmpm({ ampName: `pool${i % 100}`, mpName: `pool${i % 100}`, namespace: 'default', clusterName: 'prod-weu', providerID: pid(i), member: String(i), ready: true } as never)),
  machine: (i: number) => parse(makeMachine({ name: `m${i}`, namespace: 'default', clusterName: 'prod-weu', mpName: `pool${i % 100}`, providerID: pid(i), ampmName: `a${i}`, nodeName: `n${i}` })),
  node: (i: number) => parse(makeNode({ name: `n${i}`, providerID: pid(i), ready: true, clusterName: 'prod-weu' })),
};

function perVm(make: (i: number) => unknown[]): number {
  gc();
  gc();
  const h0 = process.memoryUsage().heapUsed;
  const keep: unknown[] = [];
  for (let i = 0; i < N; i++) keep.push(make(i));
  gc();
  gc();
  const bytes = (process.memoryUsage().heapUsed - h0) / N;
  keep.length = 0;
  return Math.round(bytes);
}

const out = {
  objectsPerKind: N,
  bytesPerVm: {
    // AMPM + Machine + Node of one VM, as the API sends them and as the collector caches them.
    full: perVm((i) => [raw.ampm(i), raw.machine(i), raw.node(i)]),
    slim: perVm((i) => [slim('ampm', raw.ampm(i) as never), slim('machine', raw.machine(i) as never), slim('node', raw.node(i) as never)]),
  },
};
console.log(JSON.stringify(out));
