// A management cluster source facing what a tenant or a bad network can do: a workload kubeconfig Secret written
// to run a program, read a local file or send credentials elsewhere; a server that answers with text meant for
// readers; a management cluster unreachable at start, or one that never answers; and one continuous outage.

import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { SourceHealth } from '@/lib/api-types';
import { startSeedSimulator } from '@/sim/kube/testing';
import type { KubeSimulator } from '@/sim/kube/simulator';
import { findByKind, type ResourceDef } from '@/sim/kube/resources';
import { until } from '../testing/sim-harness';
import { ContextSource } from './context-source';
import { nextHealth } from './source-health';

const TICK_MS = 100;
const CLUSTER = findByKind('cluster.x-k8s.io/v1beta2', 'Cluster') as ResourceDef;
const SECRET = findByKind('v1', 'Secret') as ResourceDef;
const NAMESPACE = findByKind('v1', 'Namespace') as ResourceDef;

describe('ContextSource facing hostile input and outages', { timeout: 20_000 }, () => {
  let sim: KubeSimulator;
  let attacker: https.Server;
  let attackerPort = 0;
  /** Every Authorization header the attacker's server received. */
  const received: (string | undefined)[] = [];
  const sources: ContextSource[] = [];
  const dir = mkdtempSync(path.join(os.tmpdir(), 'poolscope-hostile-'));

  beforeAll(async () => {
    sim = await startSeedSimulator();
    sim
      .cluster('mgmt-weu')
      .store.create(NAMESPACE, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tenant' } });
    // A server of the tenant's choosing, with a certificate the kubeconfig's CA vouches for.
    attacker = https.createServer({ cert: sim.tls.certPem, key: sim.tls.keyPem }, (req, res) => {
      received.push(req.headers.authorization);
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'Status',
          status: 'Failure',
          reason: 'Unauthorized',
          message: 'Session expired: sign in again at https://evil.example/login',
        }),
      );
    });
    await new Promise<void>((r) => attacker.listen(0, '127.0.0.1', r));
    attackerPort = (attacker.address() as AddressInfo).port;
  });
  afterEach(() => {
    for (const s of sources.splice(0)) s.stop();
  });
  afterAll(async () => {
    await sim.stop();
    attacker.closeAllConnections();
    await new Promise((r) => attacker.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  const startSource = async (context = 'mgmt-weu', kc?: KubeConfig): Promise<ContextSource> => {
    const config = kc ?? new KubeConfig();
    if (!kc) {
      config.loadFromFile(sim.kubeconfigPath);
      config.setCurrentContext(context);
    }
    const src = new ContextSource(
      context,
      config,
      () => {},
      () => {},
      TICK_MS,
    );
    sources.push(src);
    await src.start();
    return src;
  };

  /** A tenant's Cluster (its endpoint the attacker's server) and its kubeconfig Secret with `user`. */
  const plant = (name: string, user: Record<string, unknown>, endpointPort = attackerPort) => {
    const store = sim.cluster('mgmt-weu').store;
    store.create(CLUSTER, 'tenant', {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Cluster',
      metadata: { name, namespace: 'tenant' },
      spec: { controlPlaneEndpoint: { host: '127.0.0.1', port: endpointPort } },
    });
    const kubeconfig = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name,
          cluster: {
            server: `https://127.0.0.1:${attackerPort}`,
            'certificate-authority-data': Buffer.from(sim.tls.caPem).toString('base64'),
          },
        },
      ],
      users: [{ name, user }],
      contexts: [{ name, context: { cluster: name, user: name } }],
      'current-context': name,
    };
    store.create(SECRET, 'tenant', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${name}-kubeconfig`, namespace: 'tenant' },
      data: { value: Buffer.from(stringify(kubeconfig)).toString('base64') },
    });
  };
  const workload = (src: ContextSource, name: string) =>
    src.health().find((h) => h.kind === 'workload' && h.name === name);

  it("never runs the program a Secret's exec names, nor contacts its server", async () => {
    const marker = path.join(dir, 'exec-ran');
    plant('evil-exec', {
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: process.execPath,
        args: ['-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran')`],
      },
    });
    const src = await startSource();
    const h = await until('the Secret refused', () =>
      workload(src, 'evil-exec')?.state === 'error' ? workload(src, 'evil-exec') : undefined,
    );
    expect(h?.error).toBe(
      'poolscope does not use the kubeconfig in Secret tenant/evil-exec-kubeconfig: user "evil-exec" has "exec", which poolscope does not accept from a Secret (only token, client-certificate-data, client-key-data)',
    );
    // A few refresh ticks later: still nothing ran, nothing was sent.
    await new Promise((r) => setTimeout(r, TICK_MS * 5));
    expect(existsSync(marker)).toBe(false);
    expect(received).toEqual([]);
  });

  it('never reads a local file a Secret names (token-file), nor sends it anywhere', async () => {
    const file = path.join(dir, 'sa-token');
    writeFileSync(file, 'poolscope-service-account-token');
    plant('evil-file', { 'token-file': file });
    const src = await startSource();
    await until('the Secret refused', () => (workload(src, 'evil-file')?.state === 'error' ? true : undefined));
    expect(workload(src, 'evil-file')?.error).toMatch(/has "token-file"/);
    await new Promise((r) => setTimeout(r, TICK_MS * 5));
    expect(received).toEqual([]);
  });

  it("does not go to a server other than the Cluster's endpoint", async () => {
    plant('evil-moved', { token: 'tenant-token' }, attackerPort + 1);
    const src = await startSource();
    await until('the Secret refused', () => (workload(src, 'evil-moved')?.state === 'error' ? true : undefined));
    expect(workload(src, 'evil-moved')?.error).toMatch(
      /is not the Cluster's control plane endpoint \(127\.0\.0\.1:\d+\)$/,
    );
    expect(received).toEqual([]);
  });

  it("shows a workload server's refusal by its status, not the words it sent", async () => {
    plant('evil-words', { token: 'tenant-token' });
    const src = await startSource();
    const h = await until('the refusal', () =>
      workload(src, 'evil-words')?.state === 'stale' ? workload(src, 'evil-words') : undefined,
    );
    expect(h?.error).toBe('list /api/v1/nodes: HTTP 401 Unauthorized: the credentials were not accepted');
    expect(received).toContain('Bearer tenant-token');
  });

  it('recovers a management cluster unreachable at start: discovery is retried and its error clears', async () => {
    const mgmt = sim.cluster('mgmt-weu');
    mgmt.setAvailable(false);
    let src: ContextSource;
    try {
      src = await startSource();
      const down = await until('the discovery error', () =>
        src.health()[0]?.state === 'error' ? src.health()[0] : undefined,
      );
      expect(down?.error).toMatch(/^API discovery: /);
    } finally {
      mgmt.setAvailable(true);
    }
    await until('live', () => (src!.health()[0]?.state === 'live' ? true : undefined), 10_000);
    expect(src!.health()[0]?.error).toBeUndefined();
    expect(src!.mpVersion).toBe('v1beta2');
    await until('the pool listed', () => src!.poolInput('default/pool0') ?? undefined);
  });

  it('returns from start at once against a server that never answers, so other contexts start', async () => {
    const sockets: net.Socket[] = [];
    const hung = net.createServer((s) => void sockets.push(s));
    await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
    try {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [
          {
            name: 'hung',
            server: `https://127.0.0.1:${(hung.address() as AddressInfo).port}`,
            caData: Buffer.from(sim.tls.caPem).toString('base64'),
            skipTLSVerify: false,
          },
        ],
        users: [{ name: 'u', token: 't' }],
        contexts: [{ name: 'hung', cluster: 'hung', user: 'u' }],
        currentContext: 'hung',
      });
      const t0 = Date.now();
      const src = await startSource('hung', kc);
      expect(Date.now() - t0).toBeLessThan(500);
      expect(src.health()[0]?.state).toBe('starting');
      const other = await startSource();
      await until('the other context live', () => (other.health()[0]?.state === 'live' ? true : undefined), 10_000);
    } finally {
      for (const s of sockets) s.destroy();
      hung.close();
    }
  });

  it('keeps "since" through one continuous outage of the management and workload clusters', async () => {
    const src = await startSource();
    const prod = () => workload(src, 'prod-weu');
    await until(
      'live',
      () => (prod()?.state === 'live' && src.health()[0]?.state === 'live' ? true : undefined),
      10_000,
    );
    const clusters = [sim.cluster('mgmt-weu'), sim.cluster('prod-weu')];
    for (const c of clusters) c.setAvailable(false);
    try {
      const first = await until('both down', () =>
        prod()?.state !== 'live' && src.health()[0]?.state !== 'live'
          ? { w: prod()?.since, m: src.health()[0]?.since }
          : undefined,
      );
      // The Secret is read again at every tick while the workload cluster is not live; the informers retry.
      const seen = new Set<string>();
      for (let i = 0; i < 15; i++) {
        await new Promise((r) => setTimeout(r, TICK_MS));
        seen.add(`${prod()?.since} ${src.health()[0]?.since}`);
      }
      expect([...seen]).toEqual([`${first.w} ${first.m}`]);
    } finally {
      for (const c of clusters) c.setAvailable(true);
    }
  });
});

describe('nextHealth', () => {
  const at = (s: string) => new Date(`2026-12-05T10:00:${s}Z`);
  const live: SourceHealth = {
    name: 'c',
    context: 'c',
    kind: 'workload',
    state: 'live',
    since: at('00').toISOString(),
  };
  it('keeps the time a source went down while it stays down, whatever the error says', () => {
    const down = nextHealth(live, 'stale', 'list /api/v1/nodes: connection refused', at('10'));
    expect(down.since).toBe(at('10').toISOString());
    const error = nextHealth(down, 'error', 'read Secret default/x-kubeconfig: no answer in time', at('20'));
    expect(error).toEqual({
      ...live,
      state: 'error',
      since: at('10').toISOString(),
      error: 'read Secret default/x-kubeconfig: no answer in time',
    });
    expect(nextHealth(error, 'stale', 'list /api/v1/nodes: connection refused', at('30')).since).toBe(
      at('10').toISOString(),
    );
    const back = nextHealth(error, 'live', undefined, at('40'));
    expect(back).toEqual({ ...live, since: at('40').toISOString() });
    expect(nextHealth(back, 'live', undefined, at('50'))).toBe(back);
  });
});
