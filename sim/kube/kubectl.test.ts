// The real kubectl against the simulated API servers: if kubectl can't tell, neither can the product.

import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { makeAmmp, makeAsoAgentPool } from '../../lib/fixtures/aks-objects';
import type { KubeObject } from '../../lib/unstructured';
import { findUpstreamDir } from './crd-schema';
import type { KubeSimulator } from './simulator';
import { kubectl, startSeedSimulator, writeKubeconfig } from './testing';

const hasUpstream = findUpstreamDir(path.resolve(import.meta.dirname, '..', '..')) !== null;
let sim: KubeSimulator;
let kc: string;

beforeAll(async () => {
  sim = await startSeedSimulator();
  kc = sim.kubeconfigPath;
});
afterAll(async () => {
  await sim?.stop();
});

describe('kubectl against the simulated management cluster', () => {
  it('lists MachinePools in the preferred version (v1beta2) and in v1beta1', async () => {
    const b2 = await kubectl(kc, ['get', 'machinepools', '-A', '-o', 'json']);
    expect(b2.code, b2.stderr).toBe(0);
    const list2 = JSON.parse(b2.stdout) as { items: KubeObject[] };
    expect(list2.items.map((i) => [i.apiVersion, i.metadata?.name])).toEqual([['cluster.x-k8s.io/v1beta2', 'pool0']]);
    expect(list2.items[0]?.status).toMatchObject({ initialization: { infrastructureProvisioned: false } });

    const b1 = await kubectl(kc, ['get', 'machinepools.v1beta1.cluster.x-k8s.io', '-A', '-o', 'json']);
    expect(b1.code, b1.stderr).toBe(0);
    const item1 = (JSON.parse(b1.stdout) as { items: KubeObject[] }).items[0];
    expect(item1?.apiVersion).toBe('cluster.x-k8s.io/v1beta1');
    expect(item1?.status).toMatchObject({ infrastructureReady: false });
    expect(item1?.spec?.providerIDList).toEqual(list2.items[0]?.spec?.providerIDList);
  });

  it('prints the printer columns with the short name', async () => {
    const r = await kubectl(kc, ['get', 'mp', '-A']);
    expect(r.code, r.stderr).toBe(0);
    const [header, row] = r.stdout.trim().split('\n');
    expect(header?.split(/\s+/)).toEqual(['NAMESPACE', 'NAME', 'CLUSTER', 'DESIRED', 'REPLICAS', 'PHASE', 'AGE']);
    expect(row?.split(/\s+/).slice(0, 6)).toEqual(['default', 'pool0', 'prod-weu', '5', '3', 'Provisioned']);
  });

  it('gets amp,ampm -A -o yaml', async () => {
    const r = await kubectl(kc, ['get', 'amp,ampm', '-A', '-o', 'yaml']);
    expect(r.code, r.stderr).toBe(0);
    const doc = parse(r.stdout) as { kind: string; items: KubeObject[] };
    expect(doc.kind).toBe('List');
    expect(doc.items.map((i) => `${i.kind}/${i.metadata?.name}`)).toEqual([
      'AzureMachinePool/pool0',
      ...['0', '1', '2', '3', '4'].map((n) => `AzureMachinePoolMachine/pool0-${n}`),
    ]);
    expect(doc.items[0]?.status).toMatchObject({ ready: false, provisioningState: 'Updating' });
  });

  it("serves AKS pools' kinds: an AMMP's printer columns from its Ready condition, ASO's agent pool in another version", async () => {
    const ammp = makeAmmp({
      name: 'aks1',
      clusterName: 'prod-weu',
      ready: false,
      agentPoolsReady: { type: 'AgentPoolsReady', status: 'False', reason: 'Creating', severity: 'Info' },
    });
    const ap = makeAsoAgentPool({ name: 'aks1', state: { count: 3 } });
    for (const o of [ammp, ap]) {
      const created = await kubectl(kc, ['create', '-f', '-'], JSON.stringify(o));
      expect(created.code, created.stderr).toBe(0);
    }
    // Status is the controllers' (the main resource ignores it on create), written through the subresource.
    for (const [kind, o] of [
      ['ammp', ammp],
      ['managedclustersagentpools', ap],
    ] as const) {
      const patched = await kubectl(kc, [
        'patch',
        kind,
        'aks1',
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status: o.status }),
      ]);
      expect(patched.code, patched.stderr).toBe(0);
    }
    const r = await kubectl(kc, ['get', 'ammp', 'aks1']);
    expect(r.code, r.stderr).toBe(0);
    const [header, row] = r.stdout.trim().split('\n');
    expect(header?.split(/\s+/)).toEqual(['NAME', 'CLUSTER', 'READY', 'SEVERITY', 'REASON', 'AGE', 'MODE']);
    expect(row?.split(/\s+/).filter((c, i) => i !== 5)).toEqual([
      'aks1',
      'prod-weu',
      'False',
      'Info',
      'Creating',
      'User',
    ]);
    const old = await kubectl(kc, [
      'get',
      'managedclustersagentpools.v1api20231001.containerservice.azure.com',
      'aks1',
      '-o',
      'json',
    ]);
    expect(old.code, old.stderr).toBe(0);
    expect(JSON.parse(old.stdout)).toMatchObject({
      apiVersion: 'containerservice.azure.com/v1api20231001',
      status: { count: 3 },
    });
  });

  it('reaches the workload cluster through the kubeconfig in its <cluster>-kubeconfig Secret', async () => {
    const secret = await kubectl(kc, ['get', 'secret', 'prod-weu-kubeconfig', '-n', 'default', '-o', 'json']);
    expect(secret.code, secret.stderr).toBe(0);
    const s = JSON.parse(secret.stdout) as { type: string; data: { value: string } };
    expect(s.type).toBe('cluster.x-k8s.io/secret');
    const wl = writeKubeconfig(parse(Buffer.from(s.data.value, 'base64').toString()) as Record<string, unknown>);
    const nodes = await kubectl(wl, ['get', 'nodes', '-o', 'name']);
    expect(nodes.code, nodes.stderr).toBe(0);
    expect(nodes.stdout.trim().split('\n')).toEqual([
      'node/pool0-0',
      'node/pool0-1',
      'node/pool0-2',
      'node/pool0-3',
      'node/pool0-4',
    ]);
  });

  it('annotates and merge-patches, bumping generation only for the spec change', async () => {
    const before = JSON.parse((await kubectl(kc, ['get', 'mp', 'pool0', '-o', 'json'])).stdout) as KubeObject;
    const a = await kubectl(kc, ['annotate', 'mp', 'pool0', 'poolscope.dev/resync-requested-at=2026-11-29T12:00:00Z']);
    expect(a.stdout.trim()).toBe('machinepool.cluster.x-k8s.io/pool0 annotated');
    const annotated = JSON.parse((await kubectl(kc, ['get', 'mp', 'pool0', '-o', 'json'])).stdout) as KubeObject;
    expect(annotated.metadata?.generation).toBe(before.metadata?.generation);
    expect(Number(annotated.metadata?.resourceVersion)).toBeGreaterThan(Number(before.metadata?.resourceVersion));

    const p = await kubectl(kc, ['patch', 'mp', 'pool0', '--type=merge', '-p', '{"spec":{"replicas":6}}']);
    expect(p.stdout.trim()).toBe('machinepool.cluster.x-k8s.io/pool0 patched');
    const patched = JSON.parse((await kubectl(kc, ['get', 'mp', 'pool0', '-o', 'json'])).stdout) as KubeObject;
    expect(patched.spec?.replicas).toBe(6);
    expect(patched.metadata?.generation).toBe((before.metadata?.generation ?? 0) + 1);
  });

  it('rejects a JSON patch whose test fails, changing nothing', async () => {
    const r = await kubectl(kc, [
      'patch',
      'amp',
      'pool0',
      '--type=json',
      '-p',
      '[{"op":"test","path":"/spec/location","value":"northeurope"},{"op":"replace","path":"/spec/location","value":"x"}]',
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('The request is invalid');
    expect(r.stderr).toContain('testing value failed');
    const amp = JSON.parse((await kubectl(kc, ['get', 'amp', 'pool0', '-o', 'json'])).stdout) as KubeObject;
    expect(amp.spec?.location).toBe('westeurope');
  });

  it('refuses to replace with a stale resourceVersion (Conflict)', async () => {
    const stale = (await kubectl(kc, ['get', 'mp', 'pool0', '-o', 'yaml'])).stdout;
    await kubectl(kc, ['annotate', 'mp', 'pool0', 'touch=1', '--overwrite']);
    const r = await kubectl(kc, ['replace', '-f', '-'], stale);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('Error from server (Conflict)');
    expect(r.stderr).toContain('the object has been modified');
  });

  it('deletes: an object with finalizers is marked, one without is gone', async () => {
    const marked = await kubectl(kc, ['delete', 'ampm', 'pool0-4', '--wait=false']);
    expect(marked.code, marked.stderr).toBe(0);
    const ampm = JSON.parse((await kubectl(kc, ['get', 'ampm', 'pool0-4', '-o', 'json'])).stdout) as KubeObject;
    expect(ampm.metadata?.deletionTimestamp).toBeTruthy();
    // Removing the finalizer completes the deletion.
    await kubectl(kc, ['patch', 'ampm', 'pool0-4', '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
    const gone = await kubectl(kc, ['get', 'ampm', 'pool0-4']);
    expect(gone.stderr).toContain(
      'Error from server (NotFound): azuremachinepoolmachines.infrastructure.cluster.x-k8s.io "pool0-4" not found',
    );
  });

  it('streams a change to `kubectl get --watch`', async () => {
    const child = spawn('kubectl', [
      '--kubeconfig',
      kc,
      'get',
      'mp',
      'pool0',
      '--watch',
      '-o',
      'jsonpath={.spec.replicas}{"\\n"}',
      '--request-timeout=20s',
    ]);
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const waitFor = async (pred: () => boolean) => {
      for (let i = 0; i < 100 && !pred(); i++) await new Promise((r) => setTimeout(r, 100));
    };
    await waitFor(() => out.trim().length > 0);
    await kubectl(kc, ['patch', 'mp', 'pool0', '--type=merge', '-p', '{"spec":{"replicas":9}}']);
    await waitFor(() => out.includes('9\n'));
    child.kill();
    expect(out.trim().split('\n').at(-1)).toBe('9');
    // kubectl (client-go) negotiates HTTP/2, as with a real API server: the simulator's HTTP/2 side is exercised.
    expect(sim.cluster('mgmt-weu').httpVersions.get('2.0') ?? 0).toBeGreaterThan(0);
  });

  it('answers `auth can-i` from the policy, with impersonation', async () => {
    const can = async (...args: string[]) => (await kubectl(kc, ['auth', 'can-i', ...args])).stdout.trim();
    expect(await can('patch', 'machinepools')).toBe('yes');
    expect(await can('list', 'machinepools', '--as', 'viewer')).toBe('yes');
    expect(await can('patch', 'machinepools', '--as', 'viewer')).toBe('no');
    expect(await can('patch', 'machinepools', '-n', 'default', '--as', 'someone', '--as-group', 'pool-operators')).toBe(
      'yes',
    );
    expect(await can('patch', 'machinepools', '-n', 'other', '--as', 'someone', '--as-group', 'pool-operators')).toBe(
      'no',
    );
  });

  it('enforces the policy on requests: 403 for a user the policy does not allow, 401 for a bad token', async () => {
    const viewerKc = writeKubeconfig(sim.kubeconfigFor('mgmt-weu', 'viewer'));
    const r = await kubectl(viewerKc, ['annotate', 'mp', 'pool0', 'x=y', '-n', 'default']);
    expect(r.stderr).toContain('Error from server (Forbidden)');
    expect(r.stderr).toContain(
      'User "viewer" cannot patch resource "machinepools" in API group "cluster.x-k8s.io" in the namespace "default"',
    );
    const bad = structuredClone(sim.kubeconfigFor('mgmt-weu')) as { users: { user: { token: string } }[] };
    (bad.users[0] as { user: { token: string } }).user.token = 'wrong';
    const r2 = await kubectl(writeKubeconfig(bad), ['get', 'mp']);
    expect(r2.stderr).toContain('Unauthorized');
  });

  it.skipIf(!hasUpstream)(
    `rejects a schema-violating object with 422 Invalid and an unknown field with 400 (strict)${hasUpstream ? '' : ' (skipped: no upstream CRDs)'}`,
    async () => {
      const bad = {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'MachinePool',
        metadata: { name: 'bad', namespace: 'default' },
        spec: { replicas: 'x' },
      };
      const r = await kubectl(kc, ['create', '-f', '-'], JSON.stringify(bad));
      expect(r.stderr).toContain('The MachinePool "bad" is invalid');
      expect(r.stderr).toContain('spec.replicas: must be integer');
      const unknown = {
        ...bad,
        metadata: { name: 'bad2', namespace: 'default' },
        spec: {
          clusterName: 'c',
          template: {
            spec: { clusterName: 'c', bootstrap: {}, infrastructureRef: { apiGroup: 'x', kind: 'y', name: 'z' } },
          },
          bogus: 1,
        },
      };
      const r2 = await kubectl(kc, ['create', '-f', '-'], JSON.stringify(unknown));
      expect(r2.stderr).toContain('Error from server (BadRequest)');
      expect(r2.stderr).toContain('strict decoding error: unknown field "spec.bogus"');
    },
  );
});
