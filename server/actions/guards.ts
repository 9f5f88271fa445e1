import 'server-only';
// What stands between a click and a write: cross-site request checks, rate limits, one resync per pool at a
// time, and idempotency keys so a double click (or a retried request) patches once.

import { HttpError } from '../http/route';

/** The header every write must carry; a cross-site form or image cannot set it without a CORS preflight. */
const WRITE_HEADER = 'x-poolscope-request';

/** Rejects cross-site and forged requests: Sec-Fetch-Site, Origin against Host, JSON body, custom header. */
export function checkSameOrigin(request: Request): void {
  const h = request.headers;
  const site = h.get('sec-fetch-site');
  if (site !== null && site !== 'same-origin' && site !== 'none') {
    throw new HttpError(403, 'cross-site', `Cross-site requests cannot change pools (Sec-Fetch-Site: ${site}).`);
  }
  const origin = h.get('origin');
  // Without a Host header (HTTP/1.0, or a Request built in-process), the URL the server was reached at.
  const host = h.get('host') ?? new URL(request.url).host;
  if (origin !== null && !sameHost(origin, host)) {
    throw new HttpError(403, 'cross-site', `Requests from ${origin} cannot change pools on ${host}.`);
  }
  if (h.get(WRITE_HEADER) === null) {
    throw new HttpError(
      403,
      'missing-request-header',
      `Writes must carry the ${WRITE_HEADER} header (the dashboard sends it; scripts must too).`,
    );
  }
  const type = (h.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json')
    throw new HttpError(
      415,
      'unsupported-media-type',
      'The request body must be JSON (Content-Type: application/json).',
    );
}

/**
 * Whether an Origin names the host this request reached: its Host header, which a browser sets from the URL it
 * opens and a script cannot change for it (X-Forwarded-Host, by contrast, any client may send, so it is never
 * read). A reverse proxy in front must keep Host (Kubernetes ingress controllers do by default). Default ports
 * compare equal (`https://h` and `h:443`).
 */
function sameHost(origin: string, host: string): boolean {
  try {
    const o = new URL(origin);
    return o.host === new URL(`${o.protocol}//${host}`).host;
  } catch {
    return false;
  }
}

/** Allows `limit` events per `windowMs` per key (sliding window); says how long to wait when over. */
export class RateLimiter {
  private readonly hits = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records a hit; returns 0 when allowed, else the seconds until the next one would be. */
  take(key: string): number {
    const t = this.now();
    const recent = (this.hits.get(key) ?? []).filter((x) => x > t - this.windowMs);
    if (recent.length >= this.limit) {
      this.hits.set(key, recent);
      return Math.max(1, Math.ceil(((recent[0] as number) + this.windowMs - t) / 1000));
    }
    recent.push(t);
    this.hits.set(key, recent);
    if (this.hits.size > 10_000) {
      for (const [k, v] of this.hits) if (!v.some((x) => x > t - this.windowMs)) this.hits.delete(k);
    }
    return 0;
  }
}

/** Results by Idempotency-Key (per user), kept for ten minutes; a request in flight is shared, not repeated. */
export class IdempotencyCache<T> {
  private readonly entries = new Map<string, { fingerprint: string; result: Promise<T>; until: number }>();

  constructor(
    private readonly ttlMs = 600_000,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Runs `fn` once per (user, key): a repeat with the same request gets the same promise; a repeat with a
   * different request is an error (the key was reused for something else).
   */
  run(user: string, key: string, fingerprint: string, fn: () => Promise<T>): { result: Promise<T>; replayed: boolean } {
    const t = this.now();
    for (const [k, e] of this.entries) if (e.until <= t) this.entries.delete(k);
    const id = `${user}\0${key}`;
    const hit = this.entries.get(id);
    if (hit) {
      if (hit.fingerprint !== fingerprint) {
        throw new HttpError(
          422,
          'idempotency-key-reused',
          `Idempotency-Key "${key}" was already used for a different request (${hit.fingerprint}).`,
        );
      }
      return { result: hit.result, replayed: true };
    }
    const result = fn();
    this.entries.set(id, { fingerprint, result, until: t + this.ttlMs });
    // A request that was refused or failed wrote nothing (partial writes are results, not errors): the same key
    // may be retried.
    result.catch(() => {
      this.entries.delete(id);
    });
    return { result, replayed: false };
  }
}

/** One resync per pool at a time. */
export class PoolLocks<T> {
  private readonly held = new Map<string, T>();

  acquire(pool: string, holder: T): (() => void) | null {
    if (this.held.has(pool)) return null;
    this.held.set(pool, holder);
    return () => {
      this.held.delete(pool);
    };
  }

  holder(pool: string): T | null {
    return this.held.get(pool) ?? null;
  }
}
