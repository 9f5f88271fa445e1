// The AKS operator scenarios (docs/domain.md, "AKS operator scenarios") played by the living simulator — CAPZ's,
// ASO's and AKS's controllers moving the pools over HTTPS — and read by the collector with the real clients and
// SDKs: each reaches the state the fact base describes, and the diagnosis says what it says, while it lasts and
// once it is over. Long because each scenario runs for a minute or two of simulated time.

import { afterEach, describe, expect, it } from 'vitest';
import type { PoolDetail } from '@/lib/api-types';
import { Scheduler } from '../azure/scheduler';
import { harness, until, type Harness } from '../testing/sim-harness';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const codes = (p: PoolDetail) => p.findings.map((f) => f.code);
const finding = (p: PoolDetail, code: string) => p.findings.find((f) => f.code === code);
const tail = (l: readonly string[] | undefined) => (l ?? []).map((id) => id.split('/').pop()).join(',');

/** The pool `name` of mgmt-aks once `ok` holds for its stored state (simulated minutes pass in real seconds). */
async function when(h: Harness, name: string, what: string, ok: (p: PoolDetail) => boolean, ms = 40_000) {
  let last: PoolDetail | null = null;
  try {
    return await until(
      `${name}: ${what}`,
      async () => {
        last = await h.store.currentPool(`mgmt-aks/default/${name}`);
        return last && ok(last) ? last : undefined;
      },
      ms,
    );
  } catch (e) {
    // Say where the pool stood instead.
    const p = last as PoolDetail | null;
    const at = p
      ? `ready ${String(p.summary.ampReady)}, MachinePool list ${p.lists.mp.count}, findings ${codes(p).join(' ')}, drift ${p.drift.map((d) => d.kind).join(' ')}, sources ${JSON.stringify(p.sources)}`
      : 'not stored';
    throw new Error(`${(e as Error).message}; the pool: ${at}`);
  }
}

/**
 * The scenario read by a collector in mgmt-aks. `fastSeconds`: its fast lane; the harness's half a second would
 * spend a scale set's own budget (60 reads per 3 minutes) in a scenario that keeps a pool moving for a minute.
 */
async function start(scenario: string, speed: number, fastSeconds?: number): Promise<Harness> {
  const h = await harness(cleanups, scenario, speed);
  await h.start({
    contexts: ['mgmt-aks'],
    ...(fastSeconds ? { scheduler: new Scheduler({ fastSeconds, slowSeconds: 6, budgetShare: 0.5 }) } : {}),
  });
  return h;
}

/** Over: the lists agree with the Nodes at `n`, nothing wrong. */
const settledAt = (n: number) => (p: PoolDetail) =>
  p.summary.ampReady === true && p.drift.length === 0 && p.lists.mp.count === n && codes(p).includes('healthy');

describe('AKS operator scenarios in the living simulator', () => {
  it('K1: a scale CAPZ asked for closes the gate for the whole AKS operation, then the lists catch up', async () => {
    const h = await start('k01-aks-manual-scale.yaml', 3);
    for (const name of ['ammp', 'asomp']) {
      const during = await when(h, name, 'the operation seen', (p) => Boolean(finding(p, 'aks-operation')));
      expect(during.summary.ampReady).toBe(false);
      expect(finding(during, 'aks-operation')?.summary).toMatch(/ASO is applying a change to agent pool/);
      expect(codes(during)).not.toContain('aks-pool-failed');
      expect(during.verdict.reconcile.canHelp).toBe(false);
      expect(during.verdict.syncProviderIds.allowed).toBe(false);
    }
    for (const name of ['ammp', 'asomp']) {
      const after = await when(h, name, 'settled at 5', settledAt(5));
      expect(after.summary.replicas.desired).toBe(5);
    }
  }, 90_000);

  it("K2: AKS's autoscaler on an ASO pool; replicas are ASO's cached count until ASO's resync", async () => {
    const h = await start('k02-aks-autoscaler-aso.yaml', 6);
    const lagging = await when(h, 'jobs', "replicas at ASO's count, the list at the Nodes", (p) =>
      Boolean(finding(p, 'aks-replicas-cached')?.summary.includes("ASO's cached count (3), AKS counts 5")),
    );
    expect(finding(lagging, 'aks-replicas-cached')?.severity).toBe('warning');
    await when(h, 'jobs', 'the list follows the Nodes', (p) => p.lists.mp.count === 5);
    // ASO's resync (2 minutes in): the count catches up, after a short not-ready window.
    const after = await when(
      h,
      'jobs',
      "ASO's count caught up",
      (p) => p.summary.replicas.desired === 5 && finding(p, 'aks-replicas-cached')?.severity !== 'warning',
      60_000,
    );
    expect(after.drift).toEqual([]);
  }, 120_000);

  it("K3: AKS's autoscaler on an AzureManagedMachinePool: the list follows the VMs, spec.replicas ASO's cache", async () => {
    const h = await start('k03-aks-autoscaler-ammp.yaml', 6);
    const lagging = await when(h, 'user', 'the list at 5, spec.replicas at 3', (p) =>
      Boolean(p.lists.mp.count === 5 && p.summary.replicas.desired === 3 && finding(p, 'aks-replicas-cached')),
    );
    expect(finding(lagging, 'aks-replicas-cached')?.detail).toMatch(/follow the scale set's VMs/);
    expect(lagging.summary.ampReady).toBe(true);
    await when(h, 'user', "ASO's count caught up", (p) => p.summary.replicas.desired === 5, 60_000);
  }, 120_000);

  it('K4: an upgrade waits for the control plane, then AKS upgrades the pools; the gate closed throughout', async () => {
    const h = await start('k04-aks-upgrade.yaml', 4, 2);
    for (const name of ['ammp', 'asomp']) {
      const waiting = await when(h, name, 'ASO waiting for the control plane', (p) =>
        Boolean(
          finding(p, 'aks-operation')?.summary.includes('waits for the control plane to reach Kubernetes 1.34.1'),
        ),
      );
      expect(waiting.summary.ampReady).toBe(false);
      expect(finding(waiting, 'aks-operation')?.severity).toBe('warning');
      expect(codes(waiting)).not.toContain('aks-pool-failed');
      expect(waiting.verdict.reconcile.canHelp).toBe(false);
    }
    // AKS's own word on the control plane, from the managed cluster's GET.
    await when(h, 'ammp', "AKS's control plane upgrading", (p) =>
      Boolean(
        finding(p, 'aks-operation')?.detail.includes(
          'AKS says the control plane of aks-weu runs Kubernetes 1.33.2, on its way to 1.34.1 (Upgrading).',
        ),
      ),
    );
    for (const name of ['ammp', 'asomp']) {
      const upgrading = await when(h, name, 'AKS upgrading', (p) =>
        Boolean(finding(p, 'aks-operation')?.summary.includes('upgrading agent pool')),
      );
      expect(finding(upgrading, 'aks-operation')?.summary).toMatch(/from Kubernetes 1\.33\.2 to 1\.34\.1/);
      expect(upgrading.summary.ampReady).toBe(false);
      expect(upgrading.verdict.reconcile.canHelp).toBe(false);
    }
    // The surge Node joins at the new version: the finding counts the pool's Nodes by version.
    await when(h, 'ammp', 'a Node at the new version', (p) =>
      Boolean(finding(p, 'aks-operation')?.detail.match(/Its Nodes now: (\d at v1\.3\d\.\d, )?\d at v1\.34\.1/)),
    );
    // The surge VM seen by poolscope and not by CAPI: the freeze is the upgrade's, expected.
    const surge = await when(h, 'ammp', 'the surge VM', (p) =>
      p.drift.some((d) => d.kind === 'missing-from-machinepool'),
    );
    expect(finding(surge, 'readiness-gate-frozen')?.cause).toBe('aks-operation');
    for (const name of ['ammp', 'asomp']) await when(h, name, 'settled after the upgrade', settledAt(3), 90_000);
  }, 180_000);

  it('K5: a scale that fails in AKS keeps the gate closed, chained to AKS’s error, until AKS succeeds', async () => {
    const h = await start('k05-aks-scale-failed.yaml', 6);
    for (const name of ['ammp', 'asomp']) {
      // AKS's own answer, read from Azure once ASO's object changed, not only ASO's condition.
      const failed = await when(h, name, 'the failure seen in AKS', (p) =>
        Boolean(finding(p, 'aks-pool-failed')?.detail.startsWith('AKS reports provisioningState Failed')),
      );
      const f = finding(failed, 'aks-pool-failed');
      expect(f?.severity).toBe('critical');
      expect(f?.detail).toMatch(/^AKS reports provisioningState Failed, error QuotaExceeded/);
      expect(failed.verdict.reconcile).toMatchObject({ canHelp: false });
      expect(failed.verdict.reconcile.reason).toMatch(/The agent pool failed in AKS \(QuotaExceeded\)/);
      expect(tail(failed.instances.filter((r) => r.sources.mp).map((r) => r.providerID))).toBe('0,1,2');
    }
    // The quota raised at 90 s: ASO's next retry succeeds.
    for (const name of ['ammp', 'asomp']) await when(h, name, 'settled at 5', settledAt(5), 60_000);
  }, 120_000);

  it("K6: AKS's own operation, found by ASO's resync, closes the gate without blaming CAPZ", async () => {
    const h = await start('k06-aks-own-operation.yaml', 6);
    // AKS is busy from 10 s, before ASO looks: poolscope reads it from AKS, the pool still ready.
    const early = await when(h, 'asomp', 'the operation seen in AKS', (p) =>
      Boolean(finding(p, 'aks-operation')?.summary.includes('Upgrading')),
    );
    expect(early.summary.ampReady).toBe(true);
    expect(finding(early, 'aks-operation')?.severity).toBe('info');
    // ASO's resync at 60 s finds the pool busy: ReconciliationBlocked, not ready, nobody's failure.
    const blocked = await when(h, 'asomp', 'ASO blocked', (p) =>
      Boolean(
        finding(p, 'aks-operation')?.summary.match(/AKS runs an operation of its own on agent pool jobs \(Upgrading\)/),
      ),
    );
    expect(blocked.summary.ampReady).toBe(false);
    expect(codes(blocked)).not.toContain('aks-pool-failed');
    await when(h, 'asomp', 'settled after the operation', settledAt(3), 60_000);
  }, 120_000);

  it('K7: a perpetual diff: the pool flaps, poolscope calls it a loop and advises against a resync', async () => {
    const h = await start('k07-aks-perpetual-diff.yaml', 6, 2);
    const p = await when(h, 'spot', 'the loop seen', (x) => Boolean(finding(x, 'aks-update-loop')), 90_000);
    expect(finding(p, 'aks-update-loop')?.summary).toMatch(
      /^The AzureManagedMachinePool keeps going not ready and ready again: CAPZ rewrites agent pool spot/,
    );
    expect(finding(p, 'aks-update-loop')?.detail).toMatch(/^It went not ready \d+ times in the last hour/);
    expect(p.summary.readyDrops?.length).toBeGreaterThanOrEqual(6);
    expect(p.verdict.reconcile).toMatchObject({ canHelp: false, reason: expect.stringMatching(/one more write/) });
    expect(codes(p)).not.toContain('aks-pool-failed');
  }, 120_000);

  it('K8: the AKS cluster unreachable: the ASO pool not ready, the AMMP ready, both said to be unreachable', async () => {
    const h = await start('k08-aks-workload-unreachable.yaml', 4);
    const aso = await when(h, 'asomp', 'unreachable and not ready', (p) =>
      Boolean(finding(p, 'workload-cluster-unreachable') && p.summary.ampReady === false),
    );
    expect(finding(aso, 'workload-cluster-unreachable')?.detail).toMatch(/AzureASOManagedMachinePool's list/);
    expect(aso.drift.filter((d) => d.kind.startsWith('ghost-'))).toEqual([]);
    const ammp = await when(h, 'ammp', 'unreachable', (p) => Boolean(finding(p, 'workload-cluster-unreachable')));
    expect(ammp.summary.ampReady).toBe(true);
    for (const name of ['ammp', 'asomp']) await when(h, name, 'back', settledAt(3), 60_000);
  }, 120_000);

  it("K9: an ASO pool's Nodes relabelled: CAPZ lists none, CAPI keeps the old list, said as such", async () => {
    const h = await start('k09-aks-nodes-unmapped.yaml', 4);
    // CAPZ's next reconcile lists no Node; CAPI keeps the MachinePool's 3.
    const p = await when(
      h,
      'asomp',
      'the Nodes unmapped, the infra list empty',
      (x) =>
        x.lists.amp?.count === 0 &&
        Boolean(finding(x, 'aks-nodes-unmapped')?.summary.includes("No Node carries agent pool jobs's label")),
    );
    expect(p.lists.mp.count).toBe(3);
    expect(p.drift.filter((d) => d.kind.startsWith('ghost-'))).toEqual([]);
  }, 90_000);

  it('K10: a paused cluster: nothing moves in CAPI or CAPZ while AKS does, and resync is refused', async () => {
    const h = await start('k10-aks-paused.yaml', 4);
    const p = await when(
      h,
      'user',
      'the new VMs missing from the lists',
      (x) => x.drift.filter((d) => d.kind === 'missing-from-machinepool').length === 2,
    );
    expect(codes(p)).toContain('paused');
    expect(p.verdict.reconcile).toMatchObject({ allowed: false, reason: expect.stringMatching(/paused/) });
    expect(p.lists.mp.count).toBe(3);
  }, 90_000);
});
