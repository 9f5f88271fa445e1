import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiError } from '@/lib/api-types';
import { PEER_HEADER } from './peer';
import { screenHttpServers, screenRequest } from './request-screen';

/** An HTTP server standing in for Next's: it answers 200 "next" to whatever reaches it, noting its peer header. */
let server: http.Server;
let port = 0;
const peers: (string | string[] | undefined)[] = [];

/** A raw request (Node's client sends the path exactly as given, malformed escapes and TRACE included). */
function send(
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  screenHttpServers();
  screenHttpServers();
  server = http.createServer((req, res) => {
    peers.push(req.headers[PEER_HEADER]);
    res.end('next');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('requests Next.js would fail on, answered in front of it', () => {
  it.each(['/api/pools/%zz/x/y', '/api/pools/mgmt-weu/default/%E0%A4%A/timeline', '/api/%C3%28'])(
    'an API path with malformed percent-encoding (%s): the JSON 400',
    async (path) => {
      const res = await send('GET', `${path}?range=1h`);
      expect([res.status, res.headers['content-type']]).toEqual([400, 'application/json']);
      expect(JSON.parse(res.body)).toEqual({
        error: {
          code: 'invalid-path',
          message: `The path ${path} has malformed percent-encoding: each % must start a %XX escape, and the escapes must spell UTF-8.`,
        },
      } satisfies ApiError);
    },
  );

  it('a page path with malformed percent-encoding: a readable 400 page that echoes nothing of the request', async () => {
    const res = await send('GET', '/pools/a/%E0%A4%A/%3Cscript%3E%zz');
    expect([res.status, res.headers['content-type']]).toEqual([400, 'text/html; charset=utf-8']);
    expect(res.body).toContain('<h1 style="font-size: 1.25rem">This address cannot be read</h1>');
    expect(res.body).toContain('<a href="/">Back to all pools</a>');
    expect(res.body).not.toMatch(/script|%zz/i);
  });

  it('TRACE: 405 with Allow, JSON under /api, a page elsewhere', async () => {
    const api = await send('TRACE', '/api/pools');
    expect([api.status, api.headers.allow]).toEqual([405, 'GET, HEAD, OPTIONS']);
    expect(JSON.parse(api.body)).toEqual({
      error: { code: 'method-not-allowed', message: 'TRACE is not served at /api/pools; it answers GET.' },
    });
    const resync = await send('TRACE', '/api/pools/mgmt-weu/default/pool0/resync');
    expect([resync.status, resync.headers.allow]).toEqual([405, 'GET, POST, HEAD, OPTIONS']);
    expect((JSON.parse(resync.body) as ApiError).error.message).toBe(
      'TRACE is not served at /api/pools/mgmt-weu/default/pool0/resync; it answers GET and POST.',
    );
    const page = await send('TRACE', '/pools/mgmt-weu/default/pool0');
    expect([page.status, page.headers.allow, page.headers['content-type']]).toEqual([
      405,
      'GET, HEAD',
      'text/html; charset=utf-8',
    ]);
  });

  it('a __proto__ query parameter under /api, even escaped: named as unknown (Next drops it before any route could)', async () => {
    for (const query of ['__proto__=x', 'q=a&%5F%5Fproto%5F%5F=x']) {
      const res = await send('GET', `/api/pools?${query}`);
      expect(res.status, query).toBe(400);
      expect(JSON.parse(res.body), query).toEqual({
        error: { code: 'invalid-query', message: 'unknown query parameter "__proto__"' },
      });
    }
  });

  it("lets every other request through to the server's own listener", async () => {
    for (const [method, path] of [
      ['GET', '/'],
      ['GET', '/pools/mgmt%2Fweu/default/p%C3%A9?range=1h'],
      ['POST', '/api/pools/a/b/c/resync'],
      ['GET', '/api/pools?q=%zz'],
      ['OPTIONS', '/api/pools'],
      ['GET', '/?__proto__=x'],
      ['HEAD', '/api/pools'],
    ]) {
      expect(screenRequest(method as string, path as string), `${method} ${path}`).toBeNull();
      expect((await send(method as string, path as string)).status, `${method} ${path}`).toBe(200);
    }
  });
});

describe('the peer address', () => {
  it("is the socket's, whatever the client claims, for limits by client", async () => {
    peers.length = 0;
    await send('GET', '/api/pools', { [PEER_HEADER]: '203.0.113.9', 'x-forwarded-for': '203.0.113.9' });
    await send('GET', '/pools/peer/check/once');
    expect(peers).toEqual(['127.0.0.1', '127.0.0.1']);
  });
});
