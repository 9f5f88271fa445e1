// Test helpers: a simulated fleet from a scenario, a SQLite store, and the real collector reading both over
// HTTPS with the real SDKs (no mocks); plus `until`, to wait for something the system does asynchronously.

import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ClientSecretCredential } from '@azure/identity';
import { KubeConfig } from '@kubernetes/client-node';
import { startSimulation, type Simulation, type SimulationOptions } from '@/sim/index';
import { readScenario } from '@/sim/world/scenario';
import { AzureReader } from '../azure/reader';
import { Scheduler } from '../azure/scheduler';
import { Collector, type CollectorOptions } from '../collector/collector';
import { openSqlite } from '../store/sqlite';
import { TimelineStore } from '../store/store';

const SCENARIOS = path.resolve(import.meta.dirname, '..', '..', 'sim', 'scenarios');

/** Polls `fn` every 100 ms until it returns something other than undefined/false. */
export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  ms = 25_000,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface Harness {
  sim: Simulation;
  store: TimelineStore;
  dbFile: string;
  kubeconfig: KubeConfig;
  /** ARM through the simulator's token endpoint, as DefaultAzureCredential would reach it. */
  azure: AzureReader;
  collector: Collector;
  start(extra?: Partial<CollectorOptions>): Promise<Collector>;
}

export interface HarnessOptions {
  /** The SQLite file (a new one by default). */
  dbFile?: string;
  /** A simulation to reuse instead of starting the scenario. */
  existing?: Simulation;
  /** More simulated people and rules (e.g. a ServiceAccount with rules from RBAC objects). */
  sim?: Pick<SimulationOptions, 'users' | 'policy'>;
  /** Whose kubeconfig poolscope uses: a simulated user's, or the admin's by default. */
  user?: string;
}

/**
 * Starts `scenario` (a file in sim/scenarios) at `speed`, or reuses `opts.existing`; `cleanups` collects what
 * to stop afterwards (run them in reverse).
 */
export async function harness(
  cleanups: (() => Promise<void>)[],
  scenario: string,
  speed: number,
  opts: HarnessOptions = {},
): Promise<Harness> {
  const { existing } = opts;
  const sim =
    existing ??
    (await startSimulation(readScenario(path.join(SCENARIOS, scenario)), { speed, log: () => {}, ...opts.sim }));
  if (!existing) cleanups.push(() => sim.stop());
  const dbFile = opts.dbFile ?? path.join(mkdtempSync(path.join(os.tmpdir(), 'poolscope-col-')), 'db.sqlite');
  const store = new TimelineStore(openSqlite(dbFile));
  await store.migrate();
  cleanups.push(() => store.close());
  const kc = new KubeConfig();
  kc.loadFromFile(opts.user ? (sim.kube.userKubeconfigPaths.get(opts.user) as string) : sim.kubeconfigPath);
  kc.setCurrentContext('mgmt-weu');
  const credential = new ClientSecretCredential(
    sim.env.AZURE_TENANT_ID as string,
    sim.env.AZURE_CLIENT_ID as string,
    sim.env.AZURE_CLIENT_SECRET as string,
    { authorityHost: sim.env.AZURE_AUTHORITY_HOST, disableInstanceDiscovery: true },
  );
  const azure = new AzureReader({
    endpoint: sim.env.POOLSCOPE_ARM_ENDPOINT as string,
    disableInstanceDiscovery: true,
    credential,
  });
  const h: Harness = {
    sim,
    store,
    dbFile,
    kubeconfig: kc,
    azure,
    collector: undefined as unknown as Collector,
    async start(extra: Partial<CollectorOptions> = {}) {
      const c = new Collector({
        kubeconfig: kc,
        contexts: ['mgmt-weu'],
        store,
        azure,
        scheduler: new Scheduler({ fastSeconds: 0.5, slowSeconds: 3, budgetShare: 0.5 }),
        cycleMs: 150,
        ...extra,
      });
      await c.start();
      cleanups.push(() => c.stop());
      h.collector = c;
      return c;
    },
  };
  return h;
}
