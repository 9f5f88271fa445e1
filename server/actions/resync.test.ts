// Resync against the simulated fleet over HTTPS with the real client (no mocks): what it writes, what it refuses
// and why, who may, cross-site and concurrent requests, a controller racing the patch, and the audit trail.
// Long because the cases share one simulated fleet, and each write path is checked with its refusals beside it.

import { afterEach, describe, expect, it } from 'vitest';
import type { ResyncResult, ResyncStatus, ResyncVerdict } from '@/lib/api-types';
import { instanceProviderId } from '@/lib/fixtures/pool';
import { DEFAULT_AZURE } from '@/lib/fixtures/objects';
import type { KubeObject } from '@/lib/unstructured';
import { ApiError } from '@/sim/kube/errors';
import { findByKind, type ResourceDef } from '@/sim/kube/resources';
import { parseEnv } from '../env';
import { HttpError } from '../http/route';
import { answerChecker } from '../testing/openapi';
import { harness, until, type Harness } from '../testing/sim-harness';
import { buildResyncService } from './index';
import { RESYNC_ANNOTATION, type ResyncService } from './resync';
import { refusal } from '../testing/refusal';
import { resyncPost } from '../testing/resync-request';

const MP = findByKind('cluster.x-k8s.io/v1beta2', 'MachinePool') as ResourceDef;
const AMP = findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureMachinePool') as ResourceDef;
const CLUSTER = findByKind('cluster.x-k8s.io/v1beta2', 'Cluster') as ResourceDef;
const EVENT = findByKind('v1', 'Event') as ResourceDef;
const REF = { context: 'mgmt-weu', namespace: 'default', name: 'pool0' };
const POOL = 'mgmt-weu/default/pool0';
const URL_ = 'http://localhost:3000/api/pools/mgmt-weu/default/pool0/resync';
const SECRET = 's'.repeat(40);
const id = (m: string) => instanceProviderId(DEFAULT_AZURE, 'pool0', m);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Setup {
  h: Harness;
  svc: ResyncService;
  logs: Record<string, unknown>[];
  published: { poolKey: string; fields: string[] }[];
  token(user: 'operator' | 'viewer' | 'admin'): string;
  post(body: unknown, opts?: { user?: 'operator' | 'viewer' | null; headers?: Record<string, string> }): Request;
  mp(): KubeObject;
  mpPatches(): number;
}

/** The fleet and a resync service on it (`heed`: waiting out the collector's Retry-After, as in production). */
async function setup(
  scenario: string,
  opts: { speed?: number; env?: Record<string, string>; heed?: boolean } = {},
): Promise<Setup> {
  const h = await harness(cleanups, scenario, opts.speed ?? 1);
  await h.start();
  // The collector has read the pool, its Nodes and its scale set: the stored state the resync starts from.
  await until('the pool analysed with Azure read', async () =>
    (await h.store.currentPool(POOL))?.sources.azure.state === 'ok' ? true : undefined,
  );
  const logs: Record<string, unknown>[] = [];
  const published: Setup['published'] = [];
  const svc = checked(
    buildResyncService({
      env: parseEnv({ POOLSCOPE_RESYNC_WAIT_SECONDS: '4', ...opts.env }),
      store: h.store,
      publish: (c) => published.push(c),
      kubeconfig: h.kubeconfig,
      contexts: ['mgmt-weu'],
      readAzure: (ref) => h.azure.read(ref),
      ...(opts.heed ? { scaleSetWait: (id: string) => h.collector.azure.throttledUntil(id) } : {}),
      log: (l) => logs.push(l),
    }),
  );
  const server = h.sim.kube.cluster('mgmt-weu');
  const token = (user: string) => h.sim.kube.tokens.get(user) as string;
  return {
    h,
    svc,
    logs,
    published,
    token,
    post: (body, o = {}) => resyncPost(URL_, body, o.user === null ? null : token(o.user ?? 'operator'), o.headers),
    mp: () => server.store.get(MP, 'default', 'pool0'),
    mpPatches: () =>
      server.writes.filter((w) => w.verb === 'patch' && w.resource === 'machinepools' && !w.dryRun).length,
  };
}

const checkAnswer = answerChecker();

/** The service, each answer checked against openapi.json as the route sends it (JSON), refusals included. */
function checked(svc: ResyncService): ResyncService {
  const path = '/api/pools/{context}/{namespace}/{name}/resync';
  const check = async <T>(method: string, p: Promise<T>): Promise<T> => {
    let out: T;
    try {
      out = await p;
    } catch (e) {
      if (e instanceof HttpError)
        expect(
          checkAnswer(
            path,
            method,
            e.status,
            JSON.parse(JSON.stringify({ ...e.extra, error: { code: e.code, message: e.message } })),
          ),
        ).toEqual([]);
      throw e;
    }
    expect(checkAnswer(path, method, 200, JSON.parse(JSON.stringify(out)))).toEqual([]);
    return out;
  };
  return Object.assign(Object.create(svc) as ResyncService, {
    run: (ref: Parameters<ResyncService['run']>[0], req: Request) => check('POST', svc.run(ref, req)),
    status: (...args: Parameters<ResyncService['status']>) => check('GET', svc.status(...args)),
  });
}

const listOf = (o: KubeObject) => (o.spec as { providerIDList?: string[] }).providerIDList ?? [];

describe('sync-provider-ids on a frozen pool (S1)', () => {
  it('does not read the scale set afresh while Azure has asked the collector to wait', async () => {
    const s = await setup('s01-scale-up-pre-fix.yaml', { heed: true });
    // Compute answers the collector's next read of the scale set with a 429 and a long Retry-After.
    s.h.sim.azure.addFault({ operation: 'vmss.get', kind: 'error', status: 429, retryAfterSeconds: 600, count: 1 });
    await until('the scale set throttled', () =>
      s.h.collector.nextAzureRead(POOL)?.waitingFor === 'throttled' ? true : undefined,
    );
    const gets = () => s.h.sim.azure.requestCounts.get('vmss.get') ?? 0;
    const before = gets();
    const preview = await s.svc.run(REF, s.post({ mode: 'reconcile', dryRun: true }));
    expect(preview.outcome).toBe('dry-run');
    expect(gets()).toBe(before);
  }, 60_000);

  it('previews with a server-side dry run that changes nothing, then copies the list once, with an audit trail', async () => {
    const s = await setup('s01-scale-up-pre-fix.yaml');
    const before = s.mp();
    expect(listOf(before)).toEqual([id('0'), id('1'), id('2')]);

    const preview = await s.svc.run(REF, s.post({ mode: 'sync-provider-ids', dryRun: true }));
    expect(preview).toMatchObject({
      outcome: 'dry-run',
      dryRun: true,
      added: [id('3'), id('4')],
      removed: [],
      audit: { event: null, marker: false },
    });
    expect(preview.objects).toEqual([
      expect.objectContaining({
        kind: 'MachinePool',
        action: 'dry-run',
        resourceVersionBefore: before.metadata?.resourceVersion,
        resourceVersionAfter: null,
      }),
    ]);
    expect(s.mp().metadata?.resourceVersion).toBe(before.metadata?.resourceVersion);
    expect(
      s.h.sim.kube
        .cluster('mgmt-weu')
        .writes.filter((w) => w.resource === 'machinepools')
        .map((w) => w.dryRun),
    ).toEqual([true]);

    const done = await s.svc.run(REF, s.post({ mode: 'sync-provider-ids' }, { headers: { 'idempotency-key': 'k1' } }));
    expect(done).toMatchObject({
      outcome: 'done',
      user: 'operator',
      added: [id('3'), id('4')],
      removed: [],
      replayed: false,
    });
    expect(listOf(s.mp())).toEqual([id('0'), id('1'), id('2'), id('3'), id('4')]);
    expect(done.objects[0]?.resourceVersionAfter).toBe(s.mp().metadata?.resourceVersion);
    expect(done.message).toMatch(/2 IDs added, 0 removed/);

    // Audit: a Kubernetes Event on the MachinePool naming the user and mode, a timeline marker, a log line.
    const events = s.h.sim.kube
      .cluster('mgmt-weu')
      .store.list(EVENT, { namespace: 'default' })
      .items.filter((e) => e.reason === 'PoolscopeResync');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'Normal',
      involvedObject: { kind: 'MachinePool', name: 'pool0' },
      metadata: { name: done.audit.event },
    });
    expect(String(events[0]?.message)).toMatch(
      /^operator \(bearer-token\) ran Copy providerIDs \(sync-provider-ids\): done/,
    );
    const markers = (await s.h.store.timeline(POOL, '2000-01-01T00:00:00Z', '2100-01-01T00:00:00Z')).filter(
      (e) => e.field === 'resync',
    );
    expect(markers).toEqual([
      expect.objectContaining({ to: 'Copy providerIDs by operator: done', detail: done.message }),
    ]);
    expect(s.published).toEqual([expect.objectContaining({ poolKey: POOL, fields: ['resync'] })]);
    expect(s.logs.filter((l) => l.msg === 'resync').map((l) => [l.mode, l.dryRun, l.outcome, l.user])).toEqual([
      ['sync-provider-ids', true, 'dry-run', 'operator'],
      ['sync-provider-ids', false, 'done', 'operator'],
    ]);

    // The same Idempotency-Key again: the stored answer, no second patch.
    const again = await s.svc.run(REF, s.post({ mode: 'sync-provider-ids' }, { headers: { 'idempotency-key': 'k1' } }));
    expect(again).toEqual({ ...done, replayed: true });
    expect(s.mpPatches()).toBe(1);
    // The drift clears in the stored state once the collector sees the new list.
    await until('the drift to clear', async () =>
      (await s.h.store.currentPool(POOL))?.drift.some((d) => d.kind === 'missing-from-machinepool') === false
        ? true
        : undefined,
    );
  }, 60_000);

  it('patches once for two concurrent clicks with the same key, and refuses a second resync while one runs', async () => {
    const s = await setup('s01-scale-up-pre-fix.yaml');
    const [a, b] = await Promise.all([
      s.svc.run(REF, s.post({ mode: 'sync-provider-ids' }, { headers: { 'idempotency-key': 'double' } })),
      s.svc.run(REF, s.post({ mode: 'sync-provider-ids' }, { headers: { 'idempotency-key': 'double' } })),
    ]);
    expect(s.mpPatches()).toBe(1);
    expect(a.objects).toEqual(b.objects);
    expect([a.replayed, b.replayed].sort()).toEqual([false, true]);
    // A key reused for another request is an error, not a silent replay.
    expect(
      await refusal(s.svc.run(REF, s.post({ mode: 'reconcile' }, { headers: { 'idempotency-key': 'double' } }))),
    ).toMatchObject({ status: 422, code: 'idempotency-key-reused' });

    // A reconcile holds the pool while it watches for the controllers' answer: a second one is refused.
    const first = s.svc.run(REF, s.post({ mode: 'reconcile' }, { headers: { 'idempotency-key': 'r1' } }));
    await until('the first reconcile to annotate', () =>
      s.h.sim.kube.cluster('mgmt-weu').store.get(AMP, 'default', 'pool0').metadata?.annotations?.[RESYNC_ANNOTATION]
        ? true
        : undefined,
    );
    const second = await refusal(
      s.svc.run(REF, s.post({ mode: 'reconcile' }, { headers: { 'idempotency-key': 'r2' } })),
    );
    expect(second).toMatchObject({ status: 409, code: 'resync-running' });
    expect(second.message).toMatch(/A Reconcile \(reconcile\) started by operator at .* is still running/);
    expect((await first).outcome).toBe('done');
  }, 60_000);

  it('never overwrites a controller that wrote the list first', async () => {
    const s = await setup('s01-scale-up-pre-fix.yaml');
    const server = s.h.sim.kube.cluster('mgmt-weu');
    const controllerList = [id('0'), id('1')];
    server.beforeWrite = (w) => {
      if (w.resource !== 'machinepools' || w.verb !== 'patch' || w.dryRun) return;
      server.beforeWrite = null;
      const cur = server.store.get(MP, 'default', 'pool0');
      server.store.update(MP, 'default', 'pool0', { ...cur, spec: { ...cur.spec, providerIDList: controllerList } });
    };
    const r = await refusal(s.svc.run(REF, s.post({ mode: 'sync-provider-ids' })));
    expect(r).toMatchObject({ status: 409, code: 'concurrent-write' });
    expect(r.message).toMatch(/Nothing was overwritten/);
    expect(listOf(s.mp())).toEqual(controllerList);
  }, 60_000);

  it('says what was and was not done when the second write fails', async () => {
    const s = await setup('s01-scale-up-pre-fix.yaml');
    const server = s.h.sim.kube.cluster('mgmt-weu');
    server.beforeWrite = (w) => {
      if (w.resource === 'machinepools' && w.verb === 'patch')
        throw new ApiError(500, 'InternalError', 'etcdserver: request timed out');
    };
    const r = await s.svc.run(REF, s.post({ mode: 'reconcile' }));
    expect(r.outcome).toBe('partial');
    expect(r.objects.map((o) => [o.kind, o.action])).toEqual([
      ['AzureMachinePool', 'patched'],
      ['MachinePool', 'failed'],
    ]);
    expect(r.objects[1]?.error).toMatch(/etcdserver: request timed out/);
    expect(r.message).toMatch(/^Partly done: the AzureMachinePool was annotated .* but the MachinePool was not/);
    expect(server.store.get(AMP, 'default', 'pool0').metadata?.annotations?.[RESYNC_ANNOTATION]).toBeTruthy();
    expect(s.mp().metadata?.annotations?.[RESYNC_ANNOTATION]).toBeUndefined();
    // The audit says so too: a Warning Event.
    const ev = server.store.list(EVENT, { namespace: 'default' }).items.find((e) => e.reason === 'PoolscopeResync');
    expect(ev).toMatchObject({ type: 'Warning' });
  }, 60_000);

  it('rate-limits writes per pool, saying when to come back', async () => {
    const s = await setup('s01-scale-up-pre-fix.yaml');
    await s.svc.run(REF, s.post({ mode: 'sync-provider-ids' }));
    // Later attempts are refused (the lists agree) but still count against the pool's budget.
    for (let i = 0; i < 3; i++)
      expect((await refusal(s.svc.run(REF, s.post({ mode: 'sync-provider-ids' })))).code).toBe('resync-refused');
    const limited = await refusal(s.svc.run(REF, s.post({ mode: 'sync-provider-ids' })));
    expect(limited).toMatchObject({ status: 429, code: 'rate-limited' });
    expect(limited.message).toMatch(/try again in \d+ s/);
  }, 60_000);
});

describe('a confirm acts only on the verdict its operator saw', () => {
  it('answers 409 verdict-changed with the new preview, writing nothing, when the pool changed since the preview', async () => {
    const s = await setup('s01-scale-up-pre-fix.yaml');
    const preview = await s.svc.run(REF, s.post({ mode: 'sync-provider-ids', dryRun: true }));
    expect(preview.added).toEqual([id('3'), id('4')]);
    // A fresh status names the same verdict as the preview.
    const status = await s.svc.status(REF, s.post({}).headers, { fresh: true });
    expect(status).toMatchObject({ verdictSource: 'fresh', verdictDigest: preview.verdictDigest });

    // Someone copies one of the two IDs by hand before the operator confirms.
    const server = s.h.sim.kube.cluster('mgmt-weu');
    const cur = s.mp();
    server.store.update(MP, 'default', 'pool0', {
      ...cur,
      spec: { ...cur.spec, providerIDList: [id('0'), id('1'), id('2'), id('3')] },
    });
    const rv = s.mp().metadata?.resourceVersion;
    const stale = { mode: 'sync-provider-ids', verdictDigest: preview.verdictDigest };
    let changed: unknown;
    try {
      await s.svc.run(REF, s.post(stale, { headers: { 'idempotency-key': 'c1' } }));
    } catch (e) {
      changed = e;
    }
    expect(changed).toBeInstanceOf(HttpError);
    const e = changed as HttpError;
    expect([e.status, e.code]).toEqual([409, 'verdict-changed']);
    expect(e.message).toMatch(/^The pool changed since the preview you confirmed, so nothing was done\./);
    const next = (e.extra as { preview: { verdict: ResyncVerdict; verdictDigest: string; dryRun: ResyncResult } })
      .preview;
    expect(next.verdictDigest).not.toBe(preview.verdictDigest);
    expect(next.verdict.syncProviderIds).toMatchObject({ allowed: true, wouldAdd: [id('4')], wouldRemove: [] });
    expect(next.dryRun).toMatchObject({ outcome: 'dry-run', added: [id('4')], verdictDigest: next.verdictDigest });
    // Nothing written: the list and its resourceVersion as the hand edit left them, no Event, no marker.
    expect(s.mp().metadata?.resourceVersion).toBe(rv);
    expect(s.mpPatches()).toBe(0);
    expect(
      server.store.list(EVENT, { namespace: 'default' }).items.filter((x) => x.reason === 'PoolscopeResync'),
    ).toEqual([]);
    expect(s.published).toEqual([]);
    expect(s.logs.filter((l) => l.error === 'verdict-changed')).toHaveLength(1);

    // Confirming the new preview (even with the same Idempotency-Key) does it.
    const done = await s.svc.run(
      REF,
      s.post({ ...stale, verdictDigest: next.verdictDigest }, { headers: { 'idempotency-key': 'c1' } }),
    );
    expect(done).toMatchObject({ outcome: 'done', added: [id('4')], verdictDigest: next.verdictDigest });
    expect(done.steps.map((x) => x.code)).toEqual(['checked', 'list-written']);
    expect(listOf(s.mp())).toEqual([id('0'), id('1'), id('2'), id('3'), id('4')]);
  }, 60_000);

  it('refuses a malformed verdictDigest with 400, and a fresh status to a viewer stays collected', async () => {
    const s = await setup('s01-scale-up-pre-fix.yaml');
    expect(
      await refusal(s.svc.run(REF, s.post({ mode: 'sync-provider-ids', verdictDigest: 'not-a-digest' }))),
    ).toMatchObject({
      status: 400,
      code: 'invalid-body',
      message: expect.stringMatching(/"verdictDigest": must be the verdictDigest of a preview/),
    });
    expect(await refusal(s.svc.run(REF, s.post({ mode: 'reconcile', verdictDigest: 7 })))).toMatchObject({
      status: 400,
      code: 'invalid-body',
    });
    const viewer = await s.svc.status(REF, s.post({}, { user: 'viewer' }).headers, { fresh: true });
    expect(viewer).toMatchObject({ verdictSource: 'collected', verdictDigest: null });
    expect(s.mpPatches()).toBe(0);
  }, 60_000);
});

describe('reconcile on the seed scenario', () => {
  it('annotates both objects and reports that the readiness gate is still closed', async () => {
    const s = await setup('seed-scale-up-frozen.yaml', { speed: 5 });
    // Wait for the freeze: the AzureMachinePool not ready, its list ahead of the MachinePool's.
    await until(
      'the freeze',
      () => {
        const amp = s.h.sim.kube.cluster('mgmt-weu').store.get(AMP, 'default', 'pool0');
        return (amp.status as { ready?: boolean }).ready === false && listOf(amp).length > listOf(s.mp()).length
          ? true
          : undefined;
      },
      40_000,
    );
    // While the POST waits for the controllers, the pool's status shows its steps as they happen.
    const seen: string[][] = [];
    let last: { code: string }[] = [];
    let settled = false;
    const running = s.svc.run(REF, s.post({ mode: 'reconcile' })).finally(() => {
      settled = true;
    });
    while (!settled) {
      const st = await s.svc.status(REF, s.post({}).headers);
      if (!settled && st.running) seen.push((last = st.running.steps).map((x) => x.code));
      await new Promise((r) => setTimeout(r, 200));
    }
    const r = await running;
    expect(seen.some((codes) => codes.includes('amp-annotated') && codes.includes('watching'))).toBe(true);
    expect(seen.every((codes) => !codes.includes('finished'))).toBe(true);
    // The running view's steps as the run left them, the audit written too: 'finished' is the answer's alone.
    expect(last.map((x) => x.code)).not.toContain('finished');
    const codes = r.steps.map((x) => x.code);
    expect(codes.slice(0, 4)).toEqual(['checked', 'amp-annotated', 'mp-annotated', 'watching']);
    expect(codes.at(-1)).toBe('finished');
    expect(r.steps.at(-1)?.text).toMatch(/^Finished after [\d.]+ s\. .*still not ready/);
    expect(r.steps.map((x) => x.at)).toEqual([...r.steps.map((x) => x.at)].sort());
    const amp = s.h.sim.kube.cluster('mgmt-weu').store.get(AMP, 'default', 'pool0');
    const value = amp.metadata?.annotations?.[RESYNC_ANNOTATION];
    expect(value).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
    expect(s.mp().metadata?.annotations?.[RESYNC_ANNOTATION]).toBe(value);
    expect(r.objects.map((o) => [o.kind, o.action])).toEqual([
      ['AzureMachinePool', 'patched'],
      ['MachinePool', 'patched'],
    ]);
    expect(r.outcome).toBe('done');
    expect(r.observed).toMatchObject({ ampReady: false, listsAgree: false });
    expect(r.observed?.summary).toMatch(/still not ready: CAPI's readiness gate stays closed/);
  }, 90_000);
});

describe('refusals, each with its reason', () => {
  it.each([
    ['s09-paused.yaml', /paused; controllers ignore it/],
    ['s13-empty-infra-list.yaml', /list is empty while replicas > 0; copying it would drop every instance/],
    ['s06-case-mismatch.yaml', /disagree on the case of some providerIDs/],
  ])(
    '%s',
    async (scenario, reason) => {
      const s = await setup(scenario);
      const r = await refusal(s.svc.run(REF, s.post({ mode: 'sync-provider-ids' })));
      expect(r).toMatchObject({ status: 409, code: 'resync-refused' });
      expect(r.message).toMatch(reason);
      expect(s.mpPatches()).toBe(0);
    },
    60_000,
  );

  it('refuses to copy IDs that Azure no longer has (it would add ghosts)', async () => {
    const s = await setup('s01-scale-up-pre-fix.yaml');
    const rec = s.h.sim.azure.state.get(DEFAULT_AZURE.subscriptionId, DEFAULT_AZURE.resourceGroup, 'pool0');
    expect(rec && s.h.sim.azure.state.deleteVm(rec, '4')).toBe(true);
    const r = await refusal(s.svc.run(REF, s.post({ mode: 'sync-provider-ids', dryRun: true })));
    expect(r).toMatchObject({ status: 409, code: 'resync-refused' });
    expect(r.message).toMatch(/holds 1 ID absent from Azure; copying it would add ghosts/);
  }, 60_000);

  it('refuses while the MachinePool or the Cluster is being deleted', async () => {
    const s = await setup('s01-scale-up-pre-fix.yaml');
    const store = s.h.sim.kube.cluster('mgmt-weu').store;
    const hold = (r: ResourceDef, name: string) => {
      const o = store.get(r, 'default', name);
      store.update(r, 'default', name, { ...o, metadata: { ...o.metadata, finalizers: ['test/hold'] } });
      store.delete(r, 'default', name);
    };
    hold(CLUSTER, String(s.mp().spec?.clusterName));
    expect((await refusal(s.svc.run(REF, s.post({ mode: 'reconcile' })))).message).toMatch(
      /The Cluster is being deleted/,
    );
    hold(MP, 'pool0');
    expect((await refusal(s.svc.run(REF, s.post({ mode: 'sync-provider-ids' })))).message).toMatch(
      /The MachinePool is being deleted/,
    );
    expect(s.mpPatches()).toBe(0);
  }, 60_000);
});

describe('who may, and from where', () => {
  it("lets the cluster's RBAC decide: an operator may, a viewer may not, an anonymous caller must sign in", async () => {
    const s = await setup('s01-scale-up-pre-fix.yaml');
    const status = (user: 'operator' | 'viewer' | null) => s.svc.status(REF, s.post({}, { user }).headers);
    expect(await status('operator')).toMatchObject<Partial<ResyncStatus>>({
      readOnly: false,
      identity: expect.objectContaining({ user: 'operator', via: 'bearer-token' }),
      modes: { reconcile: { permitted: true, reason: null }, 'sync-provider-ids': { permitted: true, reason: null } },
    });
    const viewer = await status('viewer');
    expect(viewer.modes['sync-provider-ids']).toEqual({
      permitted: false,
      reason: 'viewer may not patch machinepools.cluster.x-k8s.io "pool0" in namespace default on mgmt-weu.',
    });
    expect((await status(null)).identityProblem).toMatch(/Not signed in/);
    expect(await refusal(s.svc.run(REF, s.post({ mode: 'sync-provider-ids' }, { user: 'viewer' })))).toMatchObject({
      status: 403,
      code: 'forbidden',
    });
    expect(await refusal(s.svc.run(REF, s.post({ mode: 'sync-provider-ids' }, { user: null })))).toMatchObject({
      status: 401,
      code: 'not-signed-in',
    });
    expect(
      await refusal(
        s.svc.run(REF, s.post({ mode: 'sync-provider-ids' }, { headers: { authorization: 'Bearer not-a-token' } })),
      ),
    ).toMatchObject({ status: 401, message: expect.stringMatching(/did not accept the bearer token/) });
    expect(s.mpPatches()).toBe(0);
  }, 60_000);

  it('rejects cross-site and forged requests before reading anything', async () => {
    const s = await setup('s01-scale-up-pre-fix.yaml');
    const body = { mode: 'sync-provider-ids' };
    expect(await refusal(s.svc.run(REF, s.post(body, { headers: { 'sec-fetch-site': 'cross-site' } })))).toMatchObject({
      status: 403,
      code: 'cross-site',
    });
    expect(
      await refusal(
        s.svc.run(REF, s.post(body, { headers: { 'sec-fetch-site': 'same-origin', origin: 'https://evil.example' } })),
      ),
    ).toMatchObject({ status: 403, code: 'cross-site' });
    const noHeader = s.post(body);
    noHeader.headers.delete('x-poolscope-request');
    expect(await refusal(s.svc.run(REF, noHeader))).toMatchObject({ status: 403, code: 'missing-request-header' });
    expect(await refusal(s.svc.run(REF, s.post(body, { headers: { 'content-type': 'text/plain' } })))).toMatchObject({
      status: 415,
    });
    expect(await refusal(s.svc.run(REF, s.post({ mode: 'restart' })))).toMatchObject({
      status: 400,
      code: 'invalid-body',
      message: expect.stringMatching(/"mode": must be "reconcile" or "sync-provider-ids"/),
    });
    expect(await refusal(s.svc.run({ ...REF, context: 'nowhere' }, s.post(body)))).toMatchObject({
      status: 404,
      code: 'unknown-context',
    });
    expect(s.mpPatches()).toBe(0);
  }, 60_000);

  it('takes the user from a trusted auth proxy only with its secret, and writes nothing when read-only', async () => {
    const s = await setup('s01-scale-up-pre-fix.yaml', {
      env: { POOLSCOPE_TRUSTED_PROXY: 'oauth2-proxy', POOLSCOPE_TRUSTED_PROXY_SECRET: SECRET },
    });
    const proxied = (secret: string, user: string, groups: string) =>
      s.post(
        {},
        {
          user: null,
          headers: { 'x-forwarded-user': user, 'x-forwarded-groups': groups, 'x-poolscope-proxy-secret': secret },
        },
      ).headers;
    const ok = await s.svc.status(REF, proxied(SECRET, 'alice@example.com', 'pool-operators'));
    expect(ok.identity).toEqual({
      user: 'alice@example.com',
      groups: ['pool-operators', 'system:authenticated'],
      via: 'proxy:oauth2-proxy',
    });
    expect(ok.modes['sync-provider-ids'].permitted).toBe(true);
    const forged = await s.svc.status(REF, proxied('x'.repeat(40), 'alice@example.com', 'pool-operators'));
    expect(forged).toMatchObject({ identity: null, identityProblem: expect.stringMatching(/secret header is wrong/) });

    const ro = checked(
      buildResyncService({
        env: parseEnv({ POOLSCOPE_READ_ONLY: 'true' }),
        store: s.h.store,
        publish: () => {},
        kubeconfig: s.h.kubeconfig,
        contexts: ['mgmt-weu'],
        readAzure: (r) => s.h.azure.read(r),
        log: () => {},
      }),
    );
    expect(await refusal(ro.run(REF, s.post({ mode: 'sync-provider-ids' })))).toMatchObject({
      status: 403,
      code: 'read-only',
    });
    expect((await ro.status(REF, s.post({}).headers)).modes.reconcile).toEqual({
      permitted: false,
      reason: expect.stringMatching(/read-only/),
    });
    expect(s.mpPatches()).toBe(0);
  }, 60_000);
});
