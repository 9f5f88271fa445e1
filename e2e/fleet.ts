// Helpers for the browser tests: the demo stack's simulator (through its kubeconfig, with client-node, as an
// operator would use kubectl) and the API.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { APIRequestContext } from '@playwright/test';
import { parse } from 'yaml';
import type { FleetResponse, PoolResponse } from '../lib/api-types';
import { readEnvFile } from '../sim/env-file.mjs';

const STATE_DIR = path.resolve(import.meta.dirname, '..', 'test-results', 'demo-state');

/** The pools of sim/scenarios/demo.yaml: five self-managed, two AKS. */
export const DEMO_POOLS = [
  'mgmt-weu/default/system',
  'mgmt-weu/default/workers',
  'mgmt-weu/default/spot',
  'mgmt-neu/default/general',
  'mgmt-neu/default/batch',
  'mgmt-weu/default/aks-user',
  'mgmt-weu/default/aks-jobs',
];

/** The settings the simulator wrote for poolscope (its env file). */
export function simEnv(): Record<string, string> {
  return readEnvFile(path.join(STATE_DIR, 'env'));
}

/** Patches a MachinePool in the simulated management cluster (a merge patch, as `kubectl patch --type merge`). */
export async function patchMachinePool(context: string, name: string, body: object): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(simEnv().KUBECONFIG as string);
  kc.setCurrentContext(context);
  await kc
    .makeApiClient(CustomObjectsApi)
    .patchNamespacedCustomObject(
      { group: 'cluster.x-k8s.io', version: 'v1beta2', plural: 'machinepools', namespace: 'default', name, body },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
}

/** Deletes a MachinePool of the simulated management cluster (as `kubectl delete machinepool`); gone already is fine. */
export async function deleteMachinePool(context: string, name: string): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(simEnv().KUBECONFIG as string);
  kc.setCurrentContext(context);
  try {
    await kc.makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({
      group: 'cluster.x-k8s.io',
      version: 'v1beta2',
      plural: 'machinepools',
      namespace: 'default',
      name,
    });
  } catch (e) {
    if ((e as { code?: number }).code !== 404) throw e;
  }
}

export async function fleet(request: APIRequestContext): Promise<FleetResponse> {
  return (await (await request.get('/api/pools')).json()) as FleetResponse;
}

export async function pool(request: APIRequestContext, key: string, at?: string): Promise<PoolResponse> {
  return (await (
    await request.get(`/api/pools/${key}${at ? `?at=${encodeURIComponent(at)}` : ''}`)
  ).json()) as PoolResponse;
}

/** The bearer token of a simulated person (`operator`, `viewer`), from the kubeconfig the simulator wrote. */
export function tokenOf(user: 'operator' | 'viewer'): string {
  const doc = parse(readFileSync(path.join(STATE_DIR, `kubeconfig-${user}`), 'utf8')) as {
    users: { user: { token: string } }[];
  };
  return doc.users[0]?.user.token as string;
}

/** A MachinePool as the simulated management cluster holds it now. */
export async function readMachinePool(context: string, name: string): Promise<{ spec: { providerIDList?: string[] } }> {
  const kc = new KubeConfig();
  kc.loadFromFile(simEnv().KUBECONFIG as string);
  kc.setCurrentContext(context);
  return (await kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
    group: 'cluster.x-k8s.io',
    version: 'v1beta2',
    plural: 'machinepools',
    namespace: 'default',
    name,
  })) as { spec: { providerIDList?: string[] } };
}
