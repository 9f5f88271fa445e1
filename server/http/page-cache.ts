import 'server-only';
// Pages rendered once and sent again, for a moment: when a pool link lands in an incident channel, dozens open the
// same page within seconds, and each render costs tens of milliseconds of the one thread the API and the collector
// share. The front door (./request-screen) keeps a page's whole answer (status, headers, body as sent, compressed)
// for PAGE_CACHE_MS and sends it to the next readers of the same address who accept the same encoding. A page read
// that old is current enough: once loaded, the page opens its change stream and reads what changed since.
// Only plain document loads are kept: GET, no Next router headers (client navigations answer with other bodies),
// no `_rsc`, no Cookie or Authorization (no page depends on them today; a page that did must not be shared), and
// only 200 answers that set no cookie.

import type http from 'node:http';
import { acceptsEncoding } from './accept-encoding';

/** How long a rendered page is sent again. */
export const PAGE_CACHE_MS = 2_000;
/** Pages kept at most, their bytes together, and the largest kept (larger ones are rendered for each reader). */
const MAX_PAGES = 200;
const MAX_BYTES = 32 * 1024 * 1024;
const MAX_PAGE_BYTES = 4 * 1024 * 1024;

/** Request headers with which Next answers something other than the document (or that a page might read). */
const NOT_SHARED = [
  'rsc',
  'next-router-state-tree',
  'next-router-prefetch',
  'next-router-segment-prefetch',
  'next-action',
  'cookie',
  'authorization',
];

/** Response headers that belong to one connection, not to the page. */
const PER_CONNECTION = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

interface Page {
  status: number;
  headers: http.OutgoingHttpHeaders;
  body: Buffer;
  expires: number;
}

/**
 * The encoding a request's page is kept under: gzip or deflate when the client accepts it (q > 0), as Next's
 * compression offers them, else identity. A page is kept only when Next chose that same encoding (see capture).
 */
function encodingOf(acceptEncoding: string | undefined): string {
  const accepted = acceptsEncoding(acceptEncoding);
  return accepted('gzip') ? 'gzip' : accepted('deflate') ? 'deflate' : 'identity';
}

export class PageCache {
  /** In the order they were kept, which is the order they expire in. */
  private readonly pages = new Map<string, Page>();
  private bytes = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** The key a request's page is kept under, or null for a request whose answer must not be shared. */
  keyOf(req: http.IncomingMessage): string | null {
    const url = req.url ?? '/';
    if (req.method !== 'GET' || url.startsWith('/api') || url.startsWith('/_next')) return null;
    if (/[?&]_rsc(=|&|$)/.test(url) || NOT_SHARED.some((h) => req.headers[h] !== undefined)) return null;
    return `${encodingOf(req.headers['accept-encoding'])} ${url}`;
  }

  /** Sends the kept page for `key`, if one is fresh; true when it did. */
  replay(key: string, res: http.ServerResponse): boolean {
    const page = this.pages.get(key);
    if (!page || page.expires <= this.now()) {
      if (page) this.forget(key, page);
      return false;
    }
    res.writeHead(page.status, page.headers).end(page.body);
    return true;
  }

  /** Keeps what `res` sends, once it is sent whole, under `key` (if it may be shared). */
  capture(key: string, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const keep = (chunk: unknown, encoding: unknown) => {
      if (bytes > MAX_PAGE_BYTES || chunk === undefined || chunk === null || typeof chunk === 'function') return;
      const b = Buffer.isBuffer(chunk)
        ? Buffer.from(chunk)
        : chunk instanceof Uint8Array
          ? Buffer.from(chunk)
          : Buffer.from(String(chunk), typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
      bytes += b.length;
      chunks.push(b);
    };
    const write = res.write;
    const end = res.end;
    const writeHead = res.writeHead;
    // Headers handed to writeHead alone are not kept where getHeaders() finds them.
    let given: http.OutgoingHttpHeaders = {};
    res.writeHead = function capturingWriteHead(this: http.ServerResponse, ...args: unknown[]) {
      const h = args.find((a) => typeof a === 'object' && a !== null && !Array.isArray(a));
      if (h) given = { ...given, ...Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v])) };
      return (writeHead as (...a: unknown[]) => http.ServerResponse).apply(this, args);
    } as typeof res.writeHead;
    res.write = function capturingWrite(this: http.ServerResponse, chunk: unknown, ...rest: unknown[]) {
      keep(chunk, rest[0]);
      return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof res.write;
    res.end = function capturingEnd(this: http.ServerResponse, chunk?: unknown, ...rest: unknown[]) {
      keep(chunk, rest[0]);
      return (end as (...a: unknown[]) => http.ServerResponse).call(this, chunk, ...rest);
    } as typeof res.end;
    res.once('finish', () => {
      const headers: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries({ ...given, ...res.getHeaders() }))
        if (!PER_CONNECTION.has(name) && value !== undefined) headers[name] = value;
      // Kept only as the key says: Next chooses the encoding by its own rules, which a key cannot always foresee.
      const encoding = String(headers['content-encoding'] ?? 'identity');
      if (res.statusCode !== 200 || bytes > MAX_PAGE_BYTES || headers['set-cookie'] !== undefined) return;
      if (key.slice(0, key.indexOf(' ')) !== encoding) return;
      this.keep(key, { status: 200, headers, body: Buffer.concat(chunks), expires: this.now() + PAGE_CACHE_MS });
    });
  }

  private keep(key: string, page: Page): void {
    const old = this.pages.get(key);
    if (old) this.forget(key, old);
    this.pages.set(key, page);
    this.bytes += page.body.length;
    const now = this.now();
    for (const [k, p] of this.pages) {
      if (this.pages.size <= MAX_PAGES && this.bytes <= MAX_BYTES && p.expires > now) break;
      this.forget(k, p);
    }
  }

  private forget(key: string, page: Page): void {
    this.pages.delete(key);
    this.bytes -= page.body.length;
  }
}
