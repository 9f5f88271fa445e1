import 'server-only';
// Requests that fail inside Next.js before any code of ours runs, answered in front of it, at Node's HTTP server:
// - a path whose percent-encoding is malformed: Next's router throws decoding it and answers a bare-text 500;
// - TRACE: Next wraps every request in a WHATWG Request (for proxy.ts and route handlers alike), whose constructor
//   throws on a method the Fetch standard forbids, so Next answers a bare-text 500 there too;
// - a `__proto__` query parameter: Next's query parsing (proxy.ts's URL included) drops it, so no strict schema can
//   name it as unknown.
// proxy.ts cannot help with the last two, and would make Next buffer every request body it runs for.
// The same front door records each request's peer address for limits by client (./peer), and sends an API answer's
// own compression as Content-Encoding (ENCODING_HEADER): Next drops that header from what a route answers. It also
// sends a page rendered within the last moment again rather than render it anew (./page-cache).

import http from 'node:http';
import type { ApiError } from '@/lib/api-types';
import { log } from '../log';
import { PageCache } from './page-cache';
import { PEER_HEADER } from './peer';

export interface Refusal {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const isApi = (pathname: string) => pathname === '/api' || pathname.startsWith('/api/');

/** The methods an API path serves besides HEAD and OPTIONS, as its route file exports them (resync alone takes POST). */
const served = (pathname: string): string[] =>
  /^\/api\/pools\/[^/]+\/[^/]+\/[^/]+\/resync\/?$/.test(pathname) ? ['GET', 'POST'] : ['GET'];

function decodable(pathname: string): boolean {
  try {
    decodeURIComponent(pathname);
    return true;
  } catch {
    return false;
  }
}

const json = (status: number, code: string, message: string, headers: Record<string, string> = {}): Refusal => ({
  status,
  headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
  body: JSON.stringify({ error: { code, message } } satisfies ApiError),
});

/** A page of its own (the request never reaches the app's layout), saying what was wrong; nothing of the request echoed. */
function page(status: number, title: string, text: string, headers: Record<string, string> = {}): Refusal {
  const body = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title} · poolscope</title></head>
<body style="font-family: system-ui, sans-serif; line-height: 1.5; max-width: 40rem; margin: 4rem auto; padding: 0 1.5rem">
<main><h1 style="font-size: 1.25rem">${title}</h1><p>${text}</p><p><a href="/">Back to all pools</a></p></main>
</body></html>
`;
  return {
    status,
    headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...headers },
    body,
  };
}

/** The answer to a request Next.js would fail on, or null to let it through: its method and target as sent. */
export function screenRequest(method: string, target: string): Refusal | null {
  const q = target.indexOf('?');
  const pathname = q < 0 ? target : target.slice(0, q);
  const api = isApi(pathname);
  if (method === 'TRACE') {
    if (!api)
      return page(405, 'Method not allowed', 'poolscope&#39;s pages answer GET and HEAD only.', { allow: 'GET, HEAD' });
    const methods = served(pathname);
    return json(405, 'method-not-allowed', `TRACE is not served at ${pathname}; it answers ${methods.join(' and ')}.`, {
      allow: [...methods, 'HEAD', 'OPTIONS'].join(', '),
    });
  }
  if (!decodable(pathname)) {
    return api
      ? json(
          400,
          'invalid-path',
          `The path ${pathname} has malformed percent-encoding: each % must start a %XX escape, and the escapes must spell UTF-8.`,
        )
      : page(
          400,
          'This address cannot be read',
          'Its path has malformed percent-encoding (a % that does not start a %XX escape, or escapes that do not spell UTF-8), so it names no page. Check the link you followed.',
        );
  }
  if (api && q >= 0 && new URLSearchParams(target.slice(q + 1)).has('__proto__')) {
    return json(400, 'invalid-query', 'unknown query parameter "__proto__"');
  }
  return null;
}

/** The header an API route names its body's encoding in; the front door sends it as Content-Encoding. */
export const ENCODING_HEADER = 'x-poolscope-content-encoding';

/** Makes `res` send ENCODING_HEADER, when it is set, as Content-Encoding. */
function passEncoding(res: http.ServerResponse): void {
  const setHeader = res.setHeader;
  res.setHeader = function setHeaderPassingEncoding(this: http.ServerResponse, name, value) {
    const real = typeof name === 'string' && name.toLowerCase() === ENCODING_HEADER ? 'content-encoding' : name;
    return setHeader.call(this, real, value);
  } as typeof res.setHeader;
}

const INSTALLED = Symbol.for('poolscope.requestScreen');
const PAGES = Symbol.for('poolscope.pageCache');

/** The process's page cache (one, kept on globalThis like the other process-wide state). */
export function pages(): PageCache {
  const g = globalThis as { [PAGES]?: PageCache };
  g[PAGES] ??= new PageCache();
  return g[PAGES];
}

/**
 * Puts screenRequest in front of every HTTP server of this process (Next's own, which no code of ours creates):
 * its `request` event is answered here when screenRequest refuses it, and reaches Next's listener otherwise, with
 * PEER_HEADER set to the socket's peer address (a value a client sent is replaced).
 */
export function screenHttpServers(): void {
  const proto = http.Server.prototype as http.Server & { [INSTALLED]?: true };
  if (proto[INSTALLED]) return;
  proto[INSTALLED] = true;
  const emit = proto.emit as (this: http.Server, event: string | symbol, ...args: unknown[]) => boolean;
  proto.emit = function screened(this: http.Server, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'request') {
      const [req, res] = args as [http.IncomingMessage, http.ServerResponse];
      req.headers[PEER_HEADER] = req.socket?.remoteAddress ?? 'unknown';
      const refusal = screenRequest(req.method ?? 'GET', req.url ?? '/');
      if (refusal) {
        log().info(
          { method: req.method, path: (req.url ?? '/').split('?')[0], status: refusal.status, screened: true },
          'request',
        );
        res.writeHead(refusal.status, refusal.headers).end(req.method === 'HEAD' ? undefined : refusal.body);
        return true;
      }
      if (isApi((req.url ?? '/').split('?', 1)[0] as string)) passEncoding(res);
      const key = pages().keyOf(req);
      if (key !== null) {
        if (pages().replay(key, res)) return true;
        pages().capture(key, res);
      }
    }
    return emit.call(this, event, ...args);
  } as typeof proto.emit;
}
