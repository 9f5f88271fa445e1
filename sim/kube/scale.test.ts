// The MachinePool /scale subresource against the real kubectl: `kubectl scale machinepool …` works as on a real
// API server serving CAPI's CRD (autoscaling/v1 Scale, discovery entry, conflicts, watch events).

import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { KubeObject } from '../../lib/unstructured';
import { findUpstreamDir } from './crd-schema';
import { findByKind } from './resources';
import { applyScale, scaleOf } from './scale';
import type { KubeSimulator } from './simulator';
import { kubectl, startSeedSimulator } from './testing';

const upstream = findUpstreamDir(path.resolve(import.meta.dirname, '..', '..'));
const SCALE = (v: string) => `/apis/cluster.x-k8s.io/${v}/namespaces/default/machinepools/pool0/scale`;
let sim: KubeSimulator;
let kc: string;

beforeAll(async () => {
  sim = await startSeedSimulator();
  kc = sim.kubeconfigPath;
});
afterAll(async () => {
  await sim?.stop();
});

const getPool = async () =>
  JSON.parse((await kubectl(kc, ['get', 'mp', 'pool0', '-n', 'default', '-o', 'json'])).stdout) as KubeObject;

/** `kubectl get mp pool0 --watch --output-watch-events`, one "<TYPE> <spec.replicas>" line per event. */
function watchPool(): {
  lines: () => string[];
  waitFor: (pred: (lines: string[]) => boolean) => Promise<void>;
  stop: () => void;
} {
  const child = spawn('kubectl', [
    '--kubeconfig',
    kc,
    'get',
    'mp',
    'pool0',
    '-n',
    'default',
    '--watch',
    '--output-watch-events',
    '-o',
    'jsonpath={.type} {.object.spec.replicas}{"\\n"}',
    '--request-timeout=20s',
  ]);
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const lines = () => out.split('\n').filter(Boolean);
  return {
    lines,
    waitFor: async (pred) => {
      for (let i = 0; i < 150 && !pred(lines()); i++) await new Promise((r) => setTimeout(r, 100));
    },
    stop: () => child.kill(),
  };
}

// Each test runs kubectl several times (about 0.3 s each, more on a busy machine).
describe('the MachinePool /scale subresource', { timeout: 30_000 }, () => {
  it('`kubectl scale machinepool` changes spec.replicas, bumps generation and is seen by a watch', async () => {
    const before = await getPool();
    expect(before.spec?.replicas).toBe(5);
    const w = watchPool();
    try {
      await w.waitFor((l) => l.length > 0);
      expect(w.lines()).toEqual(['ADDED 5']);
      const r = await kubectl(kc, ['scale', 'machinepool', 'pool0', '-n', 'default', '--replicas=7']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.trim()).toBe('machinepool.cluster.x-k8s.io/pool0 scaled');
      await w.waitFor((l) => l.length > 1);
      expect(w.lines()).toEqual(['ADDED 5', 'MODIFIED 7']);
    } finally {
      w.stop();
    }
    const after = await getPool();
    expect(after.spec?.replicas).toBe(7);
    expect(after.metadata?.generation).toBe((before.metadata?.generation ?? 0) + 1);
    expect(after.status).toEqual(before.status);
    expect(sim.cluster('mgmt-weu').writes.at(-1)).toMatchObject({
      verb: 'patch',
      resource: 'machinepools',
      subresource: 'scale',
      name: 'pool0',
    });
  });

  it('serves the Scale (autoscaling/v1) in both versions from the paths the CRD declares', async () => {
    for (const v of ['v1beta2', 'v1beta1']) {
      const r = await kubectl(kc, ['get', '--raw', SCALE(v)]);
      expect(r.code, r.stderr).toBe(0);
      const pool = await getPool();
      expect(JSON.parse(r.stdout)).toEqual({
        apiVersion: 'autoscaling/v1',
        kind: 'Scale',
        metadata: {
          name: 'pool0',
          namespace: 'default',
          uid: pool.metadata?.uid,
          resourceVersion: pool.metadata?.resourceVersion,
          creationTimestamp: pool.metadata?.creationTimestamp,
        },
        spec: { replicas: pool.spec?.replicas },
        status: { replicas: pool.status?.replicas },
      });
    }
  });

  it("advertises machinepools/scale in discovery, as kubectl's scale client needs it", async () => {
    for (const v of ['v1beta2', 'v1beta1']) {
      const list = JSON.parse((await kubectl(kc, ['get', '--raw', `/apis/cluster.x-k8s.io/${v}`])).stdout) as {
        resources: Record<string, unknown>[];
      };
      expect(list.resources.find((r) => r.name === 'machinepools/scale')).toEqual({
        name: 'machinepools/scale',
        singularName: '',
        namespaced: true,
        group: 'autoscaling',
        version: 'v1',
        kind: 'Scale',
        verbs: ['get', 'patch', 'update'],
      });
    }
  });

  it('`kubectl scale --current-replicas` reads then replaces the Scale; a stale resourceVersion is a 409 Conflict', async () => {
    const r = await kubectl(kc, ['scale', 'mp', 'pool0', '-n', 'default', '--current-replicas=7', '--replicas=4']);
    expect(r.code, r.stderr).toBe(0);
    expect((await getPool()).spec?.replicas).toBe(4);
    expect(sim.cluster('mgmt-weu').writes.at(-1)).toMatchObject({ verb: 'update', subresource: 'scale' });

    const scale = JSON.parse((await kubectl(kc, ['get', '--raw', SCALE('v1beta2')])).stdout) as {
      metadata: { resourceVersion: string };
      spec: { replicas: number };
    };
    await kubectl(kc, ['annotate', 'mp', 'pool0', '-n', 'default', 'touch=1']);
    scale.spec.replicas = 9;
    const file = path.join(os.tmpdir(), `poolscope-scale-${process.pid}.json`);
    writeFileSync(file, JSON.stringify(scale));
    const stale = await kubectl(kc, ['replace', '--raw', SCALE('v1beta2'), '-f', file]);
    expect(stale.stderr).toContain(
      'Error from server (Conflict): Operation cannot be fulfilled on machinepools.cluster.x-k8s.io "pool0": the object has been modified',
    );
    expect((await getPool()).spec?.replicas).toBe(4);
  });

  it('dry run changes nothing; negative replicas are 422 Invalid; DELETE is 405; kinds without /scale are 404', async () => {
    const dry = await kubectl(kc, ['scale', 'mp', 'pool0', '-n', 'default', '--replicas=2', '--dry-run=server']);
    expect(dry.stdout.trim()).toBe('machinepool.cluster.x-k8s.io/pool0 scaled (server dry run)');
    expect((await getPool()).spec?.replicas).toBe(4);
    const neg = await kubectl(kc, [
      'patch',
      'mp',
      'pool0',
      '-n',
      'default',
      '--subresource=scale',
      '--type=merge',
      '-p',
      '{"spec":{"replicas":-1}}',
    ]);
    expect(neg.stderr).toContain(
      'The MachinePool "pool0" is invalid: .spec.replicas: Invalid value: -1: should be a non-negative integer',
    );
    const del = await kubectl(kc, ['delete', '--raw', SCALE('v1beta2')]);
    expect(del.stderr).toContain('Error from server (MethodNotAllowed)');
    const amp = await kubectl(kc, ['scale', 'amp', 'pool0', '-n', 'default', '--replicas=3']);
    expect(amp.stderr).toContain('Error from server (NotFound)');
    expect((await getPool()).spec?.replicas).toBe(4);
  });

  it('refuses a Scale write that leaves replicas unset on an object without them, as the API server does', () => {
    const paths = { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' };
    const pool: KubeObject = {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'MachinePool',
      metadata: { name: 'p', namespace: 'default', resourceVersion: '8' },
      spec: { clusterName: 'c' },
    };
    expect(scaleOf(pool, paths)).toMatchObject({ spec: {}, status: { replicas: 0 } });
    const forWrite = scaleOf(pool, paths, true);
    expect(() => applyScale(pool, forWrite, paths, 'p')).toThrow(
      'the spec replicas field ".spec.replicas" cannot be empty',
    );
    expect(applyScale(pool, { ...forWrite, spec: { replicas: 3 } }, paths, 'p')).toEqual({
      ...pool,
      spec: { clusterName: 'c', replicas: 3 },
    });
    expect(() => applyScale(pool, { ...forWrite, metadata: { name: 'q' }, spec: { replicas: 3 } }, paths, 'p')).toThrow(
      'the name of the object (q) does not match the name on the URL (p)',
    );
  });

  it.skipIf(!upstream)(
    `uses the scale paths CAPI's MachinePool CRD declares${upstream ? '' : ' (skipped: no upstream CRDs)'}`,
    () => {
      const crd = parse(
        readFileSync(
          path.join(upstream as string, 'cluster-api', 'crds', 'cluster.x-k8s.io_machinepools.yaml'),
          'utf8',
        ),
      ) as {
        spec: { versions: { name: string; served: boolean; subresources?: { scale?: unknown } }[] };
      };
      const declared = crd.spec.versions.filter((v) => v.served).map((v) => [v.name, v.subresources?.scale]);
      const table = findByKind('cluster.x-k8s.io/v1beta2', 'MachinePool')?.scale;
      expect(declared).toEqual([
        ['v1beta1', table],
        ['v1beta2', table],
      ]);
    },
  );
});
