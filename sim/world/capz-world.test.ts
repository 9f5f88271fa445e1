// The simulated CAPZ inside the living world, driven a controller pass at a time (no timers): what its
// AzureMachinePool writes look like over a scale-up, as upstream's setProvisioningStateAndConditions has them.

import { afterEach, describe, expect, it } from 'vitest';
import { startSimulation, type Simulation } from '../index';
import { findByKind, type ResourceDef } from '../kube/resources';
import type { CapzBehaviour } from './capz-behaviour';
import { fleetScenario } from './fleet';
import { World, type WorldOptions } from './world';

const AMP = findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureMachinePool') as ResourceDef;
const MP = findByKind('cluster.x-k8s.io/v1beta2', 'MachinePool') as ResourceDef;

/** Every simulated delay zero: each pass moves every pool one step on. */
const NO_DELAYS = { provision: 0, delete: 0, join: 0, ready: 0, capzRequeue: 0, nodeGone: 0 };

let sim: Simulation | null = null;
afterEach(async () => {
  await sim?.stop();
  sim = null;
});

/** A static fleet (its own controllers off) and a world over it that the test drives pass by pass. */
async function fleet(clusters: number, instances: number, capz: WorldOptions['capz'], extra: Partial<WorldOptions> = {}): Promise<{ sim: Simulation; world: World }> {
  sim = await startSimulation(fleetScenario({ clusters, poolsPerCluster: 1, instancesPerPool: instances, controllers: false }), { log: () => {} });
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
      for (const c of scaling) expect(of(c, 'ScaleSetModelUpdated')).toMatchObject({ status: 'False', reason: 'ScaleSetModelOutOfDate' });
      for (const c of seen.flat().filter((x) => x.status === 'False')) expect(c.severity, `${c.type} ${c.reason}`).toBe('Info');
      const last = seen.at(-1) as Cond[];
      expect(last.filter((c) => c.type.startsWith('ScaleSet') || c.type === 'Ready').map((c) => [c.type, c.status])).toEqual([
        ['Ready', 'True'], ['ScaleSetDesiredReplicas', 'True'], ['ScaleSetModelUpdated', 'True'], ['ScaleSetRunning', 'True'],
      ]);
      expect(store.get(AMP, 'default', 'pool0').status).toMatchObject({ ready: true, replicas: 5, provisioningState: 'Succeeded' });
    });
  }
});
