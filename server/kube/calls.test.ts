// PooledKubeConfig against the simulated API server: every request made through one KubeConfig — lists, watches
// and client-node's typed clients — shares one Agent (and so reuses connections; over HTTP/2, one connection
// carries them all), where client-node alone opens a connection per request and leaves it open.

import type { ServerResponse } from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { CoreV1Api, KubeConfig, RequestContext, HttpMethod } from '@kubernetes/client-node';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSeedSimulator } from '@/sim/kube/testing';
import { generateTls } from '@/sim/kube/tls';
import type { KubeSimulator } from '@/sim/kube/simulator';
import { until } from '../testing/sim-harness';
import { contextKubeConfig, isSharedDispatcher, PooledKubeConfig, PROTOCOL_RETRY_MS, serverProtocol } from './calls';
import { Informer } from './informer';

/** A PooledKubeConfig with one context: the server at `url`, trusted through `caPem`. */
function pooledFor(url: string, caPem: string): PooledKubeConfig {
  const kc = new PooledKubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: url, caData: Buffer.from(caPem).toString('base64') }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  });
  return kc;
}

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
    const informer = new Informer({
      kc,
      path: '/apis/cluster.x-k8s.io/v1beta2/machinepools',
      kind: 'mp',
      backoffMs: [50],
    });
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

  it('carries concurrent watches and calls to an API server over one HTTP/2 connection', async () => {
    const server = sim.cluster('mgmt-weu');
    const kc = contextKubeConfig(base(), 'mgmt-weu');
    const before = server.connections.accepted;
    const h2Before = server.httpVersions.get('2.0') ?? 0;
    const watches = () => server.requestCounts.get('watch') ?? 0;
    const w0 = watches();
    // Five informers (a list, then a watch left open, each) and ten calls meanwhile.
    const watched = [
      ['/apis/cluster.x-k8s.io/v1beta2/machinepools', 'mp'],
      ['/apis/cluster.x-k8s.io/v1beta2/machines', 'machine'],
      ['/apis/cluster.x-k8s.io/v1beta2/clusters', 'cluster'],
      ['/api/v1/nodes', 'node'],
      ['/api/v1/events', 'event'],
    ] as const;
    const informers = watched.map(([path, kind]) => new Informer({ kc, path, kind, backoffMs: [50] }));
    for (const i of informers) i.start();
    const core = kc.makeApiClient(CoreV1Api);
    await Promise.all(Array.from({ length: 10 }, () => core.listNamespace()));
    await until('five watches open', () => (watches() >= w0 + 5 ? true : undefined));
    // A call still answers while the five watches stay open on the same connection.
    expect((await core.listNamespace()).items.length).toBeGreaterThan(0);
    // One connection, besides the handshake that asked the server for its protocol (which the server counts only
    // when it finished its side before the client hung up).
    expect(server.connections.accepted - before).toBeLessThanOrEqual(2);
    expect((server.httpVersions.get('2.0') ?? 0) - h2Before).toBeGreaterThanOrEqual(21);
    for (const i of informers) i.stop();
    await kc.closeConnections();
  });

  it('falls back to HTTP/1.1 where the server has no HTTP/2, one request a connection (none waits behind a watch)', async () => {
    const tlsMaterial = await generateTls();
    let accepted = 0;
    const open = new Set<ServerResponse>();
    const h1 = https.createServer({ cert: tlsMaterial.certPem, key: tlsMaterial.keyPem }, (req, res) => {
      if (req.url?.includes('watch=true')) {
        // A watch: headers, then nothing until the client goes away.
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.flushHeaders();
        open.add(res);
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"kind":"NamespaceList","items":[]}');
    });
    h1.on('secureConnection', () => accepted++);
    await new Promise<void>((r) => h1.listen(0, '127.0.0.1', r));
    const url = `https://127.0.0.1:${(h1.address() as AddressInfo).port}`;
    const kc = pooledFor(url, tlsMaterial.caPem);
    const agent = await kc.agent();
    try {
      const watch = await request(`${url}/api/v1/nodes?watch=true`, { dispatcher: agent });
      expect(watch.statusCode).toBe(200);
      // Pipelined on the watch's connection, this would wait for the watch to end: it answers at once instead.
      const list = await request(`${url}/api/v1/namespaces`, { dispatcher: agent, headersTimeout: 5_000 });
      expect(await list.body.json()).toEqual({ kind: 'NamespaceList', items: [] });
      // A connection each (and maybe the handshake that asked for the protocol: see above).
      expect(accepted).toBeGreaterThanOrEqual(2);
      expect(accepted).toBeLessThanOrEqual(3);
      expect(await serverProtocol(url, { ca: tlsMaterial.caPem })).toBe('http/1.1');
      watch.body.destroy();
    } finally {
      for (const res of open) res.destroy();
      await kc.closeConnections();
      h1.closeAllConnections();
      await new Promise((r) => h1.close(r));
    }
  });

  it('asks a server it could not reach for its protocol again every minute, keeping its Agent until it answers HTTP/2', async () => {
    const tlsMaterial = await generateTls();
    // A port with nothing listening yet.
    const free = net.createServer();
    await new Promise<void>((r) => free.listen(0, '127.0.0.1', r));
    const port = (free.address() as AddressInfo).port;
    await new Promise((r) => free.close(r));
    const url = `https://127.0.0.1:${port}`;
    expect(await serverProtocol(url, { ca: tlsMaterial.caPem })).toBeNull();
    const kc = pooledFor(url, tlsMaterial.caPem);
    const h2 = http2.createSecureServer(
      { cert: tlsMaterial.certPem, key: tlsMaterial.keyPem, allowHTTP1: true },
      (req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json', 'X-Version': req.httpVersion }).end('{}');
      },
    );
    const start = Date.now();
    vi.useFakeTimers({ toFake: ['Date'], now: start });
    try {
      const first = await kc.agent();
      expect(await kc.agent()).toBe(first);
      // Asked again while still unreachable: the same Agent, open, asked again a minute later.
      vi.setSystemTime(start + PROTOCOL_RETRY_MS);
      expect(await kc.agent()).toBe(first);
      expect(first.closed || first.destroyed).toBe(false);
      await new Promise<void>((r) => h2.listen(port, '127.0.0.1', r));
      vi.setSystemTime(start + 2 * PROTOCOL_RETRY_MS - 1);
      expect(await kc.agent()).toBe(first);
      vi.setSystemTime(start + 2 * PROTOCOL_RETRY_MS);
      const second = await kc.agent();
      expect(second).not.toBe(first);
      expect(first.closed || first.destroyed).toBe(true);
      expect(await kc.agent()).toBe(second);
      const res = await request(`${url}/version`, { dispatcher: second });
      await res.body.text();
      expect(res.headers['x-version']).toBe('2.0');
    } finally {
      vi.useRealTimers();
      await kc.closeConnections();
      await new Promise((r) => h2.close(r));
    }
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

  it("still verifies the API server against the kubeconfig's CA", async () => {
    const kc = new PooledKubeConfig();
    kc.loadFromFile(sim.kubeconfigPath);
    kc.setCurrentContext('mgmt-weu');
    const stranger = (await generateTls()).caPem;
    kc.clusters = kc.clusters.map((c) =>
      c.name === kc.getCurrentCluster()?.name
        ? { ...c, caData: Buffer.from(stranger).toString('base64'), caFile: undefined }
        : c,
    );
    const err = await kc
      .makeApiClient(CoreV1Api)
      .listNamespace()
      .then(
        () => null,
        (e: unknown) => e as Error & { cause?: { code?: string } },
      );
    expect(err).not.toBeNull();
    expect(String(err?.cause?.code ?? err?.message)).toMatch(/CERT|certificate|self.signed|verify/i);
    await kc.closeConnections();
  });
});
