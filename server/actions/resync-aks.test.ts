// Resync of AKS pools against the simulated fleet over HTTPS with the real client: a reconcile trigger annotates
// the AzureASOManagedMachinePool or AzureManagedMachinePool and the MachinePool (never ASO's agent pool, never AKS),
// a list copy is refused, and the cluster's RBAC is asked about the pool's own kind.

import { afterEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '@/lib/unstructured';
import { findByKind, type ResourceDef } from '@/sim/kube/resources';
import { parseEnv } from '../env';
import { answerChecker } from '../testing/openapi';
import { harness, until, type Harness } from '../testing/sim-harness';
import { buildResyncService } from './index';
import { RESYNC_ANNOTATION, type ResyncService } from './resync';
import { refusal } from '../testing/refusal';
import { resyncPost } from '../testing/resync-request';

const ASOMP = findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureASOManagedMachinePool') as ResourceDef;
const AMMP = findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureManagedMachinePool') as ResourceDef;
const MP = findByKind('cluster.x-k8s.io/v1beta2', 'MachinePool') as ResourceDef;
const JOBS = { context: 'mgmt-weu', namespace: 'default', name: 'aks-jobs' };
const USER = { context: 'mgmt-weu', namespace: 'default', name: 'aks-user' };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Someone who may patch MachinePools and AzureMachinePools, but not the AKS kinds. */
const AMP_ONLY = 'amp-only';

/**
 * The fleet, and a resync service on it (`heedBudgets`: waiting out the collector's AKS Retry-After, as in
 * production; `before`: a change to the fleet before the collector starts).
 */
async function setup(
  heedBudgets = false,
  before: (h: Harness) => void = () => {},
): Promise<{ h: Harness; svc: ResyncService; post(body: unknown, user?: string): Request }> {
  const h = await harness(cleanups, 'demo.yaml', 0.25, {
    sim: {
      users: [{ name: AMP_ONLY, groups: ['amp-operators'] }],
      policy: [
        {
          groups: ['amp-operators'],
          verbs: ['get', 'list', 'watch'],
          apiGroups: ['*'],
          resources: ['*'],
          namespaces: ['*'],
        },
        {
          groups: ['amp-operators'],
          verbs: ['patch'],
          apiGroups: ['cluster.x-k8s.io', 'infrastructure.cluster.x-k8s.io'],
          resources: ['machinepools', 'azuremachinepools'],
          namespaces: ['*'],
        },
      ],
    },
  });
  before(h);
  await h.start();
  await until('the AKS pools analysed', async () =>
    (await h.store.currentPool('mgmt-weu/default/aks-jobs')) && (await h.store.currentPool('mgmt-weu/default/aks-user'))
      ? true
      : undefined,
  );
  const svc = buildResyncService({
    env: parseEnv({ POOLSCOPE_RESYNC_WAIT_SECONDS: '2' }),
    store: h.store,
    publish: () => {},
    kubeconfig: h.kubeconfig,
    contexts: ['mgmt-weu'],
    readAzure: (ref) => h.azure.read(ref),
    readAgentPool: (ref) => h.azure.readAgentPool(ref),
    readMachines: (ref) => h.azure.readMachines(ref),
    ...(heedBudgets ? { budgets: () => h.collector.budgets() } : {}),
    log: () => {},
  });
  const post = (body: unknown, user = 'operator') =>
    resyncPost(
      'http://localhost:3000/api/pools/mgmt-weu/default/x/resync',
      body,
      h.sim.kube.tokens.get(user) as string,
    );
  return { h, svc, post };
}

const annotation = (o: KubeObject) => o.metadata?.annotations?.[RESYNC_ANNOTATION];

describe('resync of AKS pools', () => {
  it('does not read AKS afresh while AKS has asked the collector to wait', async () => {
    const { h, svc, post } = await setup(true);
    // AKS answers the collector's next list with a 429 and a long Retry-After.
    h.sim.azure.addFault({
      operation: 'agentPools.list',
      kind: 'error',
      status: 429,
      retryAfterSeconds: 600,
      count: 1,
    });
    await until('the AKS budget blocked', () =>
      h.collector.budgets().some((b) => b.key.endsWith('|aks') && b.blockedUntil) ? true : undefined,
    );
    const gets = () => h.sim.azure.requestCounts.get('agentPools.get') ?? 0;
    const before = gets();
    const preview = await svc.run(USER, post({ mode: 'reconcile', dryRun: true }));
    expect(preview.outcome).toBe('dry-run');
    expect(gets()).toBe(before);
  }, 60_000);

  it('annotates the AzureASOManagedMachinePool and the MachinePool, refuses a list copy, and asks RBAC about the AKS kind', async () => {
    const { h, svc, post } = await setup();
    const store = h.sim.kube.cluster('mgmt-weu').store;

    const preview = await svc.run(JOBS, post({ mode: 'reconcile', dryRun: true }));
    expect(preview.outcome).toBe('dry-run');
    expect(preview.objects.map((o) => `${o.kind}:${o.action}`)).toEqual([
      'AzureASOManagedMachinePool:dry-run',
      'MachinePool:dry-run',
    ]);
    expect(annotation(store.get(ASOMP, 'default', 'aks-jobs'))).toBeUndefined();

    const done = await svc.run(JOBS, post({ mode: 'reconcile' }));
    expect(done.outcome).toBe('done');
    const value = annotation(store.get(ASOMP, 'default', 'aks-jobs'));
    expect(value).toBeTruthy();
    expect(annotation(store.get(MP, 'default', 'aks-jobs'))).toBe(value);
    expect(done.message).toMatch(/^Reconcile triggered on the AzureASOManagedMachinePool and the MachinePool\./);
    // The answer, AKS kinds and all, is what openapi.json says the route sends.
    const path = '/api/pools/{context}/{namespace}/{name}/resync';
    expect(answerChecker()(path, 'POST', 200, JSON.parse(JSON.stringify(done)))).toEqual([]);
    expect(done.observed?.summary).toMatch(/AzureASOManagedMachinePool is ready; nothing was out of date/);
    // poolscope wrote to nothing else: not ASO's agent pool, not AKS.
    const writes = h.sim.kube.cluster('mgmt-weu').writes.filter((w) => !w.dryRun && w.verb !== 'create');
    expect([...new Set(writes.map((w) => w.resource))].sort()).toEqual(['azureasomanagedmachinepools', 'machinepools']);
    expect(
      [...h.sim.azure.requestCounts.keys()].filter(
        (op) => !/\.(get|list|listAll|listByResourceGroup|instanceView|token)$/.test(op),
      ),
    ).toEqual([]);

    const copy = await refusal(svc.run(JOBS, post({ mode: 'sync-provider-ids' })));
    expect(copy).toMatchObject({ status: 409, code: 'resync-refused' });
    expect(copy.message).toMatch(/freezes with the MachinePool's/);

    // Someone the cluster lets patch AzureMachinePools only may not reconcile an AKS pool.
    const forbidden = await refusal(svc.run(JOBS, post({ mode: 'reconcile' }, AMP_ONLY)));
    expect(forbidden).toMatchObject({ status: 403, code: 'forbidden' });
    expect(forbidden.message).toMatch(/azureasomanagedmachinepools/);
  }, 60_000);

  it('reconciles an AzureManagedMachinePool whose agent pool failed, and says a reconcile cannot get past the gate', async () => {
    const { h, svc, post } = await setup();
    const status = await svc.status(USER, post({}).headers, { fresh: true });
    expect(status.verdictSource).toBe('fresh');
    expect(status.verdict?.reconcile).toMatchObject({ allowed: true, canHelp: false });
    // The fresh verdict read AKS itself: the failure is AKS's.
    expect(status.verdict?.reconcile.reason).toMatch(/The agent pool failed in AKS \(QuotaExceeded\)/);
    const done = await svc.run(USER, post({ mode: 'reconcile', verdictDigest: status.verdictDigest }));
    expect(done.outcome).toBe('done');
    expect(annotation(h.sim.kube.cluster('mgmt-weu').store.get(AMMP, 'default', 'aks-user'))).toBeTruthy();
    expect(done.observed?.summary).toMatch(/AzureManagedMachinePool is still not ready/);
    expect(done.observed?.summary).toMatch(/it opens when CAPZ finds the agent pool done/);
    expect(done.observed?.summary).not.toMatch(/Copy providerIDs/);
  }, 60_000);

  it('decides on a VirtualMachines pool with its machines listed afresh, as the collector read them', async () => {
    const { h, svc, post } = await setup(false, (fleet) => {
      // The jobs pool made of standalone VMs: AKS says so, and Compute shows no scale set for them.
      const { state } = fleet.sim.azure;
      for (const rec of state.agentPools.values())
        if (rec.body.name === 'jobs') (rec.body.properties as Record<string, unknown>).type = 'VirtualMachines';
      for (const rec of state.scaleSets.values())
        if ((rec.body.tags as Record<string, unknown> | undefined)?.['aks-managed-poolName'] === 'jobs')
          rec.standalone = true;
    });
    await until('the jobs pool read from its machines', async () =>
      (await h.store.currentPool('mgmt-weu/default/aks-jobs'))?.sources.azure.state === 'ok' ? true : undefined,
    );
    const lists = () => h.sim.azure.requestCounts.get('machines.list') ?? 0;
    const before = lists();
    const status = await svc.status(JOBS, post({}).headers, { fresh: true });
    expect(status.verdictSource).toBe('fresh');
    expect(lists()).toBe(before + 1);
    // Its VMs as the collector has them: the fresh verdict is the collected one.
    const collected = await svc.status(JOBS, post({}).headers);
    expect(status.verdict).toEqual(collected.verdict);
  }, 60_000);
});
