// The simulated CAPI MachinePool controller in the living world, where it differed from upstream (issue #55):
// the phase of a MachinePool being deleted, the Nodes it deletes and patches, what it keeps when no Node matches,
// when ReplicasReady is False, the v1beta2 counters of a pool with MachinePool Machines, and the Node
// conditions those counters rest on.

import { afterEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/unstructured';
import { startSimulation, type Simulation } from '../index';
import { findByKind, type ResourceDef } from '../kube/resources';
import { fleetScenario, parseFleetSpec } from './fleet';

const AMP = findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureMachinePool') as ResourceDef;
const NODE = findByKind('v1', 'Node') as ResourceDef;
const MP = findByKind('cluster.x-k8s.io/v1beta2', 'MachinePool') as ResourceDef;
const MACHINE = findByKind('cluster.x-k8s.io/v1beta2', 'Machine') as ResourceDef;

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

const dep = (mp: KubeObject) =>
  ((mp.status?.deprecated as { v1beta1?: Record<string, unknown> } | undefined)?.v1beta1 ?? {}) as {
    readyReplicas?: number;
    conditions?: { type: string; status: string }[];
  };
const refsOf = (mp: KubeObject) => ((mp.status?.nodeRefs as { name: string }[] | undefined) ?? []).map((r) => r.name);
const replicasReady = (mp: KubeObject) => dep(mp).conditions?.find((c) => c.type === 'ReplicasReady')?.status;

async function fleet(spec: string, o: { speed?: number; nodeGone?: number } = {}) {
  const scenario = fleetScenario(parseFleetSpec(spec));
  sim = await startSimulation(
    {
      ...scenario,
      speed: o.speed ?? scenario.speed,
      delays: { ...scenario.delays, ...(o.nodeGone ? { nodeGone: o.nodeGone } : {}) },
    },
    { log: () => {} },
  );
  return { sim, mgmt: sim.kube.cluster('mgmt-0').store, workload: sim.kube.cluster('wl-0').store };
}

describe('a Node that joins', () => {
  it("reports the kubelet's pressure conditions beside Ready, before and after it turns Ready", async () => {
    const { sim: s, workload } = await fleet('1x1x0', { speed: 20 });
    s.runStep({ at: 0, line: 0, scale: { cluster: 'mgmt-0', name: 'pool0', replicas: 1 } });
    const types = (n: KubeObject) =>
      Object.fromEntries(
        ((n.status?.conditions as { type: string; status: string }[] | undefined) ?? []).map((c) => [c.type, c.status]),
      );
    const joined = await until('a Node', () => workload.peek(NODE)[0]);
    expect(types(joined)).toEqual({
      MemoryPressure: 'False',
      DiskPressure: 'False',
      PIDPressure: 'False',
      Ready: 'False',
    });
    const ready = await until('the Node Ready', () => workload.peek(NODE).find((n) => types(n).Ready === 'True'));
    expect(types(ready)).toEqual({
      MemoryPressure: 'False',
      DiskPressure: 'False',
      PIDPressure: 'False',
      Ready: 'True',
    });
  }, 30_000);
});

describe('a MachinePool being deleted', () => {
  it('shows phase Deleting while its AzureMachinePool, scale set and AMPMs go, then is gone', async () => {
    const { sim: s, mgmt } = await fleet('1x1x2');
    const world = s.world;
    if (!world) throw new Error('the fleet runs with controllers');
    await until('the pool Running', () => mgmt.get(MP, 'default', 'pool0').status?.phase === 'Running');
    world.stop();
    mgmt.delete(MP, 'default', 'pool0');
    expect(mgmt.get(MP, 'default', 'pool0').status?.phase).toBe('Running');
    const steps = world.pass();
    while (mgmt.has(AMP, 'default', 'pool0') && !steps.next().done);
    // The first deletion pass took the AzureMachinePool (and the scale set with it); the MachinePool waits.
    expect(mgmt.has(AMP, 'default', 'pool0')).toBe(false);
    expect(s.azure.state.scaleSets.size).toBe(0);
    expect(mgmt.get(MP, 'default', 'pool0').status?.phase).toBe('Deleting');
    for (let i = 0; i < 3 && mgmt.has(MP, 'default', 'pool0'); i++) for (const _ of world.pass());
    expect(mgmt.has(MP, 'default', 'pool0')).toBe(false);
  }, 30_000);

  it('stays, Deleting, while the workload cluster holding its Nodes cannot be reached', async () => {
    const { sim: s, mgmt, workload } = await fleet('1x1x2');
    const world = s.world;
    if (!world) throw new Error('the fleet runs with controllers');
    await until('the pool Running', () => mgmt.get(MP, 'default', 'pool0').status?.phase === 'Running');
    world.stop();
    world.unreachable.add('wl-0');
    mgmt.delete(MP, 'default', 'pool0');
    for (let i = 0; i < 4; i++) for (const _ of world.pass());
    expect(mgmt.get(MP, 'default', 'pool0').status?.phase).toBe('Deleting');
    world.unreachable.delete('wl-0');
    for (let i = 0; i < 2; i++) for (const _ of world.pass());
    expect(mgmt.has(MP, 'default', 'pool0')).toBe(false);
    expect(workload.peek(NODE)).toEqual([]);
  }, 30_000);
});

describe('CAPI and the Nodes of its MachinePool', () => {
  it('deletes the Node whose providerID left the MachinePool list at once, not when the cloud node lifecycle controller would', async () => {
    // The cloud node lifecycle controller would take an hour here: whatever deletes the Node is CAPI.
    const { sim: s, mgmt, workload } = await fleet('1x1x3', { speed: 20, nodeGone: 3600 });
    await until('three nodeRefs', () => refsOf(mgmt.get(MP, 'default', 'pool0')).length === 3);
    const before = refsOf(mgmt.get(MP, 'default', 'pool0'));
    s.runStep({ at: 0, line: 0, scale: { cluster: 'mgmt-0', name: 'pool0', replicas: 2 } });
    const list = await until('the MachinePool list down to 2', () => {
      const l = mgmt.get(MP, 'default', 'pool0').spec?.providerIDList as string[];
      return l.length === 2 ? l : undefined;
    });
    const retired = before.filter(
      (n) => !list.includes(String(workload.peekOne(NODE, undefined, n)?.spec?.providerID)),
    );
    expect(retired).toHaveLength(1);
    await until('the retired Node deleted', () => !workload.has(NODE, undefined, retired[0] as string), 3000);
    expect(refsOf(mgmt.get(MP, 'default', 'pool0'))).toHaveLength(2);
  }, 30_000);

  it("drops the uninitialized taint from the Nodes it references and marks them as the pool's", async () => {
    const { sim: s, mgmt, workload } = await fleet('1x1x0', { speed: 20 });
    s.runStep({ at: 0, line: 0, scale: { cluster: 'mgmt-0', name: 'pool0', replicas: 1 } });
    const [name] = await until('a nodeRef', () => {
      const refs = refsOf(mgmt.get(MP, 'default', 'pool0'));
      return refs.length ? refs : undefined;
    });
    const node = workload.get(NODE, undefined, name as string);
    expect(node.spec?.taints ?? []).toEqual([]);
    expect(node.metadata?.annotations).toMatchObject({
      'cluster.x-k8s.io/cluster-name': 'wl-0',
      'cluster.x-k8s.io/cluster-namespace': 'default',
      'cluster.x-k8s.io/owner-kind': 'MachinePool',
      'cluster.x-k8s.io/owner-name': 'pool0',
    });
  }, 30_000);

  it('keeps nodeRefs and the Node counts when none of the listed Nodes is found', async () => {
    const { mgmt, workload } = await fleet('1x1x3', { speed: 20 });
    await until('three Ready nodeRefs', () => dep(mgmt.get(MP, 'default', 'pool0')).readyReplicas === 3);
    const refs = refsOf(mgmt.get(MP, 'default', 'pool0'));
    for (const n of workload.peek(NODE)) workload.delete(NODE, undefined, String(n.metadata?.name));
    // CAPZ sees the Nodes gone (its ready count, hence status.replicas, drops), and CAPI reconciles since.
    await until('status.replicas 0', () => mgmt.get(MP, 'default', 'pool0').status?.replicas === 0);
    await new Promise((r) => setTimeout(r, 500));
    const mp = mgmt.get(MP, 'default', 'pool0');
    expect(refsOf(mp)).toEqual(refs);
    expect(dep(mp).readyReplicas).toBe(3);
  }, 30_000);

  it('says ReplicasReady False only while fewer Nodes are Ready than status.replicas counts, not through a whole scale-up', async () => {
    const { sim: s, mgmt } = await fleet('1x1x3', { speed: 20 });
    await until('three Ready nodeRefs', () => dep(mgmt.get(MP, 'default', 'pool0')).readyReplicas === 3);
    s.runStep({ at: 0, line: 0, scale: { cluster: 'mgmt-0', name: 'pool0', replicas: 5 } });
    const seen: { replicas: unknown; ready: unknown; cond: unknown }[] = [];
    await until('the scale-up done', () => {
      const mp = mgmt.get(MP, 'default', 'pool0');
      seen.push({ replicas: mp.status?.replicas, ready: dep(mp).readyReplicas, cond: replicasReady(mp) });
      return dep(mp).readyReplicas === 5;
    });
    // While CAPZ counts 3 Ready replicas and 3 Nodes are Ready, the 2 on their way do not make it False.
    const whileScaling = seen.filter((x) => x.replicas === 3 && x.ready === 3);
    expect(whileScaling.length).toBeGreaterThan(0);
    expect(new Set(whileScaling.map((x) => x.cond))).toEqual(new Set(['True']));
    expect(replicasReady(mgmt.get(MP, 'default', 'pool0'))).toBe('True');
  }, 30_000);
});

describe('the v1beta2 counters of a pool with MachinePool Machines', () => {
  it('count the Machines whose Ready, Available and UpToDate conditions are True', async () => {
    const { sim: s, mgmt } = await fleet('1x1x0', { speed: 20 });
    await until('the empty pool reconciled', () => mgmt.get(MP, 'default', 'pool0').status?.upToDateReplicas === 0);
    s.runStep({ at: 0, line: 0, scale: { cluster: 'mgmt-0', name: 'pool0', replicas: 2 } });
    const early = await until('CAPI seeing the new spec', () => {
      const mp = mgmt.get(MP, 'default', 'pool0');
      return mp.metadata?.generation !== undefined &&
        mgmt.peek(MACHINE).length === 0 &&
        mp.status?.phase === 'ScalingUp'
        ? mp
        : undefined;
    });
    // No Machine yet: none is up to date (the pool-without-Machines formula would say spec.replicas, 2).
    expect(early.status?.upToDateReplicas).toBe(0);
    const done = await until('two Ready Machines counted', () => {
      const mp = mgmt.get(MP, 'default', 'pool0');
      return mp.status?.readyReplicas === 2 ? mp : undefined;
    });
    const machines = mgmt.peek(MACHINE);
    expect(machines).toHaveLength(2);
    for (const m of machines) {
      const c = Object.fromEntries(
        ((m.status?.conditions as { type: string; status: string }[] | undefined) ?? []).map((x) => [x.type, x.status]),
      );
      expect(c, String(m.metadata?.name)).toMatchObject({
        Ready: 'True',
        Available: 'True',
        UpToDate: 'True',
        NodeHealthy: 'True',
      });
      expect(m.spec?.version).toBe('v1.33.4');
    }
    expect(done.status).toMatchObject({
      readyReplicas: 2,
      availableReplicas: 2,
      upToDateReplicas: 2,
      versions: [{ version: 'v1.33.4', replicas: 2 }],
    });
  }, 30_000);
});
