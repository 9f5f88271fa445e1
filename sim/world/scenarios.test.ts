// Scenario files and the living world, observed from outside as the product will: kubectl, client-node and
// the Azure SDK against the simulated servers — never through simulator internals for the assertions.
// Long because every scenario file is checked here, each against the same servers.

import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ComputeManagementClient } from '@azure/arm-compute';
import { ClientSecretCredential } from '@azure/identity';
import { CustomObjectsApi, KubeConfig, makeInformer, type KubernetesObject } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_AZURE } from '../../lib/fixtures/objects';
import { instanceProviderId } from '../../lib/fixtures/pool';
import type { KubeObject } from '../../lib/unstructured';
import { churnDue, startSimulation, type Simulation } from '../index';
import { findUpstreamDir, loadCrdSchemas, validateAgainstCrd } from '../kube/crd-schema';
import { RESOURCES } from '../kube/resources';
import { kubectl, writeKubeconfig } from '../kube/testing';
import { fleetScenario, parseFleetSpec } from './fleet';
import { parseScenario, readScenario, ScenarioError } from './scenario';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const DIR = path.join(ROOT, 'sim', 'scenarios');
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .sort();
const upstream = findUpstreamDir(ROOT);
const schemas = upstream ? loadCrdSchemas(upstream) : null;

let running: Simulation[] = [];
afterEach(async () => {
  await Promise.all(running.map((s) => s.stop()));
  running = [];
});

async function start(file: string, speed?: number): Promise<Simulation> {
  const sim = await startSimulation(readScenario(path.join(DIR, file)), { speed, log: () => {} });
  running.push(sim);
  return sim;
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const json = async (kc: string, args: string[]) => {
  const r = await kubectl(kc, [...args, '-o', 'json']);
  if (r.code !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as KubeObject;
};

describe('shipped scenarios', () => {
  it('include the seeds, one per operator case, and the demo', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'seed-scale-up-frozen.yaml',
        'seed-one-vm-failed.yaml',
        'demo.yaml',
        's01-scale-up-pre-fix.yaml',
        's18-arm-throttled.yaml',
      ]),
    );
    expect(files.filter((f) => /^s\d\d-/.test(f))).toHaveLength(19);
  });

  it.each(files.map((f) => [f]))('%s loads, and every object it produces is valid', async (file) => {
    const sim = await start(file);
    let checked = 0;
    for (const [, server] of sim.kube.clusters) {
      for (const r of RESOURCES.filter((x) => !x.createOnly)) {
        for (const version of r.versions.map((v) => v.name)) {
          for (const o of server.store.list(r, {}, version).items) {
            const errors = schemas ? validateAgainstCrd(schemas, o) : null;
            if (errors) {
              expect(errors, `${file}: ${o.apiVersion} ${o.kind} ${o.metadata?.name}`).toEqual([]);
              checked++;
            }
          }
        }
      }
    }
    if (schemas) expect(checked).toBeGreaterThan(0);
    expect(sim.stepErrors).toEqual([]);
  });
});

describe('scenario errors name the file, the line and what is wrong', () => {
  it.each([
    ['bad YAML', 'name: x\npools: [\n', /^f\.yaml:\d+: invalid YAML/],
    ['an unknown field', 'name: x\nbogus: 1\n', /^f\.yaml:2: unknown field "bogus"/],
    [
      'an unknown kind',
      'management:\n  m:\n    - apiVersion: apps/v1\n      kind: StatefulSet\n      metadata: { name: d }\n',
      /^f\.yaml:3: unknown kind apps\/v1 StatefulSet/,
    ],
    [
      'an unknown step action',
      'pools: [{ management: m, fixture: s05-flexible }]\nsteps:\n  - at: 5s\n    explode: {}\n',
      /^f\.yaml:3: a step needs exactly one action/,
    ],
    [
      'a bad duration',
      'pools: [{ management: m, fixture: s05-flexible }]\nsteps:\n  - at: soon\n    throttle: { subscription: s, seconds: 1 }\n',
      /^f\.yaml:3: at must be a duration/,
    ],
    [
      'a step referring to a missing pool',
      'pools: [{ management: m, fixture: s05-flexible }]\nsteps:\n  - at: 5s\n    scale: { cluster: m, name: nope, replicas: 2 }\n',
      /^f\.yaml:3: step refers to MachinePool default\/nope in m/,
    ],
    [
      'a step referring to a missing cluster',
      'pools: [{ management: m, fixture: s05-flexible }]\nsteps:\n  - at: 5s\n    scale: { cluster: other, name: pool0, replicas: 2 }\n',
      /^f\.yaml:4: no management cluster named "other"/,
    ],
    ['an unknown fixture', 'pools: [{ management: m, fixture: s99 }]\n', /^f\.yaml:1: unknown fixture "s99"/],
    ['no management cluster', 'name: empty\n', /^f\.yaml:1: a scenario needs at least one management cluster/],
    [
      'an AKS pool of an unknown flavour',
      'aksPools:\n  - management: m\n    spec: { flavour: aks, mpList: [0] }\n',
      /^f\.yaml:3: flavour must be one of aks-managed, aks-aso/,
    ],
    [
      'an AKS pool without its list',
      'aksPools:\n  - management: m\n    spec: { flavour: aks-aso }\n',
      /^f\.yaml:3: mpList must be a list of instance numbers/,
    ],
    [
      'an AKS step where the world does not move AKS pools',
      'aksPools:\n  - management: m\n    spec: { flavour: aks-aso, name: p, mpList: [0] }\nsteps:\n  - at: 5s\n    aksAutoscale: { cluster: m, name: p, count: 2 }\n',
      /^f\.yaml:6: aksAutoscale needs aksControllers: true/,
    ],
    [
      'aksControllers without the controllers',
      'aksControllers: true\naksPools:\n  - management: m\n    spec: { flavour: aks-aso, mpList: [0] }\n',
      /^f\.yaml:1: aksControllers needs controllers: on/,
    ],
  ])('%s', (_name, text, message) => {
    expect(() => parseScenario(text, 'f.yaml')).toThrow(ScenarioError);
    expect(() => parseScenario(text, 'f.yaml')).toThrow(message);
  });
});

describe('seed scenarios with the controllers on', () => {
  it('seed-scale-up-frozen: the MachinePool list freezes at 3 while the AzureMachinePool lists 5, then recovers (kubectl)', async () => {
    const sim = await start('seed-scale-up-frozen.yaml', 20);
    const kc = sim.kubeconfigPath;
    const missing = [instanceProviderId(DEFAULT_AZURE, 'pool0', '3'), instanceProviderId(DEFAULT_AZURE, 'pool0', '4')];
    const frozen = await until('the frozen state', async () => {
      const amp = await json(kc, ['get', 'amp', 'pool0', '-n', 'default']);
      const mp = await json(kc, ['get', 'mp', 'pool0', '-n', 'default']);
      const ampList = amp.spec?.providerIDList as string[];
      return ampList.length === 5 ? { amp, mp } : undefined;
    });
    expect(frozen.amp.status).toMatchObject({ ready: false, provisioningState: 'Updating' });
    const mpList = frozen.mp.spec?.providerIDList as string[];
    expect(mpList).toHaveLength(3);
    // Sorted here: before CAPZ 1.23 the AzureMachinePool list is in its cache's order, which varies.
    expect((frozen.amp.spec?.providerIDList as string[]).filter((id) => !mpList.includes(id)).sort()).toEqual(missing);
    expect(frozen.mp.status).toMatchObject({
      initialization: { infrastructureProvisioned: false },
      phase: 'Provisioned',
    });
    // v1beta1 clients see the same freeze at v1beta1 paths.
    const b1 = await json(kc, ['get', 'machinepools.v1beta1.cluster.x-k8s.io', 'pool0', '-n', 'default']);
    expect(b1.status).toMatchObject({ infrastructureReady: false });
    const recovered = await until(
      'the freeze to end',
      async () => {
        const mp = await json(kc, ['get', 'mp', 'pool0', '-n', 'default']);
        return (mp.spec?.providerIDList as string[]).length === 5 ? mp : undefined;
      },
      25_000,
    );
    expect(recovered.status).toMatchObject({ initialization: { infrastructureProvisioned: true } });
    expect(sim.world?.errors).toEqual([]);
  }, 60_000);

  it('seed-one-vm-failed: the failed instance stays missing from the MachinePool list (client-node informer)', async () => {
    const sim = await start('seed-one-vm-failed.yaml', 20);
    const kc = new KubeConfig();
    kc.loadFromFile(sim.kubeconfigPath);
    kc.setCurrentContext('mgmt-weu');
    const api = kc.makeApiClient(CustomObjectsApi);
    const group = { group: 'infrastructure.cluster.x-k8s.io', version: 'v1beta1', plural: 'azuremachinepools' };
    const informer = makeInformer(
      kc,
      '/apis/infrastructure.cluster.x-k8s.io/v1beta1/azuremachinepools',
      () => api.listClusterCustomObject(group) as never,
    );
    const states: string[] = [];
    informer.on('update', (o: KubernetesObject) => states.push(String((o as KubeObject).status?.provisioningState)));
    await informer.start();
    try {
      await until('the AzureMachinePool to fail', async () => (states.includes('Failed') ? true : undefined));
      const amp = informer.get('pool0', 'default') as KubeObject;
      expect(amp.status).toMatchObject({ ready: false, provisioningState: 'Failed' });
      const failed = instanceProviderId(DEFAULT_AZURE, 'pool0', '3');
      expect(amp.spec?.providerIDList).toContain(failed);
      // Give CAPI several reconciles: the list must stay frozen without the failed instance.
      await new Promise((r) => setTimeout(r, 1500));
      const mp = (await api.getNamespacedCustomObject({
        group: 'cluster.x-k8s.io',
        version: 'v1beta2',
        plural: 'machinepools',
        namespace: 'default',
        name: 'pool0',
      })) as KubeObject;
      expect(mp.spec?.providerIDList).toHaveLength(3);
      expect(mp.spec?.providerIDList).not.toContain(failed);
      // Azure tells why, through the SDK as production reads it.
      const cred = new ClientSecretCredential(
        sim.env.AZURE_TENANT_ID as string,
        sim.env.AZURE_CLIENT_ID as string,
        sim.env.AZURE_CLIENT_SECRET as string,
        { authorityHost: sim.env.AZURE_AUTHORITY_HOST, disableInstanceDiscovery: true },
      );
      const compute = new ComputeManagementClient(cred, DEFAULT_AZURE.subscriptionId, {
        endpoint: sim.env.POOLSCOPE_ARM_ENDPOINT,
      });
      const vmss = await compute.virtualMachineScaleSets.get(DEFAULT_AZURE.resourceGroup, 'pool0');
      expect(vmss.provisioningState).toBe('Failed');
      const view = await compute.virtualMachineScaleSetVMs.getInstanceView(DEFAULT_AZURE.resourceGroup, 'pool0', '3');
      expect(view.statuses?.[0]?.code).toBe('ProvisioningState/failed/OSProvisioningTimedOut');
      // CAPZ records the failure as an Event on the AMPM, as kubectl shows it.
      const events = await kubectl(sim.kubeconfigPath, [
        'get',
        'events',
        '-n',
        'default',
        '--field-selector',
        'metadata.namespace=default',
        '-o',
        'json',
      ]);
      const items = (
        JSON.parse(events.stdout) as {
          items: { reason: string; involvedObject: { kind: string; name: string }; message: string }[];
        }
      ).items;
      expect(items.map((e) => [e.reason, e.involvedObject.kind, e.involvedObject.name])).toContainEqual([
        'FailedVMState',
        'AzureMachinePoolMachine',
        'pool0-3',
      ]);
    } finally {
      await informer.stop();
    }
  }, 60_000);
});

describe('world events', () => {
  it('pause, throttle, out-of-band deletion and an unreachable workload cluster take effect at their times', async () => {
    const text = `
controllers: on
capz: "1.26"
speed: 20
pools:
  - management: mgmt-weu
    spec: { cluster: prod-weu, name: pool0, replicas: 3, instances: [{ member: "0" }, { member: "1" }, { member: "2" }] }
steps:
  - at: 20s
    deleteVm: { cluster: mgmt-weu, name: pool0, member: "2" }
  - at: 20s
    throttle: { subscription: ${DEFAULT_AZURE.subscriptionId}, seconds: 600 }
  - at: 20s
    pauseCluster: { cluster: mgmt-weu, name: prod-weu, paused: true }
  - at: 20s
    unreachable: { workload: prod-weu, unreachable: true }
`;
    const sim = await startSimulation(parseScenario(text, 'inline.yaml'), { log: () => {} });
    running.push(sim);
    const kc = sim.kubeconfigPath;
    const cred = new ClientSecretCredential(
      sim.env.AZURE_TENANT_ID as string,
      sim.env.AZURE_CLIENT_ID as string,
      sim.env.AZURE_CLIENT_SECRET as string,
      { authorityHost: sim.env.AZURE_AUTHORITY_HOST, disableInstanceDiscovery: true },
    );
    const compute = new ComputeManagementClient(cred, DEFAULT_AZURE.subscriptionId, {
      endpoint: sim.env.POOLSCOPE_ARM_ENDPOINT,
      retryOptions: { maxRetries: 0 },
    });
    expect((await compute.virtualMachineScaleSets.get(DEFAULT_AZURE.resourceGroup, 'pool0')).sku?.capacity).toBe(3);
    await until('the cluster to be paused', async () =>
      (await json(kc, ['get', 'cluster', 'prod-weu', '-n', 'default'])).spec?.paused === true ? true : undefined,
    );
    await expect(compute.virtualMachineScaleSets.get(DEFAULT_AZURE.resourceGroup, 'pool0')).rejects.toMatchObject({
      statusCode: 429,
    });
    const secret = await json(kc, ['get', 'secret', 'prod-weu-kubeconfig', '-n', 'default']);
    const wl = writeKubeconfig(
      (await import('yaml')).parse(
        Buffer.from((secret as unknown as { data: { value: string } }).data.value, 'base64').toString(),
      ) as Record<string, unknown>,
    );
    const nodes = await kubectl(wl, ['get', 'nodes', '--request-timeout=3s']);
    expect(nodes.code).not.toBe(0);
    // Paused: CAPI and CAPZ leave the lists alone although the VM is gone.
    await new Promise((r) => setTimeout(r, 1000));
    const amp = await json(kc, ['get', 'amp', 'pool0', '-n', 'default']);
    expect(amp.spec?.providerIDList).toContain(instanceProviderId(DEFAULT_AZURE, 'pool0', '2'));
  }, 60_000);
});

describe('churn', () => {
  it("deletes a minute's share at the minute, or spread a second's share a second: the same over a minute", () => {
    expect(churnDue(100_000, 0.01, false)).toEqual({ n: 1000, owed: 0 });
    expect(churnDue(10, 0.01, false).n).toBe(1);
    let owed = 0;
    let total = 0;
    const ticks: number[] = [];
    for (let s = 0; s < 60; s++) {
      const t = churnDue(2_000, 0.01, true, owed);
      owed = t.owed;
      total += t.n;
      ticks.push(t.n);
    }
    // 20 a minute over 60 ticks: none larger than one, a third of the ticks delete one.
    expect(total).toBeGreaterThanOrEqual(19);
    expect(total).toBeLessThanOrEqual(20);
    expect(Math.max(...ticks)).toBe(1);
  });
});

describe('fleet generator', () => {
  it('spreads N clusters × M pools × K instances over subscriptions and regions, and serves them', async () => {
    const sc = fleetScenario(parseFleetSpec('3x2x4,subs=2,regions=westeurope+northeurope,churn=0.5,static'));
    expect([...sc.management.keys()]).toEqual(['mgmt-0', 'mgmt-1', 'mgmt-2']);
    expect(sc.azure).toHaveLength(6);
    expect(sc.azure.map((s) => s.vms.length)).toEqual([4, 4, 4, 4, 4, 4]);
    expect(new Set(sc.azure.map((s) => String(s.vmss.id).split('/')[2])).size).toBe(2);
    expect(new Set(sc.azure.map((s) => s.vmss.location))).toEqual(new Set(['westeurope', 'northeurope']));
    // Cluster c in subscription c mod 2 and region ⌊c/2⌋ mod 2: three clusters, three subscription+region pairs.
    expect(new Set(sc.azure.map((s) => `${String(s.vmss.id).split('/')[2]}|${String(s.vmss.location)}`)).size).toBe(3);
    expect(sc.churnPerMinute).toBe(0.5);
    expect(sc.churnSpread).toBeUndefined();
    expect(fleetScenario(parseFleetSpec('3x2x4,churn=0.5,spread')).churnSpread).toBe(true);
    const sim = await startSimulation(sc, { log: () => {} });
    running.push(sim);
    const kc = writeKubeconfig(sim.kube.kubeconfigFor('mgmt-1'));
    const r = await kubectl(kc, ['get', 'mp', '-A', '-o', 'name']);
    expect(r.stdout.trim().split('\n')).toEqual([
      'machinepool.cluster.x-k8s.io/pool0',
      'machinepool.cluster.x-k8s.io/pool1',
    ]);
  });

  it('rejects a malformed fleet spec', () => {
    expect(() => parseFleetSpec('3x2')).toThrow(/fleet spec must look like/);
    expect(() => parseFleetSpec('3x2x4,bogus=1')).toThrow(/unknown fleet option "bogus"/);
  });
});

describe('npm run sim -- --scenario', () => {
  it('starts the fleet, writes the kubeconfig and an env file with the ordinary settings, and stops on Ctrl-C', async () => {
    const child = spawn(
      path.join(ROOT, 'node_modules', '.bin', 'tsx'),
      [path.join(ROOT, 'sim', 'cli.ts'), '--scenario', path.join(DIR, 's04-one-vm-failed-main.yaml')],
      { cwd: ROOT },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const envPath = await until('the env file line', async () => /^env file:\s+(.+)$/m.exec(out)?.[1]);
    const env = Object.fromEntries(
      readFileSync(envPath, 'utf8')
        .split('\n')
        .filter((l) => l && !l.startsWith('#'))
        .map((l) => l.split(/=(.*)/s).slice(0, 2) as [string, string]),
    );
    expect(Object.keys(env).sort()).toEqual([
      'AZURE_AUTHORITY_HOST',
      'AZURE_CLIENT_ID',
      'AZURE_CLIENT_SECRET',
      'AZURE_TENANT_ID',
      'KUBECONFIG',
      'NODE_EXTRA_CA_CERTS',
      'POOLSCOPE_ARM_ENDPOINT',
      'POOLSCOPE_AZURE_DISABLE_INSTANCE_DISCOVERY',
      'POOLSCOPE_CONTEXTS',
    ]);
    const r = await kubectl(env.KUBECONFIG as string, [
      'get',
      'amp',
      'pool0',
      '-o',
      'jsonpath={.status.provisioningState}',
    ]);
    expect(r.stdout).toBe('Failed');
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  }, 30_000);

  it('reports a bad scenario file with its line and exits 1', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'poolscope-scn-'));
    const file = path.join(dir, 'bad.yaml');
    writeFileSync(file, 'name: bad\npools:\n  - management: m\n    fixture: s99\n');
    const child = spawn(
      path.join(ROOT, 'node_modules', '.bin', 'tsx'),
      [path.join(ROOT, 'sim', 'cli.ts'), '--scenario', file],
      { cwd: ROOT },
    );
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(err).toContain(`sim: ${file}:4: unknown fixture "s99"`);
  }, 30_000);
});

describe('raw scenario format', () => {
  it('loads Kubernetes objects as kubectl prints them and Azure objects as the REST API returns them', async () => {
    const { stringify } = await import('yaml');
    const { buildScenario } = await import('../../lib/fixtures/scenarios');
    const { input } = buildScenario('s08-node-never-joined');
    if (input.azure?.state !== 'ok' || input.workload?.state !== 'ok') throw new Error('fixture shape');
    const text = stringify({
      name: 'raw',
      controllers: 'off',
      management: {
        'mgmt-weu': [
          input.cluster,
          input.machinePool,
          input.azureMachinePool,
          ...(input.azureMachinePoolMachines ?? []),
          ...(input.machines ?? []),
        ],
      },
      workload: { 'prod-weu': input.workload.nodes },
      azure: { scaleSets: [{ vmss: input.azure.vmss, vms: input.azure.vms }] },
    });
    const sim = await startSimulation(parseScenario(text, 'raw.yaml'), { log: () => {} });
    running.push(sim);
    const amp = await json(sim.kubeconfigPath, ['get', 'amp', 'pool0', '-n', 'default']);
    expect(amp.spec?.providerIDList).toEqual((input.azureMachinePool as KubeObject).spec?.providerIDList);
    const cred = new ClientSecretCredential(
      sim.env.AZURE_TENANT_ID as string,
      sim.env.AZURE_CLIENT_ID as string,
      sim.env.AZURE_CLIENT_SECRET as string,
      { authorityHost: sim.env.AZURE_AUTHORITY_HOST, disableInstanceDiscovery: true },
    );
    const vms = [];
    for await (const vm of new ComputeManagementClient(cred, DEFAULT_AZURE.subscriptionId, {
      endpoint: sim.env.POOLSCOPE_ARM_ENDPOINT,
    }).virtualMachineScaleSetVMs.list(DEFAULT_AZURE.resourceGroup, 'pool0'))
      vms.push(vm.instanceId);
    expect(vms).toEqual(['0', '1', '2']);
  });
});

describe('an AKS pool of type VirtualMachines', () => {
  it('keeps its VMs as a scale set Compute does not show; a pool of scale sets shows its own', () => {
    const text = (type: string) =>
      `aksPools:\n  - management: m\n    spec: { flavour: aks-aso, mpList: [0], live: { count: 1, type: ${type} } }\n`;
    expect(parseScenario(text('VirtualMachines'), 'f.yaml').azure.map((s) => s.standalone)).toEqual([true]);
    expect(parseScenario(text('VirtualMachineScaleSets'), 'f.yaml').azure.map((s) => s.standalone)).toEqual([
      undefined,
    ]);
  });
});
