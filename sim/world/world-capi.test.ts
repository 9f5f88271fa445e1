// The simulated CAPI MachinePool controller in the living world, where it differed from upstream (issue #55):
// the phase of a MachinePool being deleted, the Nodes it deletes and patches, what it keeps when no Node matches,
// when ReplicasReady is False, the v1beta2 counters of a pool with MachinePool Machines, and the Node
// conditions those counters rest on.

import { afterEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/unstructured';
import { startSimulation, type Simulation } from '../index';
import { findByKind, type ResourceDef } from '../kube/resources';
import { fleetScenario, parseFleetSpec } from './fleet';

const NODE = findByKind('v1', 'Node') as ResourceDef;

let sim: Simulation | null = null;
afterEach(async () => {
  await sim?.stop();
  sim = null;
});

async function until<T>(what: string, fn: () => T | undefined | false, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function fleet(spec: string, o: { speed?: number; nodeGone?: number } = {}) {
  const scenario = fleetScenario(parseFleetSpec(spec));
  sim = await startSimulation({ ...scenario, speed: o.speed ?? scenario.speed, delays: { ...scenario.delays, ...(o.nodeGone ? { nodeGone: o.nodeGone } : {}) } }, { log: () => {} });
  return { sim, workload: sim.kube.cluster('wl-0').store };
}

describe('a Node that joins', () => {
  it('reports the kubelet\'s pressure conditions beside Ready, before and after it turns Ready', async () => {
    const { sim: s, workload } = await fleet('1x1x0', { speed: 20 });
    s.runStep({ at: 0, line: 0, scale: { cluster: 'mgmt-0', name: 'pool0', replicas: 1 } });
    const types = (n: KubeObject) => Object.fromEntries(((n.status?.conditions as { type: string; status: string }[] | undefined) ?? []).map((c) => [c.type, c.status]));
    const joined = await until('a Node', () => workload.peek(NODE)[0]);
    expect(types(joined)).toEqual({ MemoryPressure: 'False', DiskPressure: 'False', PIDPressure: 'False', Ready: 'False' });
    const ready = await until('the Node Ready', () => workload.peek(NODE).find((n) => types(n).Ready === 'True'));
    expect(types(ready)).toEqual({ MemoryPressure: 'False', DiskPressure: 'False', PIDPressure: 'False', Ready: 'True' });
  }, 30_000);
});
