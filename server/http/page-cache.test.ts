// The front door's page cache, in front of an HTTP server standing in for Next's: a page is rendered once for the
// readers of one address and encoding within PAGE_CACHE_MS, sent again byte for byte with its headers, and never
// shared where its answer could differ (client navigations, cookies, other methods, the API, errors).

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_CACHE_MS, PageCache } from './page-cache';
import { screenHttpServers } from './request-screen';

let server: http.Server;
let port = 0;
let renders = 0;

function send(
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  screenHttpServers();
  // Renders a page the way Next sends one: headers set one by one, the body in chunks, gzipped when accepted.
  server = http.createServer((req, res) => {
    renders++;
    const status = req.url?.startsWith('/missing') ? 404 : 200;
    res.statusCode = status;
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.setHeader('x-render', String(renders));
    if (req.url?.startsWith('/cookie')) res.setHeader('set-cookie', 'a=b');
    const html = `<html><body>render ${renders} of ${req.url}</body></html>`;
    const accept = req.headers['accept-encoding'] ?? '';
    // Where the server chooses another encoding than the one the key foresees.
    if (req.url === '/pools/deflate') {
      res.setHeader('content-encoding', 'deflate');
      res.end(zlib.deflateSync(`render ${renders}`));
      return;
    }
    if (/gzip(?!;q=0\b)|^\*$/.test(accept)) {
      res.setHeader('content-encoding', 'gzip');
      const z = zlib.gzipSync(html);
      res.write(z.subarray(0, 10));
      res.end(z.subarray(10));
    } else {
      res.write(html.slice(0, 5));
      res.end(html.slice(5));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('the page cache', () => {
  it('renders a page once for its readers within the moment, per encoding, and sends it again whole', async () => {
    const before = renders;
    const first = await send('/pools/a/b/c?range=1h', { 'accept-encoding': 'gzip, br' });
    const again = await send('/pools/a/b/c?range=1h', { 'accept-encoding': 'gzip, deflate' });
    expect(renders - before).toBe(1);
    expect(again.body.equals(first.body)).toBe(true);
    expect(again.headers['content-encoding']).toBe('gzip');
    expect(again.headers['x-render']).toBe(first.headers['x-render']);
    expect(zlib.gunzipSync(again.body).toString()).toContain('/pools/a/b/c?range=1h');
    const plain = await send('/pools/a/b/c?range=1h');
    expect(renders - before).toBe(2);
    expect(plain.body.toString()).toContain('render');
    expect((await send('/pools/a/b/c?range=6h')).headers['x-render']).not.toBe(first.headers['x-render']);
  });

  it('keeps a page only under the encoding it was sent in, and never sends one a client refuses', async () => {
    const before = renders;
    const star = await send('/pools/star', { 'accept-encoding': '*' });
    expect(star.headers['content-encoding']).toBe('gzip');
    const refused = await send('/pools/star', { 'accept-encoding': 'gzip;q=0' });
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect(refused.body.toString()).toContain('/pools/star');
    expect(renders - before).toBe(2);
    const gz = await send('/pools/star', { 'accept-encoding': 'gzip' });
    expect(renders - before).toBe(2);
    expect(gz.body.equals(star.body)).toBe(true);
    await send('/pools/deflate', { 'accept-encoding': 'gzip, deflate' });
    await send('/pools/deflate', { 'accept-encoding': 'gzip, deflate' });
    expect(renders - before).toBe(4);
  });

  it.each<[string, string, Record<string, string>, string?]>([
    ['a client navigation (RSC)', '/pools/x', { rsc: '1' }],
    ['a router prefetch', '/pools/x', { 'next-router-prefetch': '1' }],
    ['an _rsc request', '/pools/x?_rsc=abc', {}],
    ['a request with a cookie', '/pools/x', { cookie: 'session=1' }],
    ['a request with credentials', '/pools/x', { authorization: 'Bearer t' }],
    ['an API read', '/api/pools', {}],
    ['a HEAD', '/pools/x', {}, 'HEAD'],
    ['an error page', '/missing', {}],
    ['a page that sets a cookie', '/cookie', {}],
  ])('renders %s every time', async (_what, path, headers, method) => {
    const before = renders;
    await send(path, headers, method);
    await send(path, headers, method);
    expect(renders - before).toBe(2);
  });
});

describe('PageCache alone', () => {
  it('forgets a page once PAGE_CACHE_MS has passed', async () => {
    let now = 0;
    const cache = new PageCache(() => now);
    const key = 'identity /p';
    const res = () => {
      const out = { status: 0, body: '' };
      const fake = {
        writeHead(status: number) {
          out.status = status;
          return fake;
        },
        end(body: Buffer) {
          out.body = body.toString();
          return fake;
        },
      };
      return { out, fake: fake as unknown as http.ServerResponse };
    };
    // A captured answer, as a finished response leaves it.
    const r = new http.ServerResponse(new http.IncomingMessage(null as never));
    cache.capture(key, r);
    r.statusCode = 200;
    r.write('hello ');
    r.end('world');
    r.emit('finish');
    const hit = res();
    expect(cache.replay(key, hit.fake)).toBe(true);
    expect(hit.out).toEqual({ status: 200, body: 'hello world' });
    now = PAGE_CACHE_MS;
    expect(cache.replay(key, res().fake)).toBe(false);
  });
});
