import 'server-only';
// The one wrapper every route handler goes through: path and query parameters parsed with zod, bad input
// answered with 4xx `{error:{code,message}}`, unexpected failures with 500 and no stack trace.

import { z } from 'zod';
import type { ApiError } from '@/lib/api-types';
import { ConfigError } from '../env';
import { describeIssues } from './api-schemas';
import { randomUUID } from 'node:crypto';
import { log } from '../log';
import { BodyTooLargeError, readCappedText } from './read-capped';
import { observeRequest, routeLabel } from '../metrics-registry';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
    /** Fields the answer carries beside `error` (a 409 `verdict-changed`'s new preview). */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export function errorResponse(
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): Response {
  const body: ApiError = { ...extra, error: { code, message } };
  return Response.json(body, { status, headers: { 'cache-control': 'no-store', ...headers } });
}

type RouteContext = { params: Promise<Record<string, string | string[] | undefined>> };

export function route<
  Q extends z.ZodType = z.ZodObject<Record<string, never>>,
  P extends z.ZodType = z.ZodObject<Record<string, never>>,
>(
  schemas: { query?: Q; params?: P },
  handler: (input: { query: z.output<Q>; params: z.output<P>; request: Request }) => Promise<unknown>,
): (request: Request, ctx: RouteContext) => Promise<Response> {
  return async (request, ctx) => {
    const t0 = performance.now();
    const requestId = request.headers.get('x-request-id') ?? randomUUID();
    const res = await handle(request, ctx, requestId);
    const seconds = (performance.now() - t0) / 1000;
    const path = new URL(request.url).pathname;
    observeRequest(path, request.method, res.status, seconds);
    res.headers.set('x-request-id', requestId);
    // Probes and scrapes every few seconds: only at debug level.
    const quiet = path === '/api/healthz' || path === '/api/readyz' || path === '/api/metrics';
    log()[quiet ? 'debug' : 'info'](
      {
        requestId,
        method: request.method,
        route: routeLabel(path),
        path,
        status: res.status,
        ms: Math.round(seconds * 1000),
      },
      'request',
    );
    return res;
  };

  async function handle(request: Request, ctx: RouteContext, requestId: string): Promise<Response> {
    try {
      const url = new URL(request.url);
      // No prototype: `__proto__` or `constructor` is then a key like any other, which a strict schema names as
      // unknown (on a plain object, `__proto__` would vanish into the prototype slot).
      const rawQuery: Record<string, string> = Object.create(null) as Record<string, string>;
      for (const [k, v] of url.searchParams) rawQuery[k] = v;
      const query = (schemas.query ?? z.strictObject({})).safeParse(rawQuery);
      if (!query.success) return errorResponse(400, 'invalid-query', describeIssues(query.error.issues, 'query'));
      const rawParams = (await ctx?.params) ?? {};
      const params = (schemas.params ?? z.object({})).safeParse(rawParams);
      if (!params.success) return errorResponse(400, 'invalid-path', describeIssues(params.error.issues, 'path'));
      const out = await handler({ query: query.data as z.output<Q>, params: params.data as z.output<P>, request });
      if (out instanceof Response) return out;
      return Response.json(out, { headers: { 'cache-control': 'no-store' } });
    } catch (e) {
      if (e instanceof HttpError) return errorResponse(e.status, e.code, e.message, e.headers, e.extra);
      if (e instanceof ConfigError) return errorResponse(503, 'not-configured', e.message);
      log().error({ requestId, method: request.method, path: new URL(request.url).pathname, err: e }, 'request failed');
      return errorResponse(500, 'internal', 'poolscope could not answer this request; the server log has the details.');
    }
  }
}

/** The largest request body poolscope reads (a resync's is a few dozen bytes). */
const MAX_BODY_BYTES = 64 * 1024;

const tooLarge = () =>
  new HttpError(413, 'body-too-large', `The request body must be at most ${MAX_BODY_BYTES / 1024} KiB.`);

/**
 * Refuses a body whose declared length is over MAX_BODY_BYTES, before anything is read (and before the caller
 * is identified): a check of the header alone. A body sent without a length is held to the ceiling as it is read.
 */
export function rejectLargeBody(request: Request): void {
  const declared = request.headers.get('content-length');
  if (declared !== null && !(/^\d+$/.test(declared) && Number(declared) <= MAX_BODY_BYTES)) {
    if (/^\d+$/.test(declared)) throw tooLarge();
    throw new HttpError(400, 'invalid-body', `Content-Length "${declared.slice(0, 40)}" is not a number of bytes.`);
  }
}

/**
 * Reads a JSON request body, at most MAX_BODY_BYTES of it (the rest is never read), and parses it with `schema`;
 * 413 `body-too-large` past the ceiling, 400 `invalid-body` naming what is wrong.
 */
export async function readJsonBody<S extends z.ZodType>(request: Request, schema: S): Promise<z.output<S>> {
  rejectLargeBody(request);
  let raw: unknown;
  try {
    const text = await readCappedText(request.body as AsyncIterable<Uint8Array> | null, MAX_BODY_BYTES);
    raw = text.trim() === '' ? {} : JSON.parse(text);
  } catch (e) {
    if (e instanceof BodyTooLargeError) throw tooLarge();
    throw new HttpError(400, 'invalid-body', `The request body is not valid JSON: ${(e as Error).message}`);
  }
  const r = schema.safeParse(raw);
  if (!r.success) {
    const msg = r.error.issues
      .map((i) =>
        i.code === 'unrecognized_keys'
          ? `unknown field${i.keys.length > 1 ? 's' : ''} ${i.keys.map((k) => `"${k}"`).join(', ')}`
          : `${i.path.length ? `"${i.path.join('.')}"` : 'body'}: ${i.message}`,
      )
      .join('; ');
    throw new HttpError(400, 'invalid-body', msg);
  }
  return r.data as z.output<S>;
}

/** The methods a route can serve (HEAD and OPTIONS Next answers itself from the others). */
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
type Method = (typeof METHODS)[number];
type Handler = (request: Request, ctx: RouteContext) => Promise<Response>;

/** Any query: a request answered with an error whatever it asks. */
const anyQuery = z.record(z.string(), z.string());

/**
 * Handlers for the methods a route does not serve: 405 with `Allow` and the error body, logged and counted like
 * any request (Next's own 405 has neither a body nor `Allow`). A route file exports them beside its own:
 * `export const { POST, PUT, PATCH, DELETE } = otherMethods('GET');`
 */
export function otherMethods<A extends Method>(...allowed: A[]): Record<Exclude<Method, A>, Handler> {
  const allow = [...allowed, ...(allowed.includes('GET' as A) ? ['HEAD'] : []), 'OPTIONS'].join(', ');
  return refusing(
    METHODS.filter((m): m is Exclude<Method, A> => !allowed.includes(m as A)),
    (method, path) =>
      new HttpError(
        405,
        'method-not-allowed',
        `${method} is not served at ${path}; it answers ${allowed.join(' and ')}.`,
        { allow },
      ),
  );
}

/** Handlers for every method of a path under /api that no route serves: 404 with the error body, not the HTML page. */
export function noSuchEndpoint(): Record<Method, Handler> {
  return refusing(
    METHODS,
    (_method, path) =>
      new HttpError(
        404,
        'no-such-endpoint',
        `poolscope has no API endpoint at ${path}; /api/openapi.json lists them all.`,
      ),
  );
}

/** One handler, for each of `methods`, answering every request with `error`'s response (logged and counted by route). */
function refusing<M extends Method>(
  methods: readonly M[],
  error: (method: string, path: string) => HttpError,
): Record<M, Handler> {
  const handler = route({ query: anyQuery }, async ({ request }) => {
    throw error(request.method, new URL(request.url).pathname);
  });
  return Object.fromEntries(methods.map((m) => [m, handler])) as Record<M, Handler>;
}
