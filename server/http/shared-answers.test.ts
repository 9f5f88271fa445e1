// The read path's shared answers, through the route handlers as Next calls them: byte for byte what the read model
// computes for the same store, one computation per version however many read it, 304 for a client that holds the
// answer, compressed copies made once, a new answer once a change is stored, and under overload a quick 503 with Retry-After.

import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { analyzePool } from '@/lib/analyze';
import type { PoolRef } from '@/lib/api-types';
import { buildScenario } from '@/lib/fixtures/scenarios';
import { diffDetails } from '@/lib/transitions';
import type { FleetFilters } from '@/lib/url-state';
import type { Runtime } from '../runtime';
import { PEER_HEADER } from './peer';
import { ENCODING_HEADER } from './request-screen';
import * as readModel from '../read-model';
import { openSqlite } from '../store/sqlite';
import { TimelineStore } from '../store/store';

const dir = mkdtempSync(path.join(os.tmpdir(), 'poolscope-shared-'));
process.env.POOLSCOPE_DB_PATH = path.join(dir, 'db.sqlite');
process.env.POOLSCOPE_COLLECTOR = 'false';

const T = (m: number) => new Date(Date.parse('2026-11-29T10:00:00.000Z') + m * 60_000).toISOString();
const NOW = Date.parse(T(30));
const REF: PoolRef = { context: 'mgmt-weu', namespace: 'default', name: 'pool0' };
const PARAMS = { context: 'mgmt-weu', namespace: 'default', name: 'pool0' };

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
let fleet: Handler, detail: Handler, timeline: Handler;
let rt: Runtime;

const get = (h: Handler, url: string, headers: Record<string, string> = {}, params = PARAMS) =>
  h(new Request(`http://localhost${url}`, { headers }), { params: Promise.resolve(params) });

beforeAll(async () => {
  // The answers state "now" (the fleet's `at`, a live window's `to`): one clock for the route and the reference.
  vi.useFakeTimers({ toFake: ['Date'], now: NOW });
  const store = new TimelineStore(openSqlite(process.env.POOLSCOPE_DB_PATH as string));
  await store.migrate();
  const frozen = analyzePool(buildScenario('s01-scale-up-pre-fix').input, { now: T(0) });
  const thawed = analyzePool(buildScenario('s02-scale-up-post-fix').input, { now: T(10), previous: frozen });
  await store.writeCycle({ id: 'c0', at: T(0) }, [{ detail: frozen, transitions: diffDetails(null, frozen, T(0)) }]);
  await store.writeCycle({ id: 'c1', at: T(10) }, [
    { detail: thawed, transitions: diffDetails(frozen, thawed, T(10)) },
  ]);
  await store.close();
  fleet = (await import('@/app/api/pools/route')).GET as unknown as Handler;
  detail = (await import('@/app/api/pools/[context]/[namespace]/[name]/route')).GET as unknown as Handler;
  timeline = (await import('@/app/api/pools/[context]/[namespace]/[name]/timeline/route')).GET as unknown as Handler;
  rt = await (await import('../runtime')).runtime();
});
afterAll(async () => {
  vi.useRealTimers();
  await rt.stop();
});

const FILTERS: FleetFilters = { drifting: false, notReady: false, deleted: false, sort: 'finding', desc: false };

describe('answers are byte for byte what the read model computes', () => {
  it.each<[string, () => Handler, string, () => Promise<unknown>]>([
    ['the fleet', () => fleet, '/api/pools', () => readModel.readFleet(FILTERS)],
    [
      'the fleet, filtered and sorted',
      () => fleet,
      '/api/pools?q=pool&sort=-pool',
      () => readModel.readFleet({ ...FILTERS, q: 'pool', sort: 'pool', desc: true }),
    ],
    ['a pool now', () => detail, '/api/pools/mgmt-weu/default/pool0', () => readModel.readPool(REF, null)],
    [
      'a pool at an instant',
      () => detail,
      `/api/pools/mgmt-weu/default/pool0?at=${T(5)}`,
      () => readModel.readPool(REF, T(5)),
    ],
    [
      'a fixed window',
      () => timeline,
      `/api/pools/mgmt-weu/default/pool0/timeline?from=${T(-5)}&to=${T(20)}`,
      () => readModel.readTimeline(REF, T(-5), T(20)),
    ],
    [
      'a window ending now',
      () => timeline,
      `/api/pools/mgmt-weu/default/pool0/timeline?from=${T(-5)}`,
      () => readModel.readTimeline(REF, T(-5), T(30)),
    ],
    [
      'a named range',
      () => timeline,
      '/api/pools/mgmt-weu/default/pool0/timeline?range=1h',
      () => readModel.readTimeline(REF, T(-30), T(30)),
    ],
  ])('%s', async (_what, handler, url, reference) => {
    const res = await get(handler(), url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(JSON.stringify(await reference()));
  });
});

describe('one computation per version', () => {
  it('serves concurrent readers of one window from one read of the store', async () => {
    const spy = vi.spyOn(rt.store, 'timeline');
    try {
      const url = `/api/pools/mgmt-weu/default/pool0/timeline?from=${T(-10)}&to=${T(25)}`;
      const answers = await Promise.all(Array.from({ length: 20 }, () => get(timeline, url)));
      const bodies = await Promise.all(answers.map((a) => a.text()));
      expect(new Set(bodies).size).toBe(1);
      expect(spy).toHaveBeenCalledTimes(1);
      await get(timeline, url);
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });

  it('answers 304 to a client that holds the answer, and the new answer after a change is stored', async () => {
    const url = '/api/pools/mgmt-weu/default/pool0';
    const first = await get(detail, url);
    const etag = first.headers.get('etag') as string;
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect(first.headers.get('cache-control')).toBe('private, no-cache, no-transform');
    const again = await get(detail, url, { 'if-none-match': `"other", W/${etag}` });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    // A resync marker stored without a new state, and not announced here (another replica stored it).
    await rt.store.appendEntries([
      { poolKey: 'mgmt-weu/default/pool0', at: T(12), field: 'resync', from: null, to: 'x' },
    ]);
    const tl = `/api/pools/mgmt-weu/default/pool0/timeline?from=${T(-10)}&to=${T(25)}`;
    const after = await (await get(timeline, tl)).json();
    expect(JSON.stringify(after)).toBe(JSON.stringify(await readModel.readTimeline(REF, T(-10), T(25))));
    expect((after as { markers: { kind: string }[] }).markers.map((m) => m.kind)).toContain('resync');
  });
});

describe('compression', () => {
  const url = '/api/pools/mgmt-weu/default/pool0';
  it.each<[string, string | null, (b: Buffer) => Buffer]>([
    ['br, gzip', 'br', zlib.brotliDecompressSync],
    ['gzip, deflate', 'gzip', zlib.gunzipSync],
    ['br;q=0, gzip;q=0.5', 'gzip', zlib.gunzipSync],
    ['*', 'br', zlib.brotliDecompressSync],
    ['identity', null, (b) => b],
    ['br;q=0, gzip;q=0', null, (b) => b],
  ])('Accept-Encoding: %s → %s, made once', async (accept, encoding, decode) => {
    const plain = Buffer.from(await (await get(detail, url)).arrayBuffer());
    const res = await get(detail, url, { 'accept-encoding': accept });
    // Named for the front door, which sends it as Content-Encoding (Next drops a route's own).
    expect(res.headers.get(ENCODING_HEADER)).toBe(encoding);
    expect(res.headers.get('cache-control')).toContain('no-transform');
    const body = Buffer.from(await res.arrayBuffer());
    if (encoding) expect(body.length).toBeLessThan(plain.length / 2);
    expect(decode(body).equals(plain)).toBe(true);
  });
});

describe('under overload', () => {
  it('answers 503 with Retry-After at once when too many reads wait, and serves again afterwards', async () => {
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    const real = rt.store.timeline.bind(rt.store);
    const spy = vi.spyOn(rt.store, 'timeline').mockImplementation(async (...args) => {
      await held;
      return real(...args);
    });
    try {
      // Distinct windows from distinct clients, none shared: two run, 48 wait, and the next are refused.
      const window = (i: number) => `/api/pools/mgmt-weu/default/pool0/timeline?from=${T(-100 - i)}&to=${T(20)}`;
      const pending = Array.from({ length: 50 }, (_, i) => get(timeline, window(i), { [PEER_HEADER]: `10.0.0.${i}` }));
      await vi.waitFor(() => expect(spy).toHaveBeenCalledTimes(2));
      const t0 = performance.now();
      const shed = await get(timeline, window(50), { [PEER_HEADER]: '10.0.1.1' });
      expect(performance.now() - t0).toBeLessThan(500);
      expect(shed.status).toBe(503);
      expect(shed.headers.get('retry-after')).toBe('2');
      expect(((await shed.json()) as { error: { code: string } }).error.code).toBe('overloaded');
      const metrics = await (
        await import('../metrics-registry')
      )
        .registry()
        .getSingleMetricAsString('poolscope_http_shed_total');
      expect(metrics).toMatch(/poolscope_http_shed_total\{reason="queue-full"\} [1-9]/);
      release();
      expect((await Promise.all(pending)).map((r) => r.status)).toEqual(Array(50).fill(200));
      expect((await get(timeline, window(50))).status).toBe(200);
    } finally {
      release();
      spy.mockRestore();
    }
  });
});
