// The HTTP API, called through its route handlers as Next calls them: answers, filters, past instants, and the
// 4xx `{error:{code,message}}` for every kind of bad input.
// Long because it is a table of every route's answers and refusals over one store.

import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzePool } from '@/lib/analyze';
import type { ApiError, FleetResponse, PoolDetail, PoolResponse } from '@/lib/api-types';
import { buildScenario } from '@/lib/fixtures/scenarios';
import type { ChangesPage, TimelineResponse } from '@/lib/timeline';
import { diffDetails } from '@/lib/transitions';
import { answerChecker, OPENAPI_PATH } from '../testing/openapi';
import { openSqlite } from '../store/sqlite';
import { TimelineStore } from '../store/store';

const dir = mkdtempSync(path.join(os.tmpdir(), 'poolscope-api-'));
process.env.POOLSCOPE_DB_PATH = path.join(dir, 'db.sqlite');
process.env.POOLSCOPE_COLLECTOR = 'false';

const T = (m: number) => new Date(Date.parse('2026-11-29T10:00:00.000Z') + m * 60_000).toISOString();
const POOL = 'mgmt-weu/default/pool0';

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
let fleet: Handler,
  sources: Handler,
  detail: Handler,
  timeline: Handler,
  changes: Handler,
  healthz: Handler,
  readyz: Handler,
  metricsRoute: Handler,
  openapi: Handler;

/** Every answer is checked against openapi.json: the operation's schema for its status. */
const checkAnswer = answerChecker();
const templates = new Map<Handler, string>();

async function call(
  h: Handler,
  url: string,
  params: Record<string, string> = {},
): Promise<{ status: number; body: unknown }> {
  const res = await h(new Request(`http://localhost${url}`), { params: Promise.resolve(params) });
  const body: unknown = await res.json();
  expect(
    checkAnswer(templates.get(h) ?? '(unknown handler)', 'GET', res.status, body),
    `${url} → ${res.status}, as openapi.json says`,
  ).toEqual([]);
  return { status: res.status, body };
}
const poolParams = { context: 'mgmt-weu', namespace: 'default', name: 'pool0' };

beforeAll(async () => {
  // History: frozen at T0, thawed at T10; a second pool in another context that is healthy.
  const store = new TimelineStore(openSqlite(process.env.POOLSCOPE_DB_PATH as string));
  await store.migrate();
  const frozen = analyzePool(buildScenario('s01-scale-up-pre-fix').input, { now: T(0) });
  const thawed = analyzePool(buildScenario('s02-scale-up-post-fix').input, { now: T(10), previous: frozen });
  const other = analyzePool(buildScenario('s05-flexible').input, { now: T(0) });
  const moved: PoolDetail = {
    ...other,
    summary: {
      ...other.summary,
      key: 'mgmt-neu/default/flex',
      ref: { context: 'mgmt-neu', namespace: 'default', name: 'flex' },
    },
  };
  await store.writeCycle({ id: 'c0', at: T(0) }, [
    { detail: frozen, transitions: diffDetails(null, frozen, T(0)) },
    { detail: moved, transitions: diffDetails(null, moved, T(0)) },
  ]);
  await store.writeCycle({ id: 'c1', at: T(10) }, [
    { detail: thawed, transitions: diffDetails(frozen, thawed, T(10)) },
  ]);
  await store.close();
  fleet = (await import('@/app/api/pools/route')).GET as unknown as Handler;
  sources = (await import('@/app/api/sources/route')).GET as unknown as Handler;
  detail = (await import('@/app/api/pools/[context]/[namespace]/[name]/route')).GET as unknown as Handler;
  timeline = (await import('@/app/api/pools/[context]/[namespace]/[name]/timeline/route')).GET as unknown as Handler;
  changes = (await import('@/app/api/pools/[context]/[namespace]/[name]/changes/route')).GET as unknown as Handler;
  healthz = (await import('@/app/api/healthz/route')).GET as unknown as Handler;
  readyz = (await import('@/app/api/readyz/route')).GET as unknown as Handler;
  metricsRoute = (await import('@/app/api/metrics/route')).GET as unknown as Handler;
  openapi = (await import('@/app/api/openapi.json/route')).GET as unknown as Handler;
  const pool = '/api/pools/{context}/{namespace}/{name}';
  for (const [h, t] of [
    [fleet, '/api/pools'],
    [sources, '/api/sources'],
    [detail, pool],
    [timeline, `${pool}/timeline`],
    [changes, `${pool}/changes`],
    [healthz, '/api/healthz'],
    [readyz, '/api/readyz'],
    [openapi, '/api/openapi.json'],
  ] as const)
    templates.set(h, t);
});
afterAll(async () => {
  const { runtime } = await import('../runtime');
  await (await runtime()).stop();
});

describe('GET /api/pools', () => {
  it('lists every pool with its summary and the sources report', async () => {
    const { status, body } = await call(fleet, '/api/pools');
    const b = body as FleetResponse;
    expect(status).toBe(200);
    expect(b.total).toBe(2);
    expect(b.pools.map((p) => p.key).sort()).toEqual(['mgmt-neu/default/flex', POOL]);
    expect(b.pools.find((p) => p.key === POOL)?.lastChange).toBe(T(10));
    expect(b.sources).toEqual({
      collecting: false,
      lastCycle: { id: 'c1', at: T(10) },
      kube: [],
      azure: [],
      store: null,
    });
  });
  it('serves the sources report alone too (GET /api/sources), and names an unknown parameter', async () => {
    const { status, body } = await call(sources, '/api/sources');
    expect(status).toBe(200);
    expect(body).toEqual({ collecting: false, lastCycle: { id: 'c1', at: T(10) }, kube: [], azure: [], store: null });
    const bad = await call(sources, '/api/sources?verbose=1');
    expect(bad.status).toBe(400);
    expect((bad.body as ApiError).error.message).toContain('verbose');
  });
  it('filters by context and text, and sorts', async () => {
    expect(((await call(fleet, '/api/pools?context=mgmt-neu')).body as FleetResponse).pools.map((p) => p.key)).toEqual([
      'mgmt-neu/default/flex',
    ]);
    expect(((await call(fleet, '/api/pools?q=POOL0')).body as FleetResponse).pools.map((p) => p.key)).toEqual([POOL]);
    expect(((await call(fleet, '/api/pools?sort=-pool')).body as FleetResponse).pools.map((p) => p.ref.name)).toEqual([
      'pool0',
      'flex',
    ]);
  });
  it("filters by the worst finding's severity", async () => {
    const all = ((await call(fleet, '/api/pools')).body as FleetResponse).pools;
    const bySeverity: string[][] = [];
    for (const severity of ['critical', 'warning', 'info'] as const) {
      const got = ((await call(fleet, `/api/pools?severity=${severity}`)).body as FleetResponse).pools.map(
        (p) => p.key,
      );
      expect(got, severity).toEqual(all.filter((p) => p.worstFinding?.severity === severity).map((p) => p.key));
      bySeverity.push(got);
    }
    // Each pool under its own severity, once; and some severity leaves a pool out.
    expect(bySeverity.flat().sort()).toEqual(
      all
        .filter((p) => p.worstFinding)
        .map((p) => p.key)
        .sort(),
    );
    expect(bySeverity.some((keys) => keys.length < all.length)).toBe(true);
  });
  it.each([
    ['/api/pools?drifting=maybe', 'invalid-query', /"drifting": must be 1, true, 0 or false/],
    ['/api/pools?sort=size', 'invalid-query', /"sort": must be one of pool, context/],
    ['/api/pools?severity=high', 'invalid-query', /"severity": must be one of critical, warning, info/],
    ['/api/pools?colour=red', 'invalid-query', /unknown query parameter "colour"/],
    ['/api/pools?__proto__=x', 'invalid-query', /^unknown query parameter "__proto__"$/],
    ['/api/pools?constructor=x&toString=y', 'invalid-query', /^unknown query parameters "constructor", "toString"$/],
  ])('%s → 400 %s', async (url, code, message) => {
    const { status, body } = await call(fleet, url);
    expect(status).toBe(400);
    expect((body as { error: { code: string; message: string } }).error.code).toBe(code);
    expect((body as { error: { message: string } }).error.message).toMatch(message);
  });
});

describe("the fleet page's links", () => {
  it('are refused by the page exactly when GET /api/pools refuses them, with the same message', async () => {
    const { fleetParamsProblem } = await import('./api-schemas');
    for (const q of [
      '',
      'sort=-pool',
      'drifting=1&notReady=false',
      'severity=info&q=pool',
      'deleted=0',
      'sort=size',
      'sort=--pool',
      'drifting=maybe',
      'notReady=yes',
      'severity=high',
      'colour=red',
      'constructor=x',
      `q=${'x'.repeat(201)}`,
      'sort=size&drifting=2',
    ]) {
      const api = await call(fleet, `/api/pools?${q}`);
      const page = fleetParamsProblem(new URLSearchParams(q));
      expect(page?.message ?? null, q).toBe(api.status === 400 ? (api.body as ApiError).error.message : null);
    }
  });
  it('lead, when refused, to the same link without the parameters at fault', async () => {
    const { fleetParamsProblem } = await import('./api-schemas');
    expect(
      fleetParamsProblem({ context: 'mgmt-weu', sort: 'size', drifting: 'maybe', colour: 'red', q: 'pool' }),
    ).toEqual({
      message:
        '"drifting": must be 1, true, 0 or false; "sort": must be one of pool, context, namespace, cluster, state, drift, finding, desired, lastChange, optionally prefixed with - for descending; unknown query parameter "colour"',
      without: 'context=mgmt-weu&q=pool',
    });
    // An empty parameter is absent, as a form leaves it; a repeated one is read by its first value.
    expect(fleetParamsProblem({ context: '', sort: ' ', q: 'x' })).toBeNull();
    expect(fleetParamsProblem({ sort: ['pool', 'size'] })).toBeNull();
    // The grouping is the page's own parameter, checked as strictly as the API's.
    expect(fleetParamsProblem({ group: 'cluster', q: 'x' })).toBeNull();
    expect(fleetParamsProblem({ group: 'region', q: 'x' })).toEqual({
      message: '"group": must be one of context, cluster',
      without: 'q=x',
    });
  });
});

describe('GET /api/pools/{context}/{namespace}/{name}', () => {
  it('returns the current state with findings, verdict, drift and instances', async () => {
    const { status, body } = await call(detail, '/api/pools/mgmt-weu/default/pool0', poolParams);
    const b = body as PoolResponse;
    expect(status).toBe(200);
    expect(b.asOf).toBeNull();
    expect(b.pool.summary.ampReady).toBe(true);
    expect(b.pool.instances).toHaveLength(5);
  });
  it('returns the state at a past instant with ?at=', async () => {
    const b = (await call(detail, `/api/pools/mgmt-weu/default/pool0?at=${T(5)}`, poolParams)).body as PoolResponse;
    expect(b.asOf).toBe(T(5));
    expect(b.pool.summary.ampReady).toBe(false);
    expect(b.pool.findings[0]?.code).toBe('readiness-gate-frozen');
    expect(b.pool.drift.map((d) => d.kind)).toEqual(['missing-from-machinepool', 'missing-from-machinepool']);
  });
  it('answers 404 for an unknown pool and for an instant before it was known', async () => {
    const missing = await call(detail, '/api/pools/mgmt-weu/default/nope', { ...poolParams, name: 'nope' });
    expect(missing).toEqual({
      status: 404,
      body: {
        error: { code: 'pool-not-found', message: 'poolscope knows no MachinePool default/nope in context mgmt-weu.' },
      },
    });
    const early = await call(detail, `/api/pools/mgmt-weu/default/pool0?at=${T(-5)}`, poolParams);
    expect(early).toEqual({
      status: 404,
      body: {
        error: {
          code: 'pool-not-found',
          message: `MachinePool default/pool0 in context mgmt-weu was not known to poolscope at ${T(-5)}. Its record starts at ${T(0)}.`,
        },
      },
    });
  });
  it.each([
    [{ at: 'yesterday' }, poolParams, /"at": must be an RFC 3339 instant/],
    [{}, { ...poolParams, namespace: 'Not_A_Namespace' }, /"namespace": must be a Kubernetes namespace name/],
    [
      { at: '2026-02-30T10:00:00Z' },
      poolParams,
      /^"at": names a day that does not exist \(February 2026 has 28 days\)$/,
    ],
    [{ at: '2026-11-29T25:00:00Z' }, poolParams, /^"at": names a time of day that does not exist/],
    [
      { at: new Date(Date.now() + 5 * 60_000).toISOString() },
      poolParams,
      /^"at": \S+ is in the future \(it is now \S+\): poolscope shows a pool as it is or was, not as it will be$/,
    ],
  ])('rejects bad input %j %j with 400', async (q, params, message) => {
    const { status, body } = await call(detail, `/api/pools/x/y/z?${new URLSearchParams(q)}`, params);
    expect(status).toBe(400);
    expect((body as { error: { message: string } }).error.message).toMatch(message);
  });
});

describe('GET /api/pools/{…}/changes', () => {
  const url = (q: string) => `/api/pools/mgmt-weu/default/pool0/changes?from=${T(-5)}&to=${T(20)}${q}`;
  it("pages through a window's changes, newest first, to the same changes the timeline lists", async () => {
    const all = (
      (await call(timeline, `/api/pools/mgmt-weu/default/pool0/timeline?from=${T(-5)}&to=${T(20)}`, poolParams))
        .body as TimelineResponse
    ).entries;
    expect(all.length).toBeGreaterThan(7);
    const seen: unknown[] = [];
    let next: string | null = null;
    let pages = 0;
    do {
      const r = await call(changes, url(`&limit=3${next ? `&before=${encodeURIComponent(next)}` : ''}`), poolParams);
      expect(r.status).toBe(200);
      const page = r.body as ChangesPage;
      expect(page.entries.length).toBeLessThanOrEqual(3);
      seen.push(...page.entries);
      next = page.next;
      pages++;
    } while (next && pages < 100);
    expect(seen).toEqual([...all].reverse());
    expect(pages).toBe(Math.ceil(all.length / 3));
  });
  it.each([
    ['&before=yesterday', 400, /"before": must be a previous page's `next`/],
    ['&before=2026-11-29T10:00:00Z~x', 400, /"before"/],
    ['&limit=0', 400, /"limit": must be a whole number from 1 to 1000/],
    ['&limit=1001', 400, /"limit"/],
    ['&limit=-1', 400, /"limit"/],
  ])('%s → %i', async (q, status, message) => {
    const r = await call(changes, url(q), poolParams);
    expect(r.status).toBe(status);
    expect((r.body as ApiError).error.message).toMatch(message);
  });
  it('404 for a pool poolscope does not know', async () => {
    const r = await call(changes, '/api/pools/mgmt-weu/default/nope/changes', { ...poolParams, name: 'nope' });
    expect(r.status).toBe(404);
  });
});

describe('GET /api/pools/{…}/timeline', () => {
  it('returns lanes, series and entries for a range, starting from the state at its start', async () => {
    const { status, body } = await call(
      timeline,
      `/api/pools/mgmt-weu/default/pool0/timeline?from=${T(5)}&to=${T(20)}`,
      poolParams,
    );
    const b = body as TimelineResponse;
    expect(status).toBe(200);
    expect(b.knownAtStart).toBe(true);
    expect(b.lanes.find((l) => l.field === 'amp.ready')?.periods.map((p) => [p.start, p.end, p.value])).toEqual([
      [T(5), T(10), 'false'],
      [T(10), T(20), 'true'],
    ]);
    expect(b.entries.every((e) => e.at >= T(5) && e.at <= T(20))).toBe(true);
  });
  it('takes either end alone: from ends now, to starts 6 hours before', async () => {
    const since = (
      await call(
        timeline,
        `/api/pools/mgmt-weu/default/pool0/timeline?from=${new Date(Date.now() - 3_600_000).toISOString()}`,
        poolParams,
      )
    ).body as TimelineResponse;
    expect(Date.now() - Date.parse(since.to)).toBeLessThan(60_000);
    const until = (await call(timeline, `/api/pools/mgmt-weu/default/pool0/timeline?to=${T(20)}`, poolParams))
      .body as TimelineResponse;
    expect([until.from, until.to]).toEqual([T(20 - 360), T(20)]);
  });
  it('returns the full state at an instant with ?at=', async () => {
    const b = (await call(timeline, `/api/pools/mgmt-weu/default/pool0/timeline?at=${T(1)}`, poolParams))
      .body as PoolResponse;
    expect(b.pool.summary.ampReady).toBe(false);
  });
  it.each([
    [`from=${T(20)}&to=${T(5)}`, 400, /must be before/],
    [`at=${T(1)}&from=${T(0)}`, 400, /one of "at".*"range".*or "from"\/"to".*not several/],
    [`range=30d&to=${T(0)}`, 400, /one of "at".*"range".*or "from"\/"to".*not several/],
    ['range=2d', 400, /"range": must be one of 1h, 6h, 24h, 7d, 30d/],
    ['range=__proto__', 400, /"range": must be one of/],
    ['from=2026-01-01T00:00:00Z&to=2026-11-29T00:00:00Z', 400, /at most 31 days/],
    ['to=soon', 400, /"to": must be an RFC 3339 instant/],
    // Either end alone is held to the same 31 days: from alone ends now.
    [
      'from=0001-01-01T00:00:00Z',
      400,
      /^A time range can span at most 31 days; "from" \(0001-01-01T00:00:00.000Z\) to "to" \(\S+, now\) spans more\.$/,
    ],
    [
      `from=${new Date(Date.now() + 3_600_000).toISOString()}`,
      400,
      /^"from" \(\S+\) must be before "to" \(\S+, now\)\.$/,
    ],
    ['to=2026-02-29T00:00:00Z', 400, /^"to": names a day that does not exist \(February 2026 has 28 days\)$/],
    [`at=${new Date(Date.now() + 3_600_000).toISOString()}`, 400, /^"at": \S+ is in the future/],
  ])('?%s → %i', async (q, status, message) => {
    const r = await call(timeline, `/api/pools/mgmt-weu/default/pool0/timeline?${q}`, poolParams);
    expect(r.status).toBe(status);
    expect((r.body as { error: { message: string } }).error.message).toMatch(message);
  });
});

describe('health', () => {
  it('serves openapi.json, which describes every endpoint', async () => {
    const { status, body } = await call(openapi, '/api/openapi.json');
    expect(status).toBe(200);
    const { readFileSync } = await import('node:fs');
    expect(body).toEqual(JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')));
    expect(Object.keys((body as { paths: object }).paths)).toContain('/api/pools/{context}/{namespace}/{name}/resync');
  });

  it('healthz answers ok; readyz is ready once a cycle is stored', async () => {
    expect(await call(healthz, '/api/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await call(readyz, '/api/readyz')).toEqual({
      status: 200,
      body: { status: 'ready', lastCycle: { id: 'c1', at: T(10) }, collecting: false },
    });
  });
});

describe('GET /api/metrics', () => {
  it("serves Prometheus text: the stored pools, no collector on this replica, and the API's own request durations", async () => {
    await call(fleet, '/api/pools');
    const res = await metricsRoute(new Request('http://localhost/api/metrics'), { params: Promise.resolve({}) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toMatch(/^poolscope_pools 2$/m);
    expect(text).toMatch(/^poolscope_collector_leader 0$/m);
    expect(text).toMatch(
      /^poolscope_pool_drift_items\{context="mgmt-neu",namespace="default",pool="flex",kind="case-mismatch"\} 0$/m,
    );
    expect(text).toMatch(
      /^poolscope_http_request_duration_seconds_count\{route="\/api\/pools",method="GET",status="200"\} [1-9]/m,
    );
    expect(text).toMatch(
      /^poolscope_http_request_duration_seconds_count\{route="\/api\/pools\/:context\/:namespace\/:name\/timeline",method="GET",status="400"\} [1-9]/m,
    );
    expect(text).toMatch(/^process_cpu_seconds_total /m);
  });
});

describe('request logs', () => {
  it('log each request as one JSON line with its request id, which the response echoes', async () => {
    const { Writable } = await import('node:stream');
    const { useLogDestination } = await import('../log');
    const lines: Record<string, unknown>[] = [];
    useLogDestination(
      new Writable({
        write(chunk: Buffer, _enc, cb) {
          lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
          cb();
        },
      }),
    );
    const res = await detail(
      new Request('http://localhost/api/pools/mgmt-weu/default/nope', { headers: { 'x-request-id': 'trace-42' } }),
      { params: Promise.resolve({ ...poolParams, name: 'nope' }) },
    );
    expect(res.status).toBe(404);
    expect(res.headers.get('x-request-id')).toBe('trace-42');
    await new Promise((r) => setTimeout(r, 50));
    expect(lines.find((l) => l.requestId === 'trace-42')).toMatchObject({
      level: 'info',
      msg: 'request',
      method: 'GET',
      route: '/api/pools/:context/:namespace/:name',
      status: 404,
      service: 'poolscope',
    });
  });
});

describe('methods and paths no route serves', () => {
  it('answer 405 with Allow and the error body, for every route and method it does not serve', async () => {
    const routes: [string, Record<string, unknown>, string][] = [
      ['/api/pools', await import('@/app/api/pools/route'), 'GET, HEAD, OPTIONS'],
      [
        '/api/pools/mgmt-weu/default/pool0',
        await import('@/app/api/pools/[context]/[namespace]/[name]/route'),
        'GET, HEAD, OPTIONS',
      ],
      [
        '/api/pools/mgmt-weu/default/pool0/resync',
        await import('@/app/api/pools/[context]/[namespace]/[name]/resync/route'),
        'GET, POST, HEAD, OPTIONS',
      ],
      ['/api/stream', await import('@/app/api/stream/route'), 'GET, HEAD, OPTIONS'],
    ];
    for (const [url, mod, allow] of routes) {
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
        const served = allow.split(', ').includes(method);
        expect(typeof mod[method], `${method} ${url}`).toBe('function');
        if (served) continue;
        const res = await (mod[method] as Handler)(new Request(`http://localhost${url}?x=1`, { method }), {
          params: Promise.resolve(poolParams),
        });
        expect(res.status, `${method} ${url}`).toBe(405);
        expect(res.headers.get('allow')).toBe(allow);
        const body = (await res.json()) as ApiError;
        expect(body.error.code).toBe('method-not-allowed');
        expect(body.error.message).toContain(`${method} is not served at ${url}`);
      }
    }
  });

  it('answer 404 with the error body under /api, counted under one route label', async () => {
    const mod = (await import('@/app/api/[...path]/route')) as unknown as Record<string, Handler>;
    for (const method of ['GET', 'POST', 'DELETE']) {
      const res = await (mod[method] as Handler)(new Request(`http://localhost/api/nope/${method}`, { method }), {
        params: Promise.resolve({}),
      });
      expect(res.status).toBe(404);
      expect(((await res.json()) as ApiError).error).toEqual({
        code: 'no-such-endpoint',
        message: `poolscope has no API endpoint at /api/nope/${method}; /api/openapi.json lists them all.`,
      });
    }
    const text = await (
      await metricsRoute(new Request('http://localhost/api/metrics'), { params: Promise.resolve({}) })
    ).text();
    expect(text).toMatch(
      /^poolscope_http_request_duration_seconds_count\{route="\/api\/\*",method="GET",status="404"\} 1$/m,
    );
    expect(text).not.toMatch(/route="\/api\/nope/);
  });

  it('labels each route by its template, and any other path as /api/*', async () => {
    const { routeLabel } = await import('../metrics-registry');
    expect(routeLabel('/api/pools/a/b/c')).toBe('/api/pools/:context/:namespace/:name');
    expect(routeLabel('/api/pools/a/b/c/timeline')).toBe('/api/pools/:context/:namespace/:name/timeline');
    expect(routeLabel('/api/pools/a/b/c/resync')).toBe('/api/pools/:context/:namespace/:name/resync');
    expect(routeLabel('/api/sources')).toBe('/api/sources');
    expect(['/api/pools/a/b/c/x', '/api/pools/a/b', '/api/x', '/wp-login.php'].map(routeLabel)).toEqual([
      '/api/*',
      '/api/*',
      '/api/*',
      '/api/*',
    ]);
  });
});
