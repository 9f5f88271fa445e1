// Test helpers: a small fleet (one management cluster with the S1 seed pool, its workload cluster) and a
// way to run the real kubectl against it.

import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { buildScenario } from '../../lib/fixtures/scenarios';
import type { KubeObject } from '../../lib/unstructured';
import { startKubeSimulator, type KubeSimulator, type KubeSimulatorOptions } from './simulator';

const run = promisify(execFile);

export function seedObjects(): { management: KubeObject[]; nodes: KubeObject[] } {
  const { input } = buildScenario('s01-scale-up-pre-fix');
  return {
    management: [
      input.cluster as KubeObject,
      input.machinePool,
      input.azureMachinePool as KubeObject,
      ...(input.azureMachinePoolMachines ?? []),
      ...(input.machines ?? []),
    ],
    nodes: input.workload?.state === 'ok' ? input.workload.nodes : [],
  };
}

export async function startSeedSimulator(extra: Partial<KubeSimulatorOptions> = {}): Promise<KubeSimulator> {
  const { management, nodes } = seedObjects();
  return startKubeSimulator({
    clusters: [
      { name: 'mgmt-weu', role: 'management', objects: management },
      { name: 'prod-weu', role: 'workload', objects: nodes },
    ],
    users: [{ name: 'viewer' }, { name: 'operator', groups: ['pool-operators'] }],
    policy: [
      { users: ['viewer'], verbs: ['get', 'list', 'watch'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'] },
      {
        groups: ['pool-operators'],
        verbs: ['get', 'list', 'watch', 'patch'],
        apiGroups: ['cluster.x-k8s.io'],
        resources: ['machinepools'],
        namespaces: ['default'],
      },
    ],
    log: () => {},
    ...extra,
  });
}

/** Writes a kubeconfig object to a temp file and returns its path. */
export function writeKubeconfig(doc: Record<string, unknown>, name = 'kubeconfig'): string {
  const file = path.join(os.tmpdir(), `poolscope-test-${process.pid}-${Math.random().toString(36).slice(2)}-${name}`);
  writeFileSync(file, stringify(doc), { mode: 0o600 });
  return file;
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function kubectl(kubeconfig: string, args: string[], input?: string): Promise<KubectlResult> {
  const child = run('kubectl', ['--kubeconfig', kubeconfig, ...args], {
    timeout: 30_000,
    env: { ...process.env, KUBECONFIG: kubeconfig },
  });
  if (input !== undefined) {
    child.child.stdin?.end(input);
  }
  try {
    const { stdout, stderr } = await child;
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof err.code === 'number' ? err.code : 1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}
