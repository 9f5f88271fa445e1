// Reading AKS agent pools: which ARM ids (read from ASO objects in a cluster, so untrusted) name one, and the reader
// — the real @azure/arm-containerservice, built as production builds it — against the simulated ARM: the answer
// as lib/ reads it, the managed cluster, a missing pool, AKS's own budget running out (429 and Retry-After), and injected faults.

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ClientSecretCredential } from '@azure/identity';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normaliseAgentPool, normaliseAksMachines, normaliseManagedCluster } from '@/lib/aks-model';
import { agentPoolArmId, aksVmProviderId, makeAgentPool, makeAksScaleSet } from '@/lib/fixtures/aks-objects';
import { DEFAULT_AZURE } from '@/lib/fixtures/objects';
import { findUpstreamDir } from '@/sim/kube/crd-schema';
import { generateTls } from '@/sim/kube/tls';
import { SimAzureServer } from '@/sim/azure/server';
import {
  agentPoolRefOf,
  AksReader,
  managedClusterIdOf,
  managedClusterRefOf,
  type AgentPoolRef,
  type ManagedClusterRef,
} from './aks-reader';
import { AzureReader } from './reader';

const az = DEFAULT_AZURE;
const ref = (name: string, cluster = 'aks-weu'): AgentPoolRef =>
  agentPoolRefOf(agentPoolArmId(cluster, name)) as AgentPoolRef;

describe('agentPoolRefOf', () => {
  it('reads an agent pool id as ASO records it, resource group segment in any case', () => {
    expect(agentPoolRefOf(agentPoolArmId('aks-weu', 'user'))).toEqual({
      subscriptionId: az.subscriptionId,
      resourceGroup: az.resourceGroup,
      cluster: 'aks-weu',
      name: 'user',
    });
    expect(
      agentPoolRefOf(agentPoolArmId('aks-weu', 'user').replace('resourcegroups', 'resourceGroups')),
    ).not.toBeNull();
  });

  it('refuses anything else: other resources, extra segments, traversal, query or host characters', () => {
    const good = agentPoolArmId('aks-weu', 'user');
    for (const bad of [
      null,
      '',
      good.replace('Microsoft.ContainerService', 'Microsoft.Compute'),
      `${good}/machines/m1`,
      good.replace('/aks-weu/', '/../'),
      good.replace('/aks-weu/', '/..%2F/'),
      `${good}?api-version=2019-01-01`,
      `${good}#x`,
      good.replace('/user', '/user@evil.example'),
      `https://evil.example${good}`,
      good.replace(az.subscriptionId, 'not-a-subscription'),
    ])
      expect(agentPoolRefOf(bad), String(bad)).toBeNull();
  });
});

describe('managedClusterIdOf and managedClusterRefOf', () => {
  it("name an agent pool's managed cluster, one id for the pools of one cluster whatever their case", () => {
    const a = managedClusterIdOf(ref('user'));
    expect(a).toBe(managedClusterIdOf(ref('JOBS')));
    expect(managedClusterRefOf(a)).toEqual({
      subscriptionId: az.subscriptionId,
      resourceGroup: az.resourceGroup.toLowerCase(),
      cluster: 'aks-weu',
    });
    for (const bad of [`${a}/agentPools/user`, a.replace('/aks-weu', '/..'), `${a}?x=1`, 'aks-weu'])
      expect(managedClusterRefOf(bad), bad).toBeNull();
  });
});

describe('AksReader against the simulated ARM', () => {
  let server: SimAzureServer;
  let tight: SimAzureServer;
  let reader: AksReader;
  let tightReader: AksReader;
  const stored = makeAgentPool({
    cluster: 'aks-weu',
    name: 'user',
    state: {
      count: 5,
      provisioningState: 'Failed',
      enableAutoScaling: true,
      minCount: 2,
      maxCount: 8,
      provisioningError: { code: 'QuotaExceeded', message: 'Operation could not be completed: quota.' },
    },
  });

  const credentialFor = (s: SimAzureServer) => {
    const c = s.clients[0]!;
    return new ClientSecretCredential(c.tenantId, c.clientId, c.clientSecret, {
      authorityHost: s.url,
      disableInstanceDiscovery: true,
    });
  };

  let tls: Awaited<ReturnType<typeof generateTls>>;

  beforeAll(async () => {
    tls = await generateTls({ caDir: process.env.POOLSCOPE_SIM_CA_DIR });
    server = new SimAzureServer({ tls });
    await server.start();
    // AKS's budget down to two reads a minute, to spend it quickly.
    tight = new SimAzureServer({
      tls,
      clients: server.clients,
      state: server.state,
      budgets: { AksReads: { capacity: 2, windowSeconds: 60 } },
    });
    await tight.start();
    server.state.putAgentPool(stored);
    reader = new AksReader(credentialFor(server), server.url);
    tightReader = new AksReader(credentialFor(tight), tight.url);
  });
  afterAll(async () => {
    await server?.stop();
    await tight?.stop();
  });

  it('reads the agent pool as lib/ reads its REST shape, with the answer time', async () => {
    const before = Date.now();
    const r = await reader.read(ref('user'));
    expect(r.state).toBe('ok');
    if (r.state !== 'ok') return;
    expect(normaliseAgentPool(r.agentPool)).toEqual(normaliseAgentPool(stored));
    expect(normaliseAgentPool(r.agentPool)).toMatchObject({
      count: 5,
      provisioningState: 'Failed',
      provisioningError: { code: 'QuotaExceeded' },
      type: 'VirtualMachineScaleSets',
      mode: 'User',
    });
    expect(Date.parse(r.readAt)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(r.calls).toBe(1);
  });

  const upstream = findUpstreamDir(path.resolve(import.meta.dirname, '..', '..'));
  const example = upstream ? path.join(upstream, 'azure-rest-api-specs', 'aks', 'AgentPoolsGet.json') : null;
  const haveExample = example !== null && existsSync(example);
  it.skipIf(!haveExample)(
    `reads upstream's agent pool example, served as AKS serves it, as lib/ reads the example itself${haveExample ? '' : ' (skipped: ../shared/upstream not found; CI has it)'}`,
    async () => {
      const body = (JSON.parse(readFileSync(example as string, 'utf8')) as { responses: { 200: { body: unknown } } })
        .responses[200].body as Record<string, unknown>;
      // The example's own subscription and names, moved into ours (the simulated Entra ID grants only that one).
      const id = agentPoolArmId('clustername1', 'agentpool1');
      server.state.putAgentPool({ ...body, id });
      const r = await reader.read(ref('agentpool1', 'clustername1'));
      expect(r.state).toBe('ok');
      if (r.state === 'ok') expect(normaliseAgentPool(r.agentPool)).toEqual(normaliseAgentPool({ ...body, id }));
    },
  );

  it("lists a managed cluster's agent pools with one call, by name, as lib/ reads each", async () => {
    server.state.putAgentPool(makeAgentPool({ cluster: 'aks-weu', name: 'jobs', state: { count: 2 } }));
    const cluster = managedClusterRefOf(managedClusterIdOf(ref('user'))) as ManagedClusterRef;
    const r = await reader.list(cluster);
    expect(r).toMatchObject({ state: 'ok', calls: 1 });
    if (r.state !== 'ok') return;
    expect([...r.agentPools.keys()].sort()).toEqual(['jobs', 'user']);
    expect(normaliseAgentPool(r.agentPools.get('user') as Record<string, unknown>)).toEqual(normaliseAgentPool(stored));
    const none = await reader.list({ ...cluster, cluster: 'aks-none' });
    expect(none).toMatchObject({ state: 'not-found', calls: 1 });
    server.addFault({ operation: 'agentPools.list', kind: 'error', status: 429, retryAfterSeconds: 9, count: 1 });
    expect(await reader.list(cluster)).toMatchObject({ state: 'throttled', retryAfterSeconds: 9 });
  });

  it('reads the managed cluster: its control plane, its node resource group', async () => {
    const cluster = managedClusterRefOf(managedClusterIdOf(ref('user'))) as ManagedClusterRef;
    const r = await reader.managedCluster(cluster);
    expect(r).toMatchObject({ state: 'ok', calls: 1 });
    if (r.state !== 'ok') return;
    expect(normaliseManagedCluster(r.managedCluster)).toEqual({
      name: 'aks-weu',
      provisioningState: 'Succeeded',
      powerState: 'Running',
      kubernetesVersion: '1.33.2',
      currentKubernetesVersion: '1.33.2',
      nodeResourceGroup: `MC_${az.resourceGroup}_aks-weu_${az.location}`,
    });
    expect(r.managedCluster.location).toBe(az.location);
    expect(await reader.managedCluster({ ...cluster, cluster: 'aks-none' })).toMatchObject({ state: 'not-found' });
    server.addFault({ operation: 'managedClusters.get', kind: 'error', status: 429, retryAfterSeconds: 7, count: 1 });
    expect(await reader.managedCluster(cluster)).toMatchObject({ state: 'throttled', retryAfterSeconds: 7 });
  });

  it("lists an agent pool's machines a page a call, each naming its VM; Compute shows no scale set of a VMs pool", async () => {
    const { vmss, vms } = makeAksScaleSet({ cluster: 'aks-weu', agentPool: 'user', instances: [0, 1, 2] });
    const rec = server.state.putScaleSet(vmss, vms);
    const paged = new SimAzureServer({
      tls,
      clients: server.clients,
      state: server.state,
      pageSize: 2,
    });
    await paged.start();
    try {
      const r = await new AksReader(credentialFor(paged), paged.url).machines(ref('user'));
      expect(r).toMatchObject({ state: 'ok', calls: 2 });
      if (r.state !== 'ok') return;
      expect(normaliseAksMachines(r.machines).map((m) => m.providerID)).toEqual(
        [0, 1, 2].map((n) => aksVmProviderId({ clusterName: 'aks-weu', agentPool: 'user', instanceId: n })),
      );
      // A VirtualMachines pool's VMs: AKS lists them, Compute has no scale set for them.
      rec.standalone = true;
      expect(await reader.machines(ref('user'))).toMatchObject({ state: 'ok', machines: { length: 3 } });
      const compute = new AzureReader({
        endpoint: server.url,
        disableInstanceDiscovery: true,
        credential: credentialFor(server),
      });
      const listed = await compute.listScaleSets(az.subscriptionId, rec.resourceGroup);
      expect(listed).toMatchObject({ state: 'ok', scaleSets: [] });
      expect(
        await compute.read({ subscriptionId: az.subscriptionId, resourceGroup: rec.resourceGroup, name: rec.name }),
      ).toMatchObject({ state: 'not-found' });
    } finally {
      await paged.stop();
      server.state.deleteScaleSet(rec.subscriptionId, rec.resourceGroup, rec.name);
    }
    expect(await reader.machines(ref('gone'))).toMatchObject({ state: 'not-found', calls: 1 });
    server.addFault({ operation: 'machines.list', kind: 'error', status: 429, retryAfterSeconds: 5, count: 1 });
    expect(await reader.machines(ref('user'))).toMatchObject({ state: 'throttled', retryAfterSeconds: 5 });
  });

  it('sends a read once more when its connection is reset before an answer, and only once', async () => {
    const gets = () => server.requestCounts.get('agentPools.get') ?? 0;
    let before = gets();
    server.addFault({ operation: 'agentPools.get', kind: 'reset', count: 1 });
    expect(await reader.read(ref('user'))).toMatchObject({ state: 'ok', calls: 1 });
    expect(gets()).toBe(before + 2);
    before = gets();
    server.addFault({ operation: 'agentPools.get', kind: 'reset', count: 2 });
    expect(await reader.read(ref('user'))).toMatchObject({
      state: 'unreachable',
      error: expect.stringMatching(/^ECONNRESET/),
    });
    expect(gets()).toBe(before + 2);
    // Compute's reads the same way: the scale set's GET, then its VMs.
    const { vmss, vms } = makeAksScaleSet({ cluster: 'aks-weu', agentPool: 'reset', instances: [0] });
    const rec = server.state.putScaleSet(vmss, vms);
    const compute = new AzureReader({
      endpoint: server.url,
      disableInstanceDiscovery: true,
      credential: credentialFor(server),
    });
    server.addFault({ operation: 'vmss.get', kind: 'reset', count: 1 });
    server.addFault({ operation: 'vms.list', kind: 'reset', count: 1 });
    const read = await compute.read({
      subscriptionId: az.subscriptionId,
      resourceGroup: rec.resourceGroup,
      name: rec.name,
    });
    expect(read).toMatchObject({ state: 'ok', vms: { length: 1 } });
    server.state.deleteScaleSet(rec.subscriptionId, rec.resourceGroup, rec.name);
  });

  it('says not found for an agent pool AKS does not have', async () => {
    const r = await reader.read(ref('gone'));
    expect(r).toMatchObject({ state: 'not-found', calls: 1 });
    if (r.state === 'not-found') expect(r.error).toMatch(/^ResourceNotFound: /);
  });

  it("says throttled, with AKS's Retry-After, once AKS's budget is spent", async () => {
    const reads = [];
    for (let i = 0; i < 3; i++) reads.push(await tightReader.read(ref('user')));
    expect(reads.map((r) => r.state)).toEqual(['ok', 'ok', 'throttled']);
    const last = reads[2];
    if (last?.state === 'throttled') expect(last.retryAfterSeconds).toBeGreaterThan(0);
  });

  it('says unreachable on a 5xx, and throttled on an injected 429 with its Retry-After', async () => {
    server.addFault({ operation: 'agentPools.get', kind: 'error', status: 503, count: 1 });
    expect(await reader.read(ref('user'))).toMatchObject({ state: 'unreachable', error: /^ServiceUnavailable/ });
    server.addFault({ operation: 'agentPools.get', kind: 'error', status: 429, retryAfterSeconds: 17, count: 1 });
    expect(await reader.read(ref('user'))).toMatchObject({ state: 'throttled', retryAfterSeconds: 17 });
    expect((await reader.read(ref('user'))).state).toBe('ok');
  });
});
