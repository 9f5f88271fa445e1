// The world's controller pass, a step at a time: the loop runs it in slices (so a large fleet's writes reach
// the watchers spread out, not as one burst), and anything may change between two steps.

import { afterEach, describe, expect, it } from 'vitest';
import { AMPM_POOL_LABEL } from '../../lib/slim';
import { startSimulation, type Simulation } from '../index';
import { findByKind, type ResourceDef } from '../kube/resources';
import { kubectl } from '../kube/testing';
import { fleetScenario, parseFleetSpec } from './fleet';

const AMP = findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureMachinePool') as ResourceDef;
const AMPM = findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureMachinePoolMachine') as ResourceDef;
const NODE = findByKind('v1', 'Node') as ResourceDef;
const MP = findByKind('cluster.x-k8s.io/v1beta2', 'MachinePool') as ResourceDef;
const MACHINE = findByKind('cluster.x-k8s.io/v1beta2', 'Machine') as ResourceDef;

let sim: Simulation | null = null;
afterEach(async () => {
  await sim?.stop();
  sim = null;
});

describe('world pass', () => {
  it('works through a pool at a time, each step reading its objects afresh', async () => {
    sim = await startSimulation(fleetScenario(parseFleetSpec('1x2x3')), { log: () => {} });
    const world = sim.world;
    if (!world) throw new Error('the fleet runs with controllers');
    world.stop();
    const store = sim.kube.cluster('mgmt-0').store;
    const ampmsOf = (amp: string) => store.peek(AMPM).filter((a) => a.metadata?.labels?.[AMPM_POOL_LABEL] === amp);
    const [victim] = ampmsOf('pool1');
    if (!victim) throw new Error('pool1 has no AzureMachinePoolMachines');
    const name = String(victim.metadata?.name);
    const oldUid = victim.metadata?.uid;

    const steps = world.pass();
    // Two scale sets, then the first pool (the pass has listed the cluster's AMPMs by then).
    for (let i = 0; i < 3; i++) expect(steps.next().done).toBe(false);
    // Between two steps someone deletes one of the second pool's AMPMs (its VM stays) and touches its
    // AzureMachinePool, so CAPZ reconciles it in this pass.
    store.update(
      AMPM,
      'default',
      name,
      { ...store.get(AMPM, 'default', name), metadata: { ...victim.metadata, finalizers: [] } },
      { force: true },
    );
    store.delete(AMPM, 'default', name);
    store.patch(AMP, 'default', 'pool1', 'merge', { metadata: { annotations: { touched: 'yes' } } });
    expect(store.has(AMPM, 'default', name)).toBe(false);
    let rest = 0;
    while (!steps.next().done) rest++;
    expect(rest).toBe(1);
    // CAPZ saw the AMPM gone and made a new one for the instance (a list taken before would still hold it).
    expect(store.has(AMPM, 'default', name)).toBe(true);
    expect(store.get(AMPM, 'default', name).metadata?.uid).not.toBe(oldUid);
    expect(ampmsOf('pool1')).toHaveLength(3);
  });
});

describe('cloud node lifecycle', () => {
  it('marks the Node of a VM gone Ready=Unknown, then deletes it; the other Nodes stay', async () => {
    const scenario = fleetScenario(parseFleetSpec('1x1x3'));
    // 45 simulated seconds are 150 ms here.
    sim = await startSimulation({ ...scenario, speed: 300 }, { log: () => {} });
    // CAPI paused: once the list drops the VM, it would delete the Node itself (deleteRetiredNodes).
    sim.kube.cluster('mgmt-0').store.patch(MP, 'default', 'pool0', 'merge', {
      metadata: { annotations: { 'cluster.x-k8s.io/paused': 'true' } },
    });
    const workload = sim.kube.cluster('wl-0').store;
    const [rec] = [...sim.azure.state.scaleSets.values()];
    if (!rec) throw new Error('the fleet has no scale set');
    const [member, vm] = [...rec.vms][0] ?? [];
    if (!member || !vm) throw new Error('the scale set has no VM');
    const node = workload.peek(NODE).find((n) => n.spec?.providerID === `azure://${String(vm.id)}`);
    if (!node) throw new Error(`no Node for ${String(vm.id)}`);
    const name = String(node.metadata?.name);
    const others = workload
      .peek(NODE)
      .filter((n) => n.metadata?.name !== name)
      .map((n) => n.metadata?.name);
    expect(others).toHaveLength(2);
    const ready = () =>
      (
        workload.peekOne(NODE, undefined, name)?.status?.conditions as { type: string; status: string }[] | undefined
      )?.find((c) => c.type === 'Ready')?.status;
    expect(ready()).toBe('True');
    const seen = new Set<string | undefined>();
    sim.azure.state.deleteVm(rec, member);
    const deadline = Date.now() + 10_000;
    while (workload.has(NODE, undefined, name) && Date.now() < deadline) {
      seen.add(ready());
      await new Promise((r) => setTimeout(r, 2));
    }
    expect(workload.has(NODE, undefined, name)).toBe(false);
    expect(seen).toContain('Unknown');
    for (const other of others) expect(workload.has(NODE, undefined, String(other))).toBe(true);
  });
});

describe('MachinePool deletion', () => {
  it('`kubectl delete machinepool` takes the scale set, AMPMs, AzureMachinePool, Machines and Nodes with it, then the MachinePool; the other pool stays', async () => {
    sim = await startSimulation(fleetScenario(parseFleetSpec('1x2x3')), { log: () => {} });
    const store = sim.kube.cluster('mgmt-0').store;
    const workload = sim.kube.cluster('wl-0').store;
    const nodesOf = (pool: string) =>
      ((store.get(MP, 'default', pool).status?.nodeRefs as { name: string }[] | undefined) ?? []).map((r) => r.name);
    const deadline0 = Date.now() + 10_000;
    while ((nodesOf('pool0').length < 3 || nodesOf('pool1').length < 3) && Date.now() < deadline0)
      await new Promise((r) => setTimeout(r, 20));
    const [nodes0, nodes1] = [nodesOf('pool0'), nodesOf('pool1')];
    expect(nodes0).toHaveLength(3);
    const scaleSets = () => [...sim!.azure.state.scaleSets.values()].map((r) => String(r.body.name));
    expect(scaleSets()).toHaveLength(2);
    const r = await kubectl(sim.kubeconfigPath, [
      '--context',
      'mgmt-0',
      'delete',
      'machinepool',
      'pool0',
      '-n',
      'default',
      '--wait=true',
      '--timeout=20s',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(store.has(MP, 'default', 'pool0')).toBe(false);
    expect(store.has(AMP, 'default', 'pool0')).toBe(false);
    expect(store.peek(AMPM).filter((a) => a.metadata?.labels?.[AMPM_POOL_LABEL] === 'pool0')).toEqual([]);
    expect(store.peek(MACHINE).filter((m) => m.metadata?.labels?.['cluster.x-k8s.io/pool-name'] === 'pool0')).toEqual(
      [],
    );
    for (const n of nodes0) expect(workload.has(NODE, undefined, n)).toBe(false);
    expect(scaleSets()).toHaveLength(1);
    // The other pool is as it was.
    expect(store.has(MP, 'default', 'pool1')).toBe(true);
    for (const n of nodes1) expect(workload.has(NODE, undefined, n)).toBe(true);
  });
});
