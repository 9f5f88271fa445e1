// The demo's auth proxy signs in whoever reaches it as `operator`, so only this machine may reach it: it listens
// on 127.0.0.1, not on every interface.

import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthProxy } from './demo-auth-proxy.mjs';

/** This machine's addresses other than loopback (link-local IPv6 left out: it needs a zone to be dialled). */
const outside = Object.values(os.networkInterfaces())
  .flatMap((list) => list ?? [])
  .filter((a) => !a.internal && !(a.family === 'IPv6' && a.address.startsWith('fe80:')))
  .map((a) => a.address);

let upstream: Server;
let proxy: Server;
let port: number;

beforeAll(async () => {
  // Stands in for the dashboard: answers with the identity the proxy named.
  upstream = http.createServer((req, res) => res.end(String(req.headers['x-forwarded-user'])));
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const target = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  proxy = await startAuthProxy({
    port: 0,
    target,
    user: 'operator',
    groups: ['pool-operators'],
    secret: 's'.repeat(64),
  });
  port = (proxy.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((r) => proxy?.close(r));
  await new Promise((r) => upstream?.close(r));
});

/** Dials host:port: 'connected', or the error code (ECONNREFUSED, …), or 'timeout'. */
function dial(host: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (result: string) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(2000, () => done('timeout'));
    socket.once('connect', () => done('connected'));
    socket.once('error', (e: NodeJS.ErrnoException) => done(e.code ?? e.message));
  });
}

describe('the demo auth proxy', () => {
  it('is bound to the IPv4 loopback address, and signs in as operator there whatever the client claims', async () => {
    expect((proxy.address() as AddressInfo).address).toBe('127.0.0.1');
    const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { 'X-Forwarded-User': 'mallory' } });
    expect(await res.text()).toBe('operator');
  });

  it.skipIf(outside.length === 0)(
    `cannot be reached on this machine's other addresses (${outside.join(', ') || 'none here'})`,
    async () => {
      for (const address of outside) expect(await dial(address), address).not.toBe('connected');
    },
  );
});
