// PooledKubeConfig against the simulated API server: every request made through one KubeConfig — lists, watches
// and client-node's typed clients — shares one Agent (and so reuses connections), where client-node alone opens a
// connection per request and leaves it open.

import { CoreV1Api, KubeConfig, RequestContext, HttpMethod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSeedSimulator } from '@/sim/kube/testing';
import { generateTls } from '@/sim/kube/tls';
import type { KubeSimulator } from '@/sim/kube/simulator';
import { until } from '../testing/sim-harness';
import { contextKubeConfig, isSharedDispatcher, PooledKubeConfig } from './calls';
import { Informer } from './informer';

describe('PooledKubeConfig against the simulator', () => {
  let sim: KubeSimulator;
  beforeAll(async () => {
    sim = await startSeedSimulator({ bookmarkIntervalMs: 100 });
  });
  afterAll(async () => {
    await sim.stop();
  });
  const base = () => {
    const kc = new KubeConfig();
    kc.loadFromFile(sim.kubeconfigPath);
    return kc;
  };
  const dispatcherOf = async (kc: KubeConfig) => {
    const ctx = new RequestContext(`${kc.getCurrentCluster()?.server}/api/v1/nodes`, HttpMethod.GET);
    await kc.applySecurityAuthentication(ctx);
    return ctx.getDispatcher();
  };

  it('gives every request of a cluster and user one shared dispatcher', async () => {
    const kc = contextKubeConfig(base(), 'mgmt-weu');
    const a = await dispatcherOf(kc);
    expect(a).toBeDefined();
    expect(await dispatcherOf(kc)).toBe(a);
    expect(isSharedDispatcher(a)).toBe(true);
    // client-node alone builds one per request, none shared.
    const plain = base();
    plain.setCurrentContext('mgmt-weu');
    const p = await dispatcherOf(plain);
    expect(p).not.toBe(await dispatcherOf(plain));
    expect(isSharedDispatcher(p)).toBe(false);
    // Another context (another cluster) gets its own.
    kc.setCurrentContext('prod-weu');
    expect(await dispatcherOf(kc)).not.toBe(a);
    await kc.closeConnections();
  });

  it('reuses connections for typed calls, lists and successive watches, and closes them on request', async () => {
    const server = sim.cluster('mgmt-weu');
    const calls = async (kc: KubeConfig) => {
      const core = kc.makeApiClient(CoreV1Api);
      for (let i = 0; i < 10; i++) await core.listNamespace();
    };
    // Ten sequential calls with client-node's own dispatchers: a connection each, left open.
    const plain = base();
    plain.setCurrentContext('mgmt-weu');
    let before = server.connections.accepted;
    const openBefore = server.connections.open;
    await calls(plain);
    expect(server.connections.accepted - before).toBe(10);
    expect(server.connections.open - openBefore).toBe(10);
    // Through the pooled KubeConfig: one or two (undici may open a second while the first one's answer is being
    // read to its end), reused from then on.
    const kc = contextKubeConfig(base(), 'mgmt-weu');
    before = server.connections.accepted;
    await calls(kc);
    expect(server.connections.accepted - before).toBeLessThanOrEqual(2);
    // An informer's list and then its watches (ended by the server and started again) take the connections
    // already open: a watch ended cleanly leaves its connection idle for the next one.
    before = server.connections.accepted;
    const informer = new Informer({ kc, path: '/apis/cluster.x-k8s.io/v1beta2/machinepools', kind: 'mp', backoffMs: [50] });
    informer.start();
    const watches = () => server.requestCounts.get('watch') ?? 0;
    const w0 = watches();
    await until('a watch', () => (watches() > w0 ? true : undefined));
    server.resetWatchConnections();
    await until('the watch to start again', () => (watches() > w0 + 1 ? true : undefined));
    informer.stop();
    expect(server.connections.accepted - before).toBe(0);
    // Closing the pool closes its connections.
    const open = server.connections.open;
    await kc.closeConnections();
    await until('the connection to close', () => (server.connections.open < open ? true : undefined));
  });

  it('is still a KubeConfig: another user of the same cluster gets its own TLS identity', async () => {
    const kc = new PooledKubeConfig();
    kc.loadFromFile(sim.kubeconfigPath);
    kc.setCurrentContext('mgmt-weu');
    const a = await kc.agent();
    expect(await kc.agent()).toBe(a);
    const ctx = kc.getContextObject('mgmt-weu');
    kc.addUser({ name: 'someone-else', token: 'another-token' });
    kc.addContext({ name: 'mgmt-weu-other', cluster: ctx?.cluster ?? '', user: 'someone-else' });
    kc.setCurrentContext('mgmt-weu-other');
    const b = await kc.agent();
    expect(b).not.toBe(a);
    // The Agent it replaced is closed.
    expect(a.closed || a.destroyed).toBe(true);
    await kc.closeConnections();
    expect(b.destroyed).toBe(true);
  });

  it('still verifies the API server against the kubeconfig\'s CA', async () => {
    const kc = new PooledKubeConfig();
    kc.loadFromFile(sim.kubeconfigPath);
    kc.setCurrentContext('mgmt-weu');
    const stranger = (await generateTls()).caPem;
    kc.clusters = kc.clusters.map((c) => (c.name === kc.getCurrentCluster()?.name ? { ...c, caData: Buffer.from(stranger).toString('base64'), caFile: undefined } : c));
    const err = await kc.makeApiClient(CoreV1Api).listNamespace().then(() => null, (e: unknown) => e as Error & { cause?: { code?: string } });
    expect(err).not.toBeNull();
    expect(String(err?.cause?.code ?? err?.message)).toMatch(/CERT|certificate|self.signed|verify/i);
    await kc.closeConnections();
  });
});

