// A store found corrupt while running, as the API shows it: the request that met the damage answers 503
// `store-failing` naming the file and what to do (not a bare 500); readiness and liveness fail with the same
// message, so that Kubernetes takes the pod out of service and restarts it (and start-up then refuses the file).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiError } from '@/lib/api-types';
import type { Runtime } from './runtime';
import { answerChecker } from './testing/openapi';
import { at, corruptTables, seedStore } from './testing/corrupt-store';

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
const checkAnswer = answerChecker();
const handlers: Record<string, { h: Handler; template: string }> = {};

async function call(
  name: string,
  url: string,
  params: Record<string, string> = {},
): Promise<{ status: number; body: unknown }> {
  const { h, template } = handlers[name] as { h: Handler; template: string };
  const res = await h(new Request(`http://localhost${url}`), { params: Promise.resolve(params) });
  const body: unknown = await res.json();
  expect(checkAnswer(template, 'GET', res.status, body), `${url} → ${res.status}, as openapi.json says`).toEqual([]);
  return { status: res.status, body };
}

let file = '';
beforeAll(async () => {
  file = await seedStore();
  // The history is damaged; the current state (what start-up checks and reads) is sound.
  corruptTables(file, ['pool_history']);
  process.env.POOLSCOPE_DB_PATH = file;
  process.env.POOLSCOPE_COLLECTOR = 'false';
  const pool = '/api/pools/{context}/{namespace}/{name}';
  handlers.readyz = { h: (await import('@/app/api/readyz/route')).GET as unknown as Handler, template: '/api/readyz' };
  handlers.healthz = {
    h: (await import('@/app/api/healthz/route')).GET as unknown as Handler,
    template: '/api/healthz',
  };
  handlers.fleet = { h: (await import('@/app/api/pools/route')).GET as unknown as Handler, template: '/api/pools' };
  handlers.pool = {
    h: (await import('@/app/api/pools/[context]/[namespace]/[name]/route')).GET as unknown as Handler,
    template: pool,
  };
});
afterAll(async () => {
  const { runtime } = await import('./runtime');
  await (await runtime()).stop();
});

describe('a store found corrupt while running', () => {
  it('answers 503 store-failing where the damage is met, and fails readiness and liveness with the reason', async () => {
    expect((await call('readyz', '/api/readyz')).status).toBe(200);
    expect(await call('healthz', '/api/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    const message = `poolscope's SQLite store ${file} is corrupt (SQLITE_CORRUPT: database disk image is malformed): nothing more is recorded, and what cannot be read is not shown. With poolscope stopped, restore ${file} from a backup, or move it away together with ${file}-wal and ${file}-shm (poolscope then starts with an empty store).`;
    const failing = { error: { code: 'store-failing', message } } satisfies ApiError;
    // The pool as it was half an hour into its history: the damaged pages.
    const past = await call('pool', `/api/pools/mgmt-weu/default/busy?at=${at(30)}`, {
      context: 'mgmt-weu',
      namespace: 'default',
      name: 'busy',
    });
    expect(past).toEqual({ status: 503, body: failing });
    expect(await call('readyz', '/api/readyz')).toEqual({ status: 503, body: failing });
    expect(await call('healthz', '/api/healthz')).toEqual({ status: 503, body: failing });
    // What can still be read is served.
    const fleet = await call('fleet', '/api/pools');
    expect(fleet.status).toBe(200);
    expect((fleet.body as { total: number }).total).toBe(13);
  });

  it("shows in the pages' store alert where a collector writes, before the collector meets a refused write", async () => {
    // The store found corrupt by the request above.
    const { runtime } = await import('./runtime');
    const { sourcesReport } = await import('./read-model');
    const rt = await runtime();
    // This process's runtime, as a collector whose writes have not been refused yet sees it.
    const collector = {
      health: () => ({ kube: [], azure: [] }),
      storeHealth: () => ({ state: 'ok', since: null, failingWrites: 0 }),
    };
    const report = await sourcesReport({ ...rt, collector } as unknown as Runtime);
    expect(report.store).toEqual({
      state: 'failing',
      since: expect.any(String),
      failingWrites: 0,
      error: expect.stringMatching(/ is corrupt \(SQLITE_CORRUPT: database disk image is malformed\)/),
    });
  });
});
