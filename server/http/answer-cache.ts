import 'server-only';
// Shared answers: a read is computed once per version of what it reads and handed to every reader of it, as the
// value (for a page's server rendering) and as JSON bytes with a strong ETag and compressed copies (for the API).
// A version is a string the caller builds from what the answer depends on (a pool's stored sequence, the changes
// heard for it); an answer that also states "now" gets a short maximum age. Its compressed copies are made once too
// (in libuv's thread pool). Next drops a route's own Content-Encoding header, so the route names the encoding in
// ENCODING_HEADER, which the front door (./request-screen) sends as Content-Encoding; `no-transform` keeps Next
// from compressing the body a second time. Readers that arrive while the answer is
// being computed wait for that one computation (single flight). Computations run through a gate: a few at a time,
// each for a bounded time, a bounded queue with a few places per client, and past that an immediate 503 with
// Retry-After (load shedding), so a crowd of distinct reads cannot pile up until every client times out.

import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { acceptsEncoding } from './accept-encoding';
import { ENCODING_HEADER } from './request-screen';
import { HttpError } from './route';

const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);

/** Bodies smaller than this are sent as they are: compressing them saves less than the headers it adds. */
const COMPRESS_MIN_BYTES = 1024;

export type Encoding = 'br' | 'gzip' | 'identity';

/** One computed answer: its value, and on first use its JSON bytes, ETag and compressed copies. */
export class Answer<T = unknown> {
  private bytes: Buffer | null = null;
  private tag: string | null = null;
  private readonly encoded = new Map<Encoding, Promise<Buffer>>();

  constructor(readonly value: T) {}

  get body(): Buffer {
    this.bytes ??= Buffer.from(JSON.stringify(this.value));
    return this.bytes;
  }

  /** A strong validator of the JSON bytes (quoted, as the header carries it). */
  get etag(): string {
    this.tag ??= `"${createHash('sha256').update(this.body).digest('base64url').slice(0, 27)}"`;
    return this.tag;
  }

  /** The body in `encoding`, compressed once (in libuv's thread pool, off the event loop) and kept. */
  encodedBody(encoding: Encoding): Promise<Buffer> {
    if (encoding === 'identity') return Promise.resolve(this.body);
    let p = this.encoded.get(encoding);
    if (!p) {
      p =
        encoding === 'br'
          ? brotli(this.body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } })
          : gzip(this.body, { level: 6 });
      this.encoded.set(encoding, p);
      p.catch(() => this.encoded.delete(encoding));
    }
    return p;
  }

  /** Roughly what the answer holds in memory: its bytes and compressed copies, and its value (about twice its JSON). */
  get weight(): number {
    return (this.bytes?.length ?? 0) * 3 + 4096;
  }
}

/** The encoding to send for an `Accept-Encoding` header: brotli, then gzip, when accepted with q > 0. */
export function chooseEncoding(acceptEncoding: string | null, size: number): Encoding {
  if (!acceptEncoding || size < COMPRESS_MIN_BYTES) return 'identity';
  const accepted = acceptsEncoding(acceptEncoding);
  if (accepted('br')) return 'br';
  if (accepted('gzip')) return 'gzip';
  return 'identity';
}

/** Whether an `If-None-Match` header names this ETag (weak comparison, as RFC 9110 asks for GET). */
export function matchesEtag(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const bare = (t: string) => t.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((t) => bare(t) === etag);
}

/**
 * The HTTP answer for `answer`: 304 when the client holds these bytes already, else the JSON, compressed when the
 * client accepts it. Clients may keep it but must ask again before reusing it (`no-cache`), which the ETag makes
 * cheap; `private`: shared caches keep nothing.
 */
export async function answerResponse(request: Request, answer: Answer): Promise<Response> {
  const headers: Record<string, string> = {
    etag: answer.etag,
    vary: 'Accept-Encoding',
    'cache-control': 'private, no-cache, no-transform',
  };
  if (matchesEtag(request.headers.get('if-none-match'), answer.etag))
    return new Response(null, { status: 304, headers });
  const encoding = chooseEncoding(request.headers.get('accept-encoding'), answer.body.length);
  const body = await answer.encodedBody(encoding);
  return new Response(new Uint8Array(body.buffer as ArrayBuffer, body.byteOffset, body.length), {
    status: 200,
    headers: {
      ...headers,
      'content-type': 'application/json',
      ...(encoding === 'identity' ? {} : { [ENCODING_HEADER]: encoding }),
    },
  });
}

/**
 * What the gate lets through: how many computations at once, and for how long each; how many may wait, for how
 * long, and how many of them one client's.
 */
export interface GateLimits {
  running: number;
  runMs: number;
  waiting: number;
  waitMs: number;
  perClient: number;
}

export type ShedReason = 'queue-full' | 'waited-too-long' | 'client-limit' | 'ran-too-long';

/** Seconds a shed client is asked to wait before it tries again. */
const RETRY_AFTER_SECONDS = 2;

export class Overloaded extends HttpError {
  constructor(why: string) {
    super(
      503,
      'overloaded',
      `poolscope is answering many other requests (${why}); try again in ${RETRY_AFTER_SECONDS} s.`,
      { 'retry-after': String(RETRY_AFTER_SECONDS) },
    );
  }
}

interface Waiter {
  client: string | undefined;
  start: () => void;
  timer: NodeJS.Timeout;
}

/**
 * At most `running` computations at a time, first come first served; a bounded queue behind them, of which one
 * client (its address) may hold `perClient` places; past any bound, Overloaded at once. A computation that runs
 * longer than `runMs` gives its place up (its reader gets Overloaded; the work itself cannot be stopped).
 */
export class Gate {
  private active = 0;
  private readonly queue: Waiter[] = [];
  private readonly waitingBy = new Map<string, number>();

  constructor(
    private readonly limits: GateLimits,
    private readonly onShed: (why: ShedReason) => void = () => {},
  ) {}

  get load(): { running: number; waiting: number } {
    return { running: this.active, waiting: this.queue.length };
  }

  async run<T>(work: () => Promise<T>, client?: string): Promise<T> {
    // A slot is handed from one computation to the next waiter, so a newcomer never overtakes the queue.
    if (this.active >= this.limits.running || this.queue.length > 0) await this.wait(client);
    else this.active++;
    try {
      return await this.deadline(work());
    } finally {
      const next = this.queue.shift();
      if (next) next.start();
      else this.active--;
    }
  }

  private deadline<T>(work: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.onShed('ran-too-long');
        reject(new Overloaded(`a read ran longer than ${this.limits.runMs / 1000} s`));
      }, this.limits.runMs);
    });
    work.catch(() => {}).finally(() => clearTimeout(timer));
    return Promise.race([work, late]);
  }

  private shed(why: ShedReason, message: string): Promise<never> {
    this.onShed(why);
    return Promise.reject(new Overloaded(message));
  }

  private wait(client: string | undefined): Promise<void> {
    if (this.queue.length >= this.limits.waiting)
      return this.shed('queue-full', `${this.queue.length} reads are queued`);
    const mine = client === undefined ? 0 : (this.waitingBy.get(client) ?? 0);
    if (client !== undefined && mine >= this.limits.perClient)
      return this.shed('client-limit', `${mine} of this client's reads are queued`);
    if (client !== undefined) this.waitingBy.set(client, mine + 1);
    const leave = () => {
      if (client === undefined) return;
      const n = (this.waitingBy.get(client) ?? 1) - 1;
      if (n > 0) this.waitingBy.set(client, n);
      else this.waitingBy.delete(client);
    };
    return new Promise((resolve, reject) => {
      const w: Waiter = {
        client,
        start: () => {
          clearTimeout(w.timer);
          leave();
          resolve();
        },
        timer: setTimeout(() => {
          this.queue.splice(this.queue.indexOf(w), 1);
          leave();
          this.onShed('waited-too-long');
          reject(new Overloaded(`a read waited ${this.limits.waitMs} ms for its turn`));
        }, this.limits.waitMs),
      };
      this.queue.push(w);
    });
  }
}

interface Entry {
  version: string;
  expires: number;
  answer: Promise<Answer>;
  weight: number;
}

export interface CacheStats {
  hits: number;
  joins: number;
  misses: number;
}

/**
 * Answers by key, each valid for one version and at most `maxAgeMs`; the least recently used are dropped once the
 * answers together weigh more than `maxWeight` bytes. A failed computation is not kept: its waiting readers get
 * its error, the next reader computes again.
 */
export class AnswerCache {
  private readonly entries = new Map<string, Entry>();
  private weight = 0;
  readonly stats: CacheStats = { hits: 0, joins: 0, misses: 0 };

  constructor(
    private readonly gate: Gate,
    private readonly maxWeight = 96 * 1024 * 1024,
    private readonly now: () => number = Date.now,
  ) {}

  /** The answer for `key` at `version`; a computation it needs counts against `client`'s places in the queue. */
  async get<T>(
    key: string,
    version: string,
    maxAgeMs: number,
    compute: () => Promise<T>,
    client?: string,
  ): Promise<Answer<T>> {
    const t = this.now();
    const hit = this.entries.get(key);
    if (hit && hit.version === version && hit.expires > t) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      const settled = hit.weight > 0;
      if (settled) this.stats.hits++;
      else this.stats.joins++;
      return hit.answer as Promise<Answer<T>>;
    }
    this.stats.misses++;
    if (hit) this.drop(key, hit);
    // The JSON is made inside the gate too: it is part of the computation's cost, and every API reader needs it.
    const answer = this.gate.run(async () => {
      const a = new Answer(await compute());
      void a.body;
      return a;
    }, client);
    const entry: Entry = { version, expires: t + maxAgeMs, answer, weight: 0 };
    this.entries.set(key, entry);
    answer.then(
      (a) => {
        if (this.entries.get(key) !== entry) return;
        entry.weight = a.weight;
        this.weight += entry.weight;
        this.evict();
      },
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
    return answer;
  }

  /** How many answers are kept, and their weight in bytes. */
  get size(): { answers: number; weight: number } {
    return { answers: this.entries.size, weight: this.weight };
  }

  private drop(key: string, e: Entry): void {
    this.entries.delete(key);
    this.weight -= e.weight;
  }

  private evict(): void {
    for (const [key, e] of this.entries) {
      if (this.weight <= this.maxWeight) return;
      if (e.weight > 0) this.drop(key, e);
    }
  }
}
