// The resync's edges, without a cluster: what an unauthenticated caller can make poolscope spend (a POST is judged
// on its headers — size declared, identity, the user's limit — before its body is read, and the body is read to
// 64 KiB at most; TokenReviews of new tokens are limited per client and overall before the API server is asked),
// and a pool poolscope does not know.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpError } from '../http/route';
import { PEER_HEADER } from '../http/peer';
import { Access, type IdentityResult } from './identity';
import { ResyncService, type ResyncDeps } from './resync';
import { refusal } from '../testing/refusal';

const REF = { context: 'mgmt', namespace: 'default', name: 'pool0' };
const HEADERS = { 'content-type': 'application/json', 'x-poolscope-request': '1', 'sec-fetch-site': 'same-origin' };

/** A body that counts the bytes it was asked for: `total` bytes in 64 KiB chunks. */
function countingBody(total: number): { body: ReadableStream<Uint8Array>; pulled: () => number } {
  let pulled = 0;
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled >= total) return controller.close();
        pulled += chunk.length;
        controller.enqueue(chunk);
      },
    },
    { highWaterMark: 0 },
  );
  return { body, pulled: () => pulled };
}

const post = (body: ReadableStream<Uint8Array> | string, headers: Record<string, string> = {}) =>
  new Request('http://localhost:3000/api/pools/mgmt/default/pool0/resync', {
    method: 'POST',
    body,
    headers: { ...HEADERS, ...headers },
    duplex: 'half',
  } as RequestInit);

/** A kubeconfig for a cluster nothing here reaches: these requests are refused before any call. */
function clusterlessConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:9', skipTLSVerify: false }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'mgmt', cluster: 'c', user: 'u' }],
    currentContext: 'mgmt',
  });
  return kc;
}

/** A resync service whose identity step is `identify` and whose store knows no pool (it never reaches a cluster here). */
function service(identify: () => Promise<IdentityResult>, calls: string[]): ResyncService {
  const access = {
    identify: async () => {
      calls.push('identify');
      return identify();
    },
  } as unknown as Access;
  const store = { currentPool: async () => null };
  return new ResyncService({
    contexts: ['mgmt'],
    kubeconfigFor: () => clusterlessConfig(),
    access,
    store,
    readOnly: false,
    timeoutMs: 1000,
    waitSeconds: 0,
  } as unknown as ResyncDeps);
}

describe('resync POST limits', () => {
  const operator = async (): Promise<IdentityResult> => ({
    identity: { user: 'operator', groups: [], via: 'bearer-token' },
    problem: null,
  });

  it('refuses a declared length over 64 KiB before identifying the caller or reading a byte', async () => {
    const calls: string[] = [];
    const { body, pulled } = countingBody(200 * 2 ** 20);
    const r = await refusal(service(operator, calls).run(REF, post(body, { 'content-length': String(200 * 2 ** 20) })));
    expect(r).toMatchObject({ status: 413, code: 'body-too-large' });
    expect(calls).toEqual([]);
    expect(pulled()).toBe(0);
  });

  it('answers an anonymous caller before reading the body', async () => {
    const calls: string[] = [];
    const { body, pulled } = countingBody(200 * 2 ** 20);
    const r = await refusal(
      service(async () => ({ identity: null, problem: 'Not signed in.' }), calls).run(REF, post(body)),
    );
    expect(r).toMatchObject({ status: 401, code: 'not-signed-in' });
    expect(calls).toEqual(['identify']);
    expect(pulled()).toBe(0);
  });

  it('stops reading a body sent without a length at 64 KiB', async () => {
    const { body, pulled } = countingBody(200 * 2 ** 20);
    const r = await refusal(service(operator, []).run(REF, post(body)));
    expect(r).toMatchObject({ status: 413, code: 'body-too-large' });
    expect(pulled()).toBeLessThanOrEqual(2 * 64 * 1024);
  });

  it('says what is wrong with a length that is not a number', async () => {
    expect(
      await refusal(service(operator, []).run(REF, post('{"mode":"reconcile"}', { 'content-length': 'lots' }))),
    ).toMatchObject({ status: 400, code: 'invalid-body' });
  });
});

describe('resync GET', () => {
  it("answers 404 for a pool poolscope does not know, as the pool's own page does", async () => {
    const calls: string[] = [];
    const r = await refusal(service(async () => ({ identity: null, problem: 'x' }), calls).status(REF, new Headers()));
    expect(r).toMatchObject({ status: 404, code: 'pool-not-found' });
    expect(calls).toEqual([]);
  });
});

describe('TokenReviews of new bearer tokens', () => {
  let server: http.Server;
  let reviews = 0;
  let kc: KubeConfig;
  beforeAll(async () => {
    // An API server that rejects every token, counting the reviews it was asked for.
    server = http.createServer((req, res) => {
      if (req.url?.startsWith('/apis/authentication.k8s.io/v1/tokenreviews')) reviews++;
      req.resume();
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            apiVersion: 'authentication.k8s.io/v1',
            kind: 'TokenReview',
            status: { authenticated: false },
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        { name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true },
      ],
      users: [{ name: 'u', token: 'poolscope' }],
      contexts: [{ name: 'mgmt', cluster: 'c', user: 'u' }],
      currentContext: 'mgmt',
    });
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const attempt = (access: Access, token: string, peer: string) =>
    access.identify(new Headers({ authorization: `Bearer ${token}`, [PEER_HEADER]: peer }), 'mgmt').then(
      (r) => r.problem ?? 'ok',
      (e: unknown) => (e instanceof HttpError ? `${e.status}` : String(e)),
    );

  it("asks the API server for at most the client's share, then answers 429", async () => {
    reviews = 0;
    const access = new Access({
      kubeconfigFor: () => kc,
      timeoutMs: 2000,
      reviewsPerClientPerMinute: 5,
      reviewsPerMinute: 100,
    });
    const answers = [];
    for (let i = 0; i < 40; i++) answers.push(await attempt(access, `bogus-${i}`, '203.0.113.7'));
    expect(reviews).toBe(5);
    expect(answers.filter((a) => a === '429')).toHaveLength(35);
    // Another client still gets its own share; the same token again is answered from the cache.
    expect(await attempt(access, 'bogus-other', '198.51.100.1')).toMatch(/did not accept the bearer token/);
    expect(await attempt(access, 'bogus-0', '203.0.113.7')).toMatch(/did not accept the bearer token/);
    expect(reviews).toBe(6);
  });

  it('bounds the reviews of every client together', async () => {
    reviews = 0;
    const access = new Access({
      kubeconfigFor: () => kc,
      timeoutMs: 2000,
      reviewsPerClientPerMinute: 5,
      reviewsPerMinute: 12,
    });
    for (let i = 0; i < 60; i++) await attempt(access, `spread-${i}`, `203.0.113.${i}`);
    expect(reviews).toBe(12);
  });
});
