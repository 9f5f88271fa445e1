// @azure/arm-compute and @azure/identity against the simulated ARM and Entra ID, built exactly as production
// code builds them: an ARM endpoint, an authority host, instance discovery off, and the CA trusted through
// NODE_EXTRA_CA_CERTS (set by sim/test-ca.setup.ts).

import { ComputeManagementClient } from '@azure/arm-compute';
import { ClientSecretCredential, DefaultAzureCredential } from '@azure/identity';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_AZURE, makeVm } from '../../lib/fixtures/objects';
import { generateTls } from '../kube/tls';
import { SimAzureServer } from './server';
import { newScaleSet } from './state';

const az = DEFAULT_AZURE;
let server: SimAzureServer;
let tight: SimAzureServer;
let cred: ClientSecretCredential;

beforeAll(async () => {
  const tls = await generateTls({ caDir: process.env.POOLSCOPE_SIM_CA_DIR });
  server = new SimAzureServer({ tls, pageSize: 100 });
  await server.start();
  // A second ARM with a tiny per-scale-set budget, sharing the same clients, to exhaust it quickly.
  tight = new SimAzureServer({
    tls,
    clients: server.clients,
    state: server.state,
    budgets: { GetVMScaleSet3Min: { capacity: 3, windowSeconds: 6 } },
  });
  await tight.start();
  server.state.putScaleSet(
    newScaleSet(az, 'big', 1000),
    Array.from({ length: 1000 }, (_, i) =>
      makeVm({
        az,
        vmss: 'big',
        member: String(i),
        provisioningState: i === 7 ? 'Failed' : 'Succeeded',
        errorCode: 'OSProvisioningTimedOut',
      }),
    ),
  );
  server.state.putScaleSet(
    newScaleSet(az, 'small', 2),
    [0, 1].map((i) => makeVm({ az, vmss: 'small', member: String(i) })),
  );
  server.state.putScaleSet(newScaleSet({ ...az, location: 'northeurope' }, 'throttled', 1), [
    makeVm({ az, vmss: 'throttled', member: '0' }),
  ]);
  const c = server.clients[0]!;
  cred = new ClientSecretCredential(c.tenantId, c.clientId, c.clientSecret, {
    authorityHost: server.url,
    disableInstanceDiscovery: true,
  });
});
afterAll(async () => {
  await server?.stop();
  await tight?.stop();
});

const client = (opts: ConstructorParameters<typeof ComputeManagementClient>[2] = {}) =>
  new ComputeManagementClient(cred, az.subscriptionId, { endpoint: server.url, ...opts });

describe('Azure SDK against the simulated ARM', () => {
  it('gets a scale set with its capacity and state', async () => {
    const vmss = await client().virtualMachineScaleSets.get(az.resourceGroup, 'small');
    expect(vmss).toMatchObject({
      name: 'small',
      sku: { capacity: 2 },
      provisioningState: 'Succeeded',
      orchestrationMode: 'Uniform',
    });
  });

  it('pages through 1,000 VMs with instance views', async () => {
    const before = server.requestCounts.get('vms.list') ?? 0;
    const vms = [];
    for await (const vm of client().virtualMachineScaleSetVMs.list(az.resourceGroup, 'big', { expand: 'instanceView' }))
      vms.push(vm);
    expect(vms).toHaveLength(1000);
    expect((server.requestCounts.get('vms.list') ?? 0) - before).toBe(10);
    expect(vms[7]?.instanceView?.statuses?.[0]?.code).toBe('ProvisioningState/failed/OSProvisioningTimedOut');
    expect(vms[0]?.instanceView?.statuses?.map((s) => s.code)).toEqual([
      'ProvisioningState/succeeded',
      'PowerState/running',
    ]);
  });

  it('lists VMs without instance views unless asked', async () => {
    const vms = [];
    for await (const vm of client().virtualMachineScaleSetVMs.list(az.resourceGroup, 'small')) vms.push(vm);
    expect(vms.map((v) => v.instanceView)).toEqual([undefined, undefined]);
  });

  it('reads one VM instance view', async () => {
    const iv = await client().virtualMachineScaleSetVMs.getInstanceView(az.resourceGroup, 'big', '7');
    expect(iv.statuses?.[0]).toMatchObject({ code: 'ProvisioningState/failed/OSProvisioningTimedOut', level: 'Error' });
  });

  it('answers 404 ResourceNotFound for a missing scale set', async () => {
    await expect(client().virtualMachineScaleSets.get(az.resourceGroup, 'nope')).rejects.toMatchObject({
      statusCode: 404,
      code: 'ResourceNotFound',
    });
  });

  it('reports the remaining budget and answers 429 with Retry-After once the scale set budget is spent', async () => {
    const seen: (string | undefined)[] = [];
    const tc = tight.clients[0]!;
    const tcred = new ClientSecretCredential(tc.tenantId, tc.clientId, tc.clientSecret, {
      authorityHost: tight.url,
      disableInstanceDiscovery: true,
    });
    const c = new ComputeManagementClient(tcred, az.subscriptionId, {
      endpoint: tight.url,
      retryOptions: { maxRetries: 0 },
    });
    let error: unknown;
    for (let i = 0; i < 5 && !error; i++) {
      try {
        await c.virtualMachineScaleSets.get(az.resourceGroup, 'throttled', {
          onResponse: (r) => seen.push(r.headers.get('x-ms-ratelimit-remaining-resource')),
        });
      } catch (e) {
        error = e;
      }
    }
    expect(seen[0]).toMatch(
      /^Microsoft\.Compute\/HighCostGetVMScaleSet3Min;\d+,Microsoft\.Compute\/HighCostGetVMScaleSet30Min;\d+,Microsoft\.Compute\/GetVMScaleSet3Min;2$/,
    );
    expect(error).toMatchObject({ statusCode: 429, code: 'OperationNotAllowed' });
    const retryAfter = (
      error as { response?: { headers: { get(n: string): string | undefined } } }
    ).response?.headers.get('retry-after');
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  });

  it('rejects a bad token with 401', async () => {
    const bad = { getToken: async () => ({ token: 'not-a-token', expiresOnTimestamp: Date.now() + 3_600_000 }) };
    const c = new ComputeManagementClient(bad, az.subscriptionId, { endpoint: server.url });
    await expect(c.virtualMachineScaleSets.get(az.resourceGroup, 'small')).rejects.toMatchObject({
      statusCode: 401,
      code: 'InvalidAuthenticationToken',
    });
  });

  it('refuses a wrong client secret at the token endpoint', async () => {
    const c = server.clients[0]!;
    const wrong = new ClientSecretCredential(c.tenantId, c.clientId, 'wrong', {
      authorityHost: server.url,
      disableInstanceDiscovery: true,
    });
    await expect(wrong.getToken('https://management.azure.com/.default')).rejects.toThrow(/AADSTS7000215/);
  });

  it('works through DefaultAzureCredential with the environment variables a user sets', async () => {
    const c = server.clients[0]!;
    const saved = { ...process.env };
    Object.assign(process.env, {
      AZURE_TENANT_ID: c.tenantId,
      AZURE_CLIENT_ID: c.clientId,
      AZURE_CLIENT_SECRET: c.clientSecret,
      AZURE_AUTHORITY_HOST: server.url,
    });
    try {
      const dac = new DefaultAzureCredential({ disableInstanceDiscovery: true } as never);
      const vmss = await new ComputeManagementClient(dac, az.subscriptionId, {
        endpoint: server.url,
      }).virtualMachineScaleSets.get(az.resourceGroup, 'small');
      expect(vmss.name).toBe('small');
    } finally {
      process.env = saved;
    }
  });

  it('updates capacity as a long-running operation', async () => {
    const poller = client().virtualMachineScaleSets.update(az.resourceGroup, 'small', { sku: { capacity: 3 } });
    // Nothing drives the world here: complete the operation as the world controllers would.
    setTimeout(() => {
      for (const op of server.state.operations.values()) {
        op.status = 'Succeeded';
        op.endTime = new Date().toISOString();
      }
    }, 200);
    const result = await poller;
    expect(result.sku?.capacity).toBe(3);
    expect(server.requestCounts.get('operations.get')).toBeGreaterThanOrEqual(1);
  });
});

describe('more of ARM', () => {
  it('lists Flexible members as virtual machines filtered by scale set', async () => {
    const flex = newScaleSet(az, 'flex', 2, 'Flexible');
    server.state.putScaleSet(
      flex,
      ['flex_1a2b3c4d', 'flex_5e6f7a8b'].map((m) => makeVm({ az, vmss: 'flex', member: m, mode: 'Flexible' })),
    );
    const vms = [];
    for await (const vm of client().virtualMachines.list(az.resourceGroup, {
      filter: `'virtualMachineScaleSet/id' eq '${String(flex.id)}'`,
    }))
      vms.push(vm);
    expect(vms.map((v) => [v.name, v.virtualMachineScaleSet?.id])).toEqual([
      ['flex_1a2b3c4d', flex.id],
      ['flex_5e6f7a8b', flex.id],
    ]);
    expect(vms[0]?.id).toBe(
      `/subscriptions/${az.subscriptionId}/resourceGroups/${az.resourceGroup}/providers/Microsoft.Compute/virtualMachines/flex_1a2b3c4d`,
    );
  });

  it('lists scale sets by resource group and by subscription', async () => {
    const byRg = [];
    for await (const s of client().virtualMachineScaleSets.list(az.resourceGroup)) byRg.push(s.name);
    expect(byRg).toEqual(expect.arrayContaining(['big', 'small']));
    const all = [];
    for await (const s of client().virtualMachineScaleSets.listAll()) all.push(s.name);
    expect(all).toEqual(expect.arrayContaining(['big', 'small', 'throttled']));
  });

  it('injects faults per operation: a 5xx, then a reset connection', async () => {
    const c = client({ retryOptions: { maxRetries: 0 } });
    server.addFault({ operation: 'vmss.get', kind: 'error', status: 500, count: 1 });
    await expect(c.virtualMachineScaleSets.get(az.resourceGroup, 'small')).rejects.toMatchObject({ statusCode: 500 });
    server.addFault({ operation: 'vmss.get', kind: 'reset', count: 1 });
    await expect(c.virtualMachineScaleSets.get(az.resourceGroup, 'small')).rejects.toThrow();
    expect((await c.virtualMachineScaleSets.get(az.resourceGroup, 'small')).name).toBe('small');
  });

  it('rejects an unknown api-version with 400 InvalidApiVersionParameter', async () => {
    const token = await cred.getToken('https://management.azure.com/.default');
    const res = await fetch(
      `${server.url}/subscriptions/${az.subscriptionId}/resourceGroups/${az.resourceGroup}/providers/Microsoft.Compute/virtualMachineScaleSets/small?api-version=1999-01-01`,
      { headers: { Authorization: `Bearer ${token?.token}` } },
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('InvalidApiVersionParameter');
  });

  it('answers a PATCH body that is not an object with 400 InvalidRequestContent', async () => {
    const token = await cred.getToken('https://management.azure.com/.default');
    const url = `${server.url}/subscriptions/${az.subscriptionId}/resourceGroups/${az.resourceGroup}/providers/Microsoft.Compute/virtualMachineScaleSets/small?api-version=2024-07-01`;
    for (const body of ['null', '[]', '3', '{']) {
      const res = await fetch(url, {
        method: 'PATCH',
        headers: { Authorization: `Bearer ${token?.token}`, 'Content-Type': 'application/json' },
        body,
      });
      expect(res.status, body).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('InvalidRequestContent');
    }
  });
});
