// Starts a whole simulated fleet from a scenario: management and workload Kubernetes API servers, Azure
// Resource Manager with its token endpoint, the living world, and the scenario's timed steps. Writes the
// kubeconfig and an env file with the ordinary settings a real user would set to reach the same things.

import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { KubeObject } from '../lib/unstructured';
import { SimAzureServer } from './azure/server';
import { findByKind, type ResourceDef } from './kube/resources';
import type { PolicyRule } from './kube/auth';
import { startKubeSimulator, type KubeSimulator } from './kube/simulator';
import { generateTls } from './kube/tls';
import { capzOf, type Scenario, type Step } from './world/scenario';
import { capzDeployment } from './world/capz-behaviour';
import { World } from './world/world';
import { writeEnvFile } from './env-file.mjs';

export interface SimulationOptions {
  /** Directory for the CA, kubeconfig and env file; a new temporary one by default. */
  stateDir?: string;
  /** Overrides the scenario's speed. */
  speed?: number;
  /** VMs per page of the VMSS-VMs list. */
  armPageSize?: number;
  /** More people and rules, besides operator and viewer (e.g. a ServiceAccount with rules from RBAC objects). */
  users?: { name: string; groups?: string[] }[];
  policy?: PolicyRule[];
  log?: (msg: string) => void;
}

export interface Simulation {
  scenario: Scenario;
  kube: KubeSimulator;
  azure: SimAzureServer;
  world: World | null;
  stateDir: string;
  kubeconfigPath: string;
  envPath: string;
  /** The settings written to the env file. */
  env: Record<string, string>;
  /** Errors from steps (kept; never thrown out of the timers). */
  stepErrors: string[];
  runStep(step: Step): void;
  stop(): Promise<void>;
}

const MP = findByKind('cluster.x-k8s.io/v1beta2', 'MachinePool') as ResourceDef;
const AMP = findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureMachinePool') as ResourceDef;
const CLUSTER = findByKind('cluster.x-k8s.io/v1beta2', 'Cluster') as ResourceDef;

/** Simulated people (besides `admin`): kubeconfigs `<stateDir>/kubeconfig-operator` and `-viewer`. */
const SIM_USERS = [
  { name: 'operator', groups: ['pool-operators'] },
  { name: 'viewer', groups: ['pool-viewers'] },
];
const SIM_POLICY: PolicyRule[] = [
  {
    groups: ['pool-operators', 'pool-viewers'],
    verbs: ['get', 'list', 'watch'],
    apiGroups: ['*'],
    resources: ['*'],
    namespaces: ['*'],
  },
  {
    groups: ['pool-operators'],
    verbs: ['patch'],
    apiGroups: ['cluster.x-k8s.io'],
    resources: ['machinepools'],
    namespaces: ['*'],
  },
  {
    groups: ['pool-operators'],
    verbs: ['patch'],
    apiGroups: ['infrastructure.cluster.x-k8s.io'],
    resources: ['azuremachinepools', 'azuremanagedmachinepools', 'azureasomanagedmachinepools'],
    namespaces: ['*'],
  },
];

export async function startSimulation(scenario: Scenario, opts: SimulationOptions = {}): Promise<Simulation> {
  const log = opts.log ?? ((m: string) => console.error(m));
  const stateDir = opts.stateDir ?? path.join(os.tmpdir(), `poolscope-sim-${process.pid}-${Date.now()}`);
  mkdirSync(stateDir, { recursive: true });
  const tls = await generateTls({ caDir: process.env.POOLSCOPE_SIM_CA_DIR ?? path.join(stateDir, 'ca') });
  const kube = await startKubeSimulator({
    clusters: [
      ...[...scenario.management].map(([name, objects]) => ({ name, role: 'management' as const, objects })),
      ...[...scenario.workload]
        .filter(([name]) => !scenario.management.has(name))
        .map(([name, objects]) => ({ name, role: 'workload' as const, objects })),
    ],
    tls,
    kubeconfigPath: path.join(stateDir, 'kubeconfig'),
    // Two people besides the admin, for poolscope's resync authorization: an operator who may patch pools
    // and a viewer who may only read. Their kubeconfigs (with their tokens) sit beside the admin's.
    users: [...SIM_USERS, ...(opts.users ?? [])],
    policy: [...SIM_POLICY, ...(opts.policy ?? [])],
    log,
  });
  const azure = new SimAzureServer({ tls, pageSize: opts.armPageSize });
  await azure.start();
  for (const s of scenario.azure) azure.state.putScaleSet(s.vmss, s.vms).standalone = s.standalone;
  for (const p of scenario.aksAgentPools) azure.state.putAgentPool(p);
  for (const t of scenario.throttled) azure.throttler.throttleSubscription(t.subscription, t.seconds);
  for (const w of scenario.unreachable) kube.clusters.get(w)?.setAvailable(false);

  const speed = opts.speed ?? scenario.speed;
  const world = scenario.controllers
    ? new World(kube, azure, {
        capz: scenario.capz,
        speed,
        delays: scenario.delays,
        aksControllers: scenario.aksControllers,
      })
    : null;
  // Each management cluster runs the CAPZ build the scenario names (the one whose behaviour the world plays).
  for (const name of scenario.management.keys()) {
    const behaviour = capzOf(scenario, name);
    if (
      !kube
        .cluster(name)
        .store.has(findByKind('apps/v1', 'Deployment') as ResourceDef, 'capz-system', 'capz-controller-manager')
    )
      kube.load(name, [capzDeployment(behaviour) as KubeObject]);
  }
  for (const w of scenario.unreachable) world?.unreachable.add(w);

  const client = azure.clients[0] as { tenantId: string; clientId: string; clientSecret: string };
  const env: Record<string, string> = {
    KUBECONFIG: kube.kubeconfigPath,
    AZURE_TENANT_ID: client.tenantId,
    AZURE_CLIENT_ID: client.clientId,
    AZURE_CLIENT_SECRET: client.clientSecret,
    AZURE_AUTHORITY_HOST: azure.url,
    POOLSCOPE_ARM_ENDPOINT: azure.url,
    POOLSCOPE_AZURE_DISABLE_INSTANCE_DISCOVERY: 'true',
    NODE_EXTRA_CA_CERTS: tls.caPath ?? '',
    // The kubeconfig also holds the workload clusters' contexts; poolscope watches the management ones.
    POOLSCOPE_CONTEXTS: [...scenario.management.keys()].join(','),
  };
  const envPath = path.join(stateDir, 'env');
  writeEnvFile(envPath, scenario.name, env);

  const stepErrors: string[] = [];
  const poolAmp = (ref: { cluster: string; namespace?: string; name: string }) => {
    const store = kube.cluster(ref.cluster).store;
    const ns = ref.namespace ?? 'default';
    const mp = store.get(MP, ns, ref.name);
    const ampName =
      (mp.spec?.template as { spec?: { infrastructureRef?: { name?: string } } } | undefined)?.spec?.infrastructureRef
        ?.name ?? ref.name;
    return { store, ns, mp, amp: store.get(AMP, ns, ampName) };
  };
  const scaleSetOf = (ref: { cluster: string; namespace?: string; name: string }) => {
    const id = String(poolAmp(ref).amp.spec?.providerID ?? '').replace(/^azure:\/\//, '');
    const m =
      /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Compute\/virtualMachineScaleSets\/([^/]+)$/i.exec(
        id,
      );
    const rec = m ? azure.state.get(m[1] as string, m[2] as string, m[3] as string) : undefined;
    if (!rec)
      throw new Error(`no scale set for MachinePool ${ref.name} (AzureMachinePool spec.providerID ${id || 'unset'})`);
    return rec;
  };
  const runStep = (step: Step): void => {
    if ('apply' in step) {
      const { cluster, object } = step.apply;
      kube.load(cluster, [object as KubeObject]);
    } else if ('mergePatch' in step) {
      const s = step.mergePatch;
      const r = findByKind(s.apiVersion, s.kind) as ResourceDef;
      kube
        .cluster(s.cluster)
        .store.patch(r, s.namespace ?? (r.namespaced ? 'default' : undefined), s.name, 'merge', s.patch, {
          version: s.apiVersion.split('/').pop(),
        });
    } else if ('delete' in step) {
      const s = step.delete;
      const r = findByKind(s.apiVersion, s.kind) as ResourceDef;
      kube.cluster(s.cluster).store.delete(r, s.namespace ?? (r.namespaced ? 'default' : undefined), s.name);
    } else if ('setAzure' in step) {
      azure.state.putScaleSet(step.setAzure.vmss, step.setAzure.vms ?? []);
    } else if ('deleteAzure' in step) {
      const m =
        /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Compute\/virtualMachineScaleSets\/([^/]+)$/i.exec(
          step.deleteAzure.scaleSet,
        );
      if (!m || !azure.state.deleteScaleSet(m[1] as string, m[2] as string, m[3] as string))
        throw new Error(`no scale set ${step.deleteAzure.scaleSet}`);
    } else if ('scale' in step) {
      const s = step.scale;
      kube.cluster(s.cluster).store.patch(MP, s.namespace ?? 'default', s.name, 'merge', {
        spec: { replicas: s.replicas },
      });
    } else if ('aksAutoscale' in step) {
      const s = step.aksAutoscale;
      if (!world) throw new Error('aksAutoscale needs controllers: on');
      world.aksAutoscale(s.cluster, s.namespace ?? 'default', s.name, s.count);
    } else if ('aksBusy' in step) {
      const s = step.aksBusy;
      if (!world) throw new Error('aksBusy needs controllers: on');
      world.aksBusy(s.cluster, s.namespace ?? 'default', s.name, s.state, s.seconds);
    } else if ('aksControlPlane' in step) {
      const s = step.aksControlPlane;
      if (!world) throw new Error('aksControlPlane needs controllers: on');
      world.aksControlPlane(s.cluster, s.namespace ?? 'default', s.name, s.version, s.seconds);
    } else if ('aksPerpetualDiff' in step) {
      const s = step.aksPerpetualDiff;
      if (!world) throw new Error('aksPerpetualDiff needs controllers: on');
      world.aksPerpetualDiff(s.cluster, s.namespace ?? 'default', s.name, s.enabled);
    } else if ('aksFailWrites' in step) {
      const s = step.aksFailWrites;
      if (!world) throw new Error('aksFailWrites needs controllers: on');
      const failure = s.code === null ? null : { code: s.code, message: s.message ?? `Injected ${s.code}.` };
      world.aksFailWrites(s.cluster, s.namespace ?? 'default', s.name, failure);
    } else if ('failInstances' in step) {
      const rec = scaleSetOf(step.failInstances);
      if (!world) throw new Error('failInstances needs controllers: on');
      world.failNextInstances(String(rec.body.id), step.failInstances.count, step.failInstances.errorCode);
    } else if ('deleteVm' in step) {
      const rec = scaleSetOf(step.deleteVm);
      if (!azure.state.deleteVm(rec, step.deleteVm.member))
        throw new Error(`no VM ${step.deleteVm.member} in ${rec.name}`);
    } else if ('nodeJoins' in step) {
      const rec = scaleSetOf(step.nodeJoins);
      if (!world) throw new Error('nodeJoins needs controllers: on');
      if (step.nodeJoins.enabled) world.noJoin.delete(String(rec.body.id).toLowerCase());
      else world.noJoin.add(String(rec.body.id).toLowerCase());
    } else if ('pauseCluster' in step) {
      const s = step.pauseCluster;
      kube
        .cluster(s.cluster)
        .store.patch(CLUSTER, s.namespace ?? 'default', s.name, 'merge', { spec: { paused: s.paused ? true : null } });
    } else if ('throttle' in step) {
      azure.throttler.throttleSubscription(step.throttle.subscription, step.throttle.seconds);
    } else if ('unreachable' in step) {
      const s = step.unreachable;
      kube.clusters.get(s.workload)?.setAvailable(!s.unreachable);
      if (s.unreachable) world?.unreachable.add(s.workload);
      else world?.unreachable.delete(s.workload);
    }
  };
  const timers = scenario.steps.map((step) =>
    setTimeout(
      () => {
        try {
          runStep(step);
        } catch (e) {
          const msg = `${scenario.file}:${step.line}: step at ${step.at}s failed: ${(e as Error).message}`;
          stepErrors.push(msg);
          log(msg);
        }
      },
      (step.at * 1000) / speed,
    ),
  );
  world?.start();
  // Churn: a fraction of all instances deleted out of band each simulated minute (the controllers replace them),
  // all at the minute (a fleet-wide burst), or spread over it, a second's share each second.
  const churn = scenario.churnPerMinute ?? 0;
  const spread = scenario.churnSpread === true;
  let owed = 0;
  const churnTimer =
    churn > 0 && world
      ? setInterval(
          () => {
            const all = [...azure.state.scaleSets.values()].flatMap((rec) =>
              [...rec.vms.keys()].map((member) => ({ rec, member })),
            );
            let n: number;
            ({ n, owed } = churnDue(all.length, churn, spread, owed));
            for (let i = 0; i < n && all.length; i++) {
              const [pick] = all.splice(Math.floor(Math.random() * all.length), 1);
              if (pick) azure.state.deleteVm(pick.rec, pick.member);
            }
          },
          (spread ? 1000 : 60_000) / speed,
        )
      : null;

  return {
    scenario,
    kube,
    azure,
    world,
    stateDir,
    kubeconfigPath: kube.kubeconfigPath,
    envPath,
    env,
    stepErrors,
    runStep,
    stop: async () => {
      for (const t of timers) clearTimeout(t);
      if (churnTimer) clearInterval(churnTimer);
      world?.stop();
      await Promise.all([kube.stop(), azure.stop()]);
    },
  };
}

/**
 * How many instances a churn tick deletes: a minute's share at once (at least one), or, spread, a second's share,
 * the fractions carried over (`owed`) so that a minute deletes the same number either way.
 */
export function churnDue(instances: number, perMinute: number, spread: boolean, owed = 0): { n: number; owed: number } {
  if (!spread) return { n: Math.max(1, Math.round(instances * perMinute)), owed: 0 };
  const due = owed + (instances * perMinute) / 60;
  const n = Math.floor(due);
  return { n, owed: due - n };
}
