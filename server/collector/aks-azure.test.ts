// The collector reading AKS pools from Azure, against the simulated fleet over HTTPS with the real SDKs: each AKS
// pool's agent pool from AKS (found by the id ASO records, one list a managed cluster), its VMs from the node resource
// group's scale set AKS tagged with the agent pool's name, and AKS failing or throttling: the pool then says AKS could
// not be read and falls back on ASO's copy, its drift unchanged, and a 429's Retry-After is waited out without calls.

import { afterEach, describe, expect, it } from 'vitest';
import type { PoolDetail } from '@/lib/api-types';
import { findByKind, type ResourceDef } from '@/sim/kube/resources';
import { Scheduler } from '../azure/scheduler';
import { harness, until, type Harness } from '../testing/sim-harness';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const AMMP = 'mgmt-weu/default/aks-user';
const ASO_MP = 'mgmt-weu/default/aks-jobs';

const finding = (p: PoolDetail | null, code: string) => p?.findings.find((f) => f.code === code);
const driftOf = (p: PoolDetail | null) =>
  (p?.drift ?? []).map((d) => `${d.kind}:${d.providerID?.split('/').pop()}`).sort();

/** The stored pool once `ok` holds for it. */
function poolWhen(h: Harness, key: string, what: string, ok: (p: PoolDetail) => boolean, ms = 15_000) {
  return until(
    what,
    async () => {
      const p = await h.store.currentPool(key);
      return p && ok(p) ? p : undefined;
    },
    ms,
  );
}

describe('AKS pools read from Azure', () => {
  it("reads each AKS pool's agent pool from AKS, and its VMs from the scale set AKS tagged for it", async () => {
    const h = await harness(cleanups, 'demo.yaml', 0.25);
    await h.start();
    // The AMMP: AKS itself reports the failure, and the VM that joined after the freeze is Azure's too.
    const ammp = await poolWhen(h, AMMP, 'the AMMP analysed with AKS read', (p) =>
      Boolean(finding(p, 'aks-pool-failed')?.detail.startsWith('AKS reports provisioningState Failed')),
    );
    expect(finding(ammp, 'aks-pool-failed')?.detail).toContain('error QuotaExceeded');
    expect(ammp.sources.azure.state).toBe('ok');
    expect(ammp.instances.find((r) => r.providerID.endsWith('/virtualMachines/3'))?.sources.azure).toBeTruthy();
    expect(driftOf(ammp)).toContain('missing-from-machinepool:3');
    // The ASO-MP: AKS's own count (5) beside ASO's cached one (3); its VMs from the scale set AKS tagged with its
    // agent pool's name, found by listing the node resource group (its lists name Nodes, not the scale set).
    const aso = await poolWhen(h, ASO_MP, 'the ASO-MP analysed with AKS and its VMs read', (p) =>
      Boolean(finding(p, 'aks-replicas-cached')?.summary.includes('AKS counts 5') && p.sources.azure.state === 'ok'),
    );
    expect(aso.instances.filter((r) => r.sources.azure)).toHaveLength(5);
    expect(finding(aso, 'azure-unread')).toBeUndefined();
    expect(h.sim.azure.requestCounts.get('managedClusters.get')).toBeGreaterThanOrEqual(1);
    expect(h.sim.azure.requestCounts.get('vmss.listByResourceGroup')).toBeGreaterThanOrEqual(1);
    // Both pools are aks-weu's: one list brings them, and no pool is read on its own.
    expect(h.sim.azure.requestCounts.get('agentPools.list')).toBeGreaterThanOrEqual(1);
    expect(h.sim.azure.requestCounts.get('agentPools.get') ?? 0).toBe(0);
    // AKS's budget is the subscription's own, apart from Compute's regional ones.
    const budgets = h.collector.budgets().map((b) => b.key);
    expect(budgets.filter((k) => k.endsWith('|aks'))).toHaveLength(1);
  }, 60_000);

  it("says AKS could not be read when it fails or throttles, keeps the drift, and waits out a 429's Retry-After", async () => {
    const h = await harness(cleanups, 'demo.yaml', 0.25);
    await h.start();
    const before = await poolWhen(h, ASO_MP, 'the ASO-MP analysed with AKS read', (p) =>
      Boolean(finding(p, 'aks-replicas-cached')?.summary.includes('AKS counts 5')),
    );
    // AKS down: the pool says so, shows ASO's copy, and its drift (lists against Nodes) stands.
    h.sim.azure.addFault({ operation: 'agentPools.list', kind: 'error', status: 503 });
    const down = await poolWhen(h, ASO_MP, 'AKS reported unreadable', (p) => Boolean(finding(p, 'azure-unread')));
    expect(finding(down, 'azure-unread')?.summary).toMatch(/could not be read: what is shown of AKS is ASO's cached/);
    expect(finding(down, 'aks-replicas-cached')?.summary).not.toContain('AKS counts');
    expect(driftOf(down)).toEqual(driftOf(before));
    h.sim.azure.clearFaults();
    await poolWhen(h, ASO_MP, 'AKS read again', (p) => !finding(p, 'azure-unread'));

    // A 429: the subscription's AKS budget waits Retry-After, with no AKS call meanwhile.
    h.sim.azure.addFault({ operation: 'agentPools.list', kind: 'error', status: 429, retryAfterSeconds: 3 });
    const throttled = await poolWhen(h, ASO_MP, 'the throttling reported', (p) =>
      Boolean(finding(p, 'azure-unread')?.summary.includes('AKS is throttling')),
    );
    h.sim.azure.clearFaults();
    expect(driftOf(throttled)).toEqual(driftOf(before));
    const blocked = h.collector.budgets().find((b) => b.key.endsWith('|aks'))?.blockedUntil;
    expect(blocked, "the subscription's AKS budget is blocked until Retry-After").toBeTruthy();
    const calls = h.sim.azure.requestCounts.get('agentPools.list') ?? 0;
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(blocked as string) - Date.now() - 150)));
    expect(h.sim.azure.requestCounts.get('agentPools.list') ?? 0).toBe(calls);
    await poolWhen(h, ASO_MP, 'AKS read after Retry-After', (p) => !finding(p, 'azure-unread'));
    // Compute's reads went on meanwhile: the AMMP's scale set is still read.
    expect((await h.store.currentPool(AMMP))?.sources.azure.state).toBe('ok');
  }, 60_000);

  it("says AKS could not be read for a pool its managed cluster's list does not hold, the other pool read", async () => {
    const h = await harness(cleanups, 'demo.yaml', 0.25);
    await h.start();
    await poolWhen(h, ASO_MP, 'the ASO-MP analysed with AKS read', (p) =>
      Boolean(finding(p, 'aks-replicas-cached')?.summary.includes('AKS counts 5')),
    );
    // AKS's jobs pool gone (deleted outside CAPZ): the cluster's list no longer holds it.
    for (const [k, rec] of h.sim.azure.state.agentPools)
      if (rec.body.name === 'jobs') h.sim.azure.state.agentPools.delete(k);
    const gone = await poolWhen(h, ASO_MP, 'the pool missing from the list', (p) =>
      Boolean(finding(p, 'azure-unread')?.detail.includes('AKS lists no agent pool jobs')),
    );
    expect(finding(gone, 'azure-unread')?.summary).toMatch(/^AKS agent pool jobs could not be read/);
    // The same list still brings the AMMP's pool.
    const ammp = await h.store.currentPool(AMMP);
    expect(finding(ammp, 'aks-pool-failed')?.detail).toMatch(/^AKS reports provisioningState Failed/);
  }, 60_000);

  it("says nothing is known of AKS when ASO's object is gone, and claims no drift while the workload cluster is down", async () => {
    const h = await harness(cleanups, 'demo.yaml', 0.25);
    await h.start();
    const before = await poolWhen(h, ASO_MP, 'the ASO-MP analysed with AKS read', (p) =>
      Boolean(finding(p, 'aks-replicas-cached')?.summary.includes('AKS counts 5')),
    );
    const asoKind = findByKind('containerservice.azure.com/v1api20250801', 'ManagedClustersAgentPool') as ResourceDef;
    h.sim.kube.cluster('mgmt-weu').store.delete(asoKind, 'default', 'aks-weu-jobs');
    const gone = await poolWhen(h, ASO_MP, 'the missing ASO object reported', (p) =>
      Boolean(finding(p, 'azure-unread')?.summary.includes('is missing')),
    );
    expect(driftOf(gone)).toEqual(driftOf(before));

    // The workload cluster down: its Nodes are unknown, so no ID is called gone.
    h.sim.runStep({ at: 0, line: 0, unreachable: { workload: 'aks-weu', unreachable: true } });
    const down = await poolWhen(h, ASO_MP, 'the workload cluster reported down', (p) =>
      Boolean(finding(p, 'workload-cluster-unreachable')),
    );
    expect(down.sources.workload.state).toBe('unreachable');
    expect(driftOf(down).filter((d) => d.startsWith('ghost-') || d.startsWith('node-without'))).toEqual([]);
  }, 60_000);

  it("reads a VirtualMachines pool's VMs from AKS's machines list, and says when AKS cannot list them", async () => {
    const h = await harness(cleanups, 'demo.yaml', 0.25);
    // The jobs pool made of standalone VMs: AKS says so, and Compute shows no scale set for them.
    for (const rec of h.sim.azure.state.agentPools.values())
      if (rec.body.name === 'jobs') (rec.body.properties as Record<string, unknown>).type = 'VirtualMachines';
    for (const rec of h.sim.azure.state.scaleSets.values())
      if ((rec.body.tags as Record<string, unknown> | undefined)?.['aks-managed-poolName'] === 'jobs')
        rec.standalone = true;
    const scheduler = new Scheduler({ fastSeconds: 0.5, slowSeconds: 3, budgetShare: 0.5 });
    await h.start({ scheduler });
    const p = await poolWhen(h, ASO_MP, 'the VMs read from AKS', (x) => x.sources.azure.state === 'ok');
    expect(p.instances.filter((r) => r.sources.azure)).toHaveLength(5);
    expect(finding(p, 'azure-unread')).toBeUndefined();
    // At start the pool waited for its machines, as for a scale set's first read: its record never says otherwise.
    const history = await h.store.timeline(ASO_MP, '2000-01-01T00:00:00Z', new Date(Date.now() + 60_000).toISOString());
    expect(history.filter((e) => e.field === 'source.azure').map((e) => `${e.from}→${e.to}`)).toEqual(['null→ok']);
    expect(h.sim.azure.requestCounts.get('machines.list')).toBeGreaterThanOrEqual(1);
    // The node resource group is listed as for a cluster whose pools' scale sets are all found: in 15 minutes, not 1.
    const group = scheduler.tracked().find((id) => /^\/subscriptions\/[^/]+\/resourcegroups\/[^/]+$/.test(id));
    expect(h.sim.azure.requestCounts.get('vmss.listByResourceGroup')).toBe(1);
    expect((scheduler.plan(group as string, Date.now())?.at ?? 0) - Date.now()).toBeGreaterThan(10 * 60_000);
    expect((await h.store.currentPool(AMMP))?.sources.azure.state).toBe('ok');

    // AKS cannot list them: the pool says so, with how to list them by hand, and its drift stands.
    h.sim.azure.addFault({ operation: 'machines.list', kind: 'error', status: 503 });
    const down = await poolWhen(h, ASO_MP, 'the machines list reported unreadable', (x) =>
      Boolean(finding(x, 'azure-unread')?.summary.includes('is of type VirtualMachines')),
    );
    expect(finding(down, 'azure-unread')).toMatchObject({
      severity: 'warning',
      summary: expect.stringMatching(/AKS's list of its machines could not be read/),
      suggestedAction: expect.stringMatching(/`az aks machine list .* --nodepool-name jobs`/),
    });
    expect(driftOf(down)).toEqual(driftOf(p));
    // A 429 after a good list: the pool says Azure throttles, and keeps the VMs it last read.
    h.sim.azure.clearFaults();
    await poolWhen(h, ASO_MP, 'the VMs read again', (x) => x.sources.azure.state === 'ok');
    h.sim.azure.addFault({ operation: 'machines.list', kind: 'error', status: 429, retryAfterSeconds: 2 });
    const throttled = await poolWhen(
      h,
      ASO_MP,
      'the throttling reported',
      (x) => x.sources.azure.state === 'throttled',
    );
    expect(throttled.instances.filter((r) => r.sources.azure)).toHaveLength(5);
    h.sim.azure.clearFaults();
  }, 60_000);

  it("keeps AKS reads within the share of AKS's budget, apart from Compute's", async () => {
    const h = await harness(cleanups, 'demo.yaml', 0.25);
    // A share of 2% of the assumed 190 reads per 3 minutes: 3 reads in the window, whatever the lanes want.
    await h.start({ scheduler: new Scheduler({ fastSeconds: 0.5, slowSeconds: 3, budgetShare: 0.02 }) });
    await new Promise((r) => setTimeout(r, 6000));
    const aks = h.collector.budgets().find((b) => b.key.endsWith('|aks'));
    expect(aks?.callsInWindow).toBeLessThanOrEqual(3);
    expect(h.sim.azure.requestCounts.get('agentPools.list') ?? 0).toBeLessThanOrEqual(3);
    expect(h.sim.azure.requestCounts.get('agentPools.list') ?? 0).toBeGreaterThan(0);
  }, 30_000);
});
