// The simulated CAPZ inside the living world, driven a controller pass at a time (no timers): its
// AzureMachinePool conditions over a scale-up, and its providerIDList order (unsorted before CAPZ 1.23), as
// CAPI copies it and as poolscope's analysis reads it.

import { afterEach, describe, expect, it } from 'vitest';
import { analyzePool } from '../../lib/analyze';
import type { KubeObject } from '../../lib/unstructured';
import { startSimulation, type Simulation } from '../index';
import { findByKind, type ResourceDef } from '../kube/resources';
import type { CapzBehaviour } from './capz-behaviour';
import { fleetScenario } from './fleet';
import { World, type WorldOptions } from './world';

const AMP = findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureMachinePool') as ResourceDef;
const MP = findByKind('cluster.x-k8s.io/v1beta2', 'MachinePool') as ResourceDef;
const AMPM = findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureMachinePoolMachine') as ResourceDef;
const MACHINE = findByKind('cluster.x-k8s.io/v1beta2', 'Machine') as ResourceDef;
const NODE = findByKind('v1', 'Node') as ResourceDef;

/** Every simulated delay zero: each pass moves every pool one step on. */
const NO_DELAYS = { provision: 0, delete: 0, join: 0, ready: 0, capzRequeue: 0, nodeGone: 0 };

let sim: Simulation | null = null;
afterEach(async () => {
  await sim?.stop();
  sim = null;
});

/** A static fleet (its own controllers off) and a world over it that the test drives pass by pass. */
async function fleet(
  clusters: number,
  instances: number,
  capz: WorldOptions['capz'],
  extra: Partial<WorldOptions> = {},
): Promise<{ sim: Simulation; world: World }> {
  sim = await startSimulation(
    fleetScenario({ clusters, poolsPerCluster: 1, instancesPerPool: instances, controllers: false }),
    { log: () => {} },
  );
  return { sim, world: new World(sim.kube, sim.azure, { capz, delays: NO_DELAYS, ...extra }) };
}

function pass(world: World): void {
  const steps = world.pass();
  let done = false;
  while (!done) done = steps.next().done === true;
  expect(world.errors).toEqual([]);
}

type Cond = { type: string; status: string; reason?: string; severity?: string };

describe('CAPZ conditions in the world', () => {
  for (const behaviour of ['pre-1.20', '1.26', 'main'] as CapzBehaviour[]) {
    it(`${behaviour}: over a scale-up the ScaleSet conditions CAPZ does not mark keep their value, every False one is Info, and all are True at the end`, async () => {
      const { sim, world } = await fleet(1, 3, behaviour);
      const store = sim.kube.cluster('mgmt-0').store;
      store.patch(MP, 'default', 'pool0', 'merge', { spec: { replicas: 5 } });
      const seen: Cond[][] = [];
      for (let i = 0; i < 8; i++) {
        pass(world);
        seen.push(store.get(AMP, 'default', 'pool0').status?.conditions as Cond[]);
      }
      const of = (conds: Cond[], type: string) => conds.find((c) => c.type === type);
      // The scale set was Updating first (ScaleSetModelUpdated False); when it is Succeeded with too few ready,
      // only ScaleSetDesiredReplicas is marked, so ScaleSetModelUpdated is still False beside it.
      const scaling = seen.filter((c) => of(c, 'ScaleSetDesiredReplicas')?.reason === 'ScaleSetScalingUp');
      expect(scaling.length).toBeGreaterThan(0);
      for (const c of scaling)
        expect(of(c, 'ScaleSetModelUpdated')).toMatchObject({ status: 'False', reason: 'ScaleSetModelOutOfDate' });
      for (const c of seen.flat().filter((x) => x.status === 'False'))
        expect(c.severity, `${c.type} ${c.reason}`).toBe('Info');
      const last = seen.at(-1) as Cond[];
      expect(
        last.filter((c) => c.type.startsWith('ScaleSet') || c.type === 'Ready').map((c) => [c.type, c.status]),
      ).toEqual([
        ['Ready', 'True'],
        ['ScaleSetDesiredReplicas', 'True'],
        ['ScaleSetModelUpdated', 'True'],
        ['ScaleSetRunning', 'True'],
      ]);
      expect(store.get(AMP, 'default', 'pool0').status).toMatchObject({
        ready: true,
        replicas: 5,
        provisioningState: 'Succeeded',
      });
    });
  }
});

/** The two lists of a fleet pool (pool0 of `mgmt`). */
function lists(sim: Simulation, mgmt: string): { amp: string[]; mp: string[] } {
  const store = sim.kube.cluster(mgmt).store;
  return {
    amp: store.get(AMP, 'default', 'pool0').spec?.providerIDList as string[],
    mp: store.get(MP, 'default', 'pool0').spec?.providerIDList as string[],
  };
}

/** pool0 of `mgmt` as poolscope's analysis reads it from the same objects and the same Azure read. */
function driftKinds(sim: Simulation, mgmt: string, workload: string): string[] {
  const store = sim.kube.cluster(mgmt).store;
  const [rec] = [...sim.azure.state.scaleSets.values()].filter((r) => r.resourceGroup === `rg-${workload}`);
  if (!rec) throw new Error(`no scale set for ${workload}`);
  const detail = analyzePool(
    {
      context: mgmt,
      machinePool: store.get(MP, 'default', 'pool0'),
      azureMachinePool: store.get(AMP, 'default', 'pool0'),
      azureMachinePoolMachines: store.peek(AMPM) as KubeObject[],
      machines: store.peek(MACHINE) as KubeObject[],
      workload: { state: 'ok', nodes: sim.kube.cluster(workload).store.peek(NODE) as KubeObject[] },
      azure: { state: 'ok', vmss: rec.body, vms: [...rec.vms.values()] },
    },
    { now: new Date().toISOString() },
  );
  return [...new Set(detail.drift.map((d) => d.kind))];
}

describe('CAPZ providerIDList order in the world', () => {
  it("pre-1.20 lists the machines in its cache's order, which changes between reconciles, and CAPI copies each order; main keeps the list sorted", async () => {
    const { sim, world } = await fleet(2, 5, { 'mgmt-0': 'pre-1.20', 'mgmt-1': 'main' }, { seed: 1 });
    const ids = [...lists(sim, 'mgmt-0').amp].sort();
    const orders = { pre: new Set<string>(), main: new Set<string>() };
    for (let i = 0; i < 10; i++) {
      pass(world);
      const pre = lists(sim, 'mgmt-0');
      const main = lists(sim, 'mgmt-1');
      // The same machines every time; the AzureMachinePool is ready, so CAPI's ordered compare copies each order.
      expect([...pre.amp].sort()).toEqual(ids);
      expect(pre.mp).toEqual(pre.amp);
      expect(main.amp).toEqual([...main.amp].sort());
      expect(main.mp).toEqual(main.amp);
      orders.pre.add(pre.amp.join());
      orders.main.add(main.amp.join());
    }
    expect(orders.pre.size).toBeGreaterThan(1);
    expect(orders.main.size).toBe(1);
  });

  it('pre-1.20: while a scale-up holds the gate shut, the AzureMachinePool list reorders and the MachinePool list does not: poolscope reads order-only', async () => {
    const { sim, world } = await fleet(2, 6, { 'mgmt-0': 'pre-1.20', 'mgmt-1': 'main' }, { seed: 1 });
    for (const mgmt of ['mgmt-0', 'mgmt-1'])
      sim.kube.cluster(mgmt).store.patch(MP, 'default', 'pool0', 'merge', { spec: { replicas: 8 } });
    // One pass: CAPZ asks Azure for two more VMs, the scale set turns Updating and (before 1.20) not ready;
    // Azure makes the VMs on the next pass.
    pass(world);
    const pre = lists(sim, 'mgmt-0');
    expect(sim.kube.cluster('mgmt-0').store.get(AMP, 'default', 'pool0').status).toMatchObject({
      ready: false,
      provisioningState: 'Updating',
    });
    expect([...pre.amp].sort()).toEqual([...pre.mp].sort());
    expect(pre.amp).not.toEqual(pre.mp);
    expect(driftKinds(sim, 'mgmt-0', 'wl-0')).toEqual(['order-only']);
    expect(driftKinds(sim, 'mgmt-1', 'wl-1')).toEqual([]);
  });
});
