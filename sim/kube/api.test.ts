// The simulated API server over raw HTTPS: status codes, reasons and semantics as a real server has them.
// Long because it is a table of the API server's answers (a case a row) over one simulated server.

import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/unstructured';
import type { KubeSimulator } from './simulator';
import { startSeedSimulator } from './testing';

let sim: KubeSimulator;

beforeAll(async () => {
  sim = await startSeedSimulator({ historyWindow: 5, bookmarkIntervalMs: 100 });
});
afterAll(async () => {
  await sim?.stop();
});

interface Res {
  status: number;
  body: Record<string, unknown>;
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

function request(
  method: string,
  path: string,
  opts: {
    body?: unknown;
    raw?: string;
    contentType?: string;
    token?: string | null;
    headers?: Record<string, string>;
  } = {},
): Promise<Res> {
  const url = new URL(path, sim.cluster('mgmt-weu').url);
  const token = opts.token === undefined ? sim.tokens.get('admin') : opts.token;
  const payload = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method,
        ca: sim.tls.caPem,
        headers: {
          ...(token ? { Authorization: `Bearer ${token}` } : {}),
          ...(payload !== undefined ? { 'Content-Type': opts.contentType ?? 'application/json' } : {}),
          ...opts.headers,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => {
          text += d.toString();
        });
        res.on('end', () => {
          let body: Record<string, unknown> = {};
          try {
            body = JSON.parse(text) as Record<string, unknown>;
          } catch {
            /* not JSON */
          }
          resolve({ status: res.statusCode ?? 0, body, text, headers: res.headers });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Opens a watch and collects events until `count` arrived or the stream ends. */
function watch(
  path: string,
  count: number,
  timeoutMs = 5000,
): Promise<{ type: string; object: Record<string, unknown> }[]> {
  const url = new URL(path, sim.cluster('mgmt-weu').url);
  return new Promise((resolve, reject) => {
    const events: { type: string; object: Record<string, unknown> }[] = [];
    let buf = '';
    const req = https.request(
      url,
      { ca: sim.tls.caPem, headers: { Authorization: `Bearer ${sim.tokens.get('admin')}` } },
      (res) => {
        res.on('data', (d: Buffer) => {
          buf += d.toString();
          let i;
          while ((i = buf.indexOf('\n')) >= 0) {
            events.push(JSON.parse(buf.slice(0, i)) as { type: string; object: Record<string, unknown> });
            buf = buf.slice(i + 1);
          }
          if (events.length >= count) {
            req.destroy();
            resolve(events);
          }
        });
        res.on('end', () => resolve(events));
      },
    );
    req.on('error', (e) => (events.length >= count ? resolve(events) : reject(e)));
    setTimeout(() => {
      req.destroy();
      resolve(events);
    }, timeoutMs);
    req.end();
  });
}

const MP = '/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinepools';
const AMP = '/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/default/azuremachinepools';

function status(code: number, reason: string) {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason };
}

describe('discovery', () => {
  it('serves /version, /api, /apis and group resource lists with short names and subresources', async () => {
    expect((await request('GET', '/version')).body).toMatchObject({ major: '1', minor: '33' });
    expect((await request('GET', '/api')).body).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    const apis = (await request('GET', '/apis')).body as {
      groups: { name: string; preferredVersion: { version: string } }[];
    };
    expect(apis.groups.find((g) => g.name === 'cluster.x-k8s.io')?.preferredVersion.version).toBe('v1beta2');
    const infra = (await request('GET', '/apis/infrastructure.cluster.x-k8s.io/v1beta1')).body as {
      resources: { name: string; shortNames?: string[]; namespaced: boolean }[];
    };
    expect(infra.resources.filter((r) => r.shortNames).map((r) => [r.name, r.shortNames])).toEqual([
      ['azuremachinepools', ['amp']],
      ['azuremachinepoolmachines', ['ampm']],
      ['azuremanagedmachinepools', ['ammp']],
      ['azureclusters', ['azc']],
    ]);
    expect(infra.resources.map((r) => r.name)).toContain('azuremachinepools/status');
    const capi = (await request('GET', '/apis/cluster.x-k8s.io/v1beta1')).body as {
      resources: { name: string; shortNames?: string[] }[];
    };
    expect(capi.resources.find((r) => r.name === 'machinepools')?.shortNames).toEqual(['mp']);
  });
});

describe('errors, as a real API server sends them', () => {
  it.each<[string, () => Promise<Res>, number, string, string?]>([
    ['401 without a token', () => request('GET', MP, { token: null }), 401, 'Unauthorized'],
    ['401 with a wrong token', () => request('GET', MP, { token: 'nope' }), 401, 'Unauthorized'],
    [
      '403 when the policy forbids',
      () => request('DELETE', `${MP}/pool0`, { token: sim.tokens.get('viewer') }),
      403,
      'Forbidden',
      'machinepools.cluster.x-k8s.io "pool0" is forbidden: User "viewer" cannot delete resource "machinepools" in API group "cluster.x-k8s.io" in the namespace "default"',
    ],
    [
      '404 for an unknown resource',
      () => request('GET', '/apis/cluster.x-k8s.io/v1beta2/namespaces/default/foos'),
      404,
      'NotFound',
      'the server could not find the requested resource',
    ],
    [
      '404 for a missing object',
      () => request('GET', `${MP}/nope`),
      404,
      'NotFound',
      'machinepools.cluster.x-k8s.io "nope" not found',
    ],
    ['400 for malformed JSON', () => request('POST', MP, { raw: '{"kind":' }), 400, 'BadRequest'],
    [
      '400 for an invalid label selector',
      () => request('GET', `${MP}?labelSelector=${encodeURIComponent('a in (b')}`),
      400,
      'BadRequest',
    ],
    [
      '400 for an unsupported field selector',
      () => request('GET', `${MP}?fieldSelector=spec.replicas%3D3`),
      400,
      'BadRequest',
      'field label not supported: spec.replicas',
    ],
    [
      '400 for an invalid dryRun value',
      () => request('DELETE', `${MP}/pool0?dryRun=Yes`),
      400,
      'BadRequest',
      'Invalid dryRun value: Yes',
    ],
    [
      '413 for a body past the limit, a DeleteOptions body too',
      () => {
        // Node's client sends a DELETE's body only with a length (it is not chunked by default).
        const raw = `{"kind":"DeleteOptions","x":"${'a'.repeat(4 << 20)}"}`;
        return request('DELETE', `${MP}/pool0`, { raw, headers: { 'Content-Length': String(raw.length) } });
      },
      413,
      'BadRequest',
      'request entity too large',
    ],
    [
      '409 for an existing name',
      () =>
        request('POST', '/api/v1/namespaces', {
          body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } },
        }),
      409,
      'AlreadyExists',
      'namespaces "default" already exists',
    ],
    [
      '415 for an unknown patch type',
      () => request('PATCH', `${MP}/pool0`, { body: {}, contentType: 'text/plain' }),
      415,
      'UnsupportedMediaType',
    ],
    [
      '415 for a strategic merge patch on a custom resource',
      () => request('PATCH', `${MP}/pool0`, { body: {}, contentType: 'application/strategic-merge-patch+json' }),
      415,
      'UnsupportedMediaType',
    ],
    [
      '422 for an invalid name',
      () =>
        request('POST', '/api/v1/namespaces', {
          body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'Not_Valid' } },
        }),
      422,
      'Invalid',
    ],
    [
      '422 for an update without a resourceVersion',
      async () => {
        const cur = (await request('GET', `${AMP}/pool0`)).body;
        return request('PUT', `${AMP}/pool0`, {
          body: { ...cur, metadata: { ...(cur.metadata as object), resourceVersion: undefined } },
        });
      },
      422,
      'Invalid',
    ],
  ])('%s', async (_name, call, code, reason, message) => {
    const r = await call();
    expect(r.status).toBe(code);
    expect(r.body).toMatchObject(status(code, reason));
    if (message) expect(r.body.message).toBe(message);
  });

  it('422 for a schema-violating custom object, when the upstream CRDs are available', async () => {
    const r = await request('POST', AMP, {
      body: {
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
        kind: 'AzureMachinePool',
        metadata: { name: 'x' },
        spec: { location: 5 },
      },
    });
    if (!sim.schemaValidation) {
      expect(r.status).toBe(201); // validation off without the CRDs, as the simulator says at start
      return;
    }
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject(status(422, 'Invalid'));
    expect(r.body.message).toContain('spec.location: must be string');
  });
});

describe('writes', () => {
  it('ignores status on the main resource and everything but status on /status', async () => {
    const cur = (await request('GET', `${AMP}/pool0`)).body as KubeObject;
    const put = await request('PUT', `${AMP}/pool0`, {
      body: { ...cur, spec: { ...cur.spec, location: 'northeurope' }, status: { ...cur.status, ready: true } },
    });
    expect(put.status).toBe(200);
    expect((put.body.spec as Record<string, unknown>).location).toBe('northeurope');
    expect((put.body.status as Record<string, unknown>).ready).toBe(false);
    expect((put.body.metadata as Record<string, unknown>).generation).toBe(2);

    const st = await request('PATCH', `${AMP}/pool0/status`, {
      body: { spec: { location: 'eastus' }, status: { ready: true } },
      contentType: 'application/merge-patch+json',
    });
    expect(st.status).toBe(200);
    expect((st.body.spec as Record<string, unknown>).location).toBe('northeurope');
    expect((st.body.status as Record<string, unknown>).ready).toBe(true);
    expect((st.body.metadata as Record<string, unknown>).generation).toBe(2);
  });

  it('rejects a stale resourceVersion with 409 Conflict', async () => {
    const cur = (await request('GET', `${MP}/pool0`)).body as KubeObject;
    await request('PATCH', `${MP}/pool0`, {
      body: { metadata: { annotations: { a: '1' } } },
      contentType: 'application/merge-patch+json',
    });
    const r = await request('PUT', `${MP}/pool0`, { body: cur });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject(status(409, 'Conflict'));
    const p = await request('PATCH', `${MP}/pool0`, {
      body: { metadata: { resourceVersion: cur.metadata?.resourceVersion }, spec: { replicas: 1 } },
      contentType: 'application/merge-patch+json',
    });
    expect(p.status).toBe(409);
  });

  it('applies a JSON patch with a passing test, and refuses one with a failing test (422)', async () => {
    const cur = (await request('GET', `${MP}/pool0`)).body as KubeObject;
    const list = cur.spec?.providerIDList as string[];
    const ok = await request('PATCH', `${MP}/pool0`, {
      contentType: 'application/json-patch+json',
      body: [
        { op: 'test', path: '/spec/providerIDList', value: list },
        { op: 'replace', path: '/spec/providerIDList', value: [...list, 'azure:///x'] },
      ],
    });
    expect(ok.status).toBe(200);
    const bad = await request('PATCH', `${MP}/pool0`, {
      contentType: 'application/json-patch+json',
      body: [
        { op: 'test', path: '/spec/providerIDList', value: list },
        { op: 'replace', path: '/spec/providerIDList', value: list },
      ],
    });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject(status(422, 'Invalid'));
  });

  it('merges a strategic merge patch on a core kind', async () => {
    const r = await request('PATCH', '/api/v1/namespaces/default', {
      contentType: 'application/strategic-merge-patch+json',
      body: { metadata: { labels: { team: 'fleet' } } },
    });
    expect(r.status).toBe(200);
    expect((r.body.metadata as { labels: Record<string, string> }).labels).toMatchObject({ team: 'fleet' });
  });

  it('changes nothing on dryRun=All, but validates and answers as if it had', async () => {
    const before = (await request('GET', `${MP}/pool0`)).body as KubeObject;
    const rv = sim.cluster('mgmt-weu').store.resourceVersion;
    const p = await request('PATCH', `${MP}/pool0?dryRun=All`, {
      body: { spec: { replicas: 42 } },
      contentType: 'application/merge-patch+json',
    });
    expect(p.status).toBe(200);
    expect((p.body.spec as Record<string, unknown>).replicas).toBe(42);
    const d = await request('DELETE', `${MP}/pool0?dryRun=All`);
    expect(d.status).toBe(200);
    const c = await request('POST', '/api/v1/namespaces?dryRun=All', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'dry' } },
    });
    expect(c.status).toBe(201);
    expect((await request('GET', '/api/v1/namespaces/dry')).status).toBe(404);
    expect((await request('GET', `${MP}/pool0`)).body).toEqual(before);
    expect(sim.cluster('mgmt-weu').store.resourceVersion).toBe(rv);
  });
});

describe('lists', () => {
  it('filters by equality and set-based label selectors and by field selector', async () => {
    const names = async (q: string) =>
      (
        (await request('GET', `/apis/infrastructure.cluster.x-k8s.io/v1beta1/azuremachinepoolmachines?${q}`)).body
          .items as KubeObject[]
      ).map((i) => i.metadata?.name);
    expect(await names(`labelSelector=${encodeURIComponent('cluster.x-k8s.io/pool-name=pool0')}`)).toHaveLength(5);
    expect(await names(`labelSelector=${encodeURIComponent('cluster.x-k8s.io/pool-name in (pool1,pool2)')}`)).toEqual(
      [],
    );
    expect(await names(`labelSelector=${encodeURIComponent('!cluster.x-k8s.io/pool-name')}`)).toEqual([]);
    expect(await names(`fieldSelector=${encodeURIComponent('metadata.name=pool0-3')}`)).toEqual(['pool0-3']);
    expect(await names(`fieldSelector=${encodeURIComponent('metadata.namespace!=default')}`)).toEqual([]);
  });

  it('paginates with limit and continue', async () => {
    const base = '/apis/infrastructure.cluster.x-k8s.io/v1beta1/azuremachinepoolmachines?limit=2';
    const seen: string[] = [];
    let cont = '';
    for (let i = 0; i < 5; i++) {
      const r = (await request('GET', cont ? `${base}&continue=${cont}` : base)).body as {
        items: KubeObject[];
        metadata: { continue?: string; remainingItemCount?: number };
      };
      seen.push(...r.items.map((x) => x.metadata?.name ?? ''));
      if (!r.metadata.continue) break;
      cont = r.metadata.continue;
    }
    expect(seen).toEqual(['pool0-0', 'pool0-1', 'pool0-2', 'pool0-3', 'pool0-4']);
    const bad = await request('GET', `${base}&continue=garbage`);
    expect(bad.status).toBe(400);
  });

  it("reports the first page's resourceVersion on every page, and expires a token older than the watch history", async () => {
    const base = '/apis/infrastructure.cluster.x-k8s.io/v1beta1/azuremachinepoolmachines?limit=2';
    const first = (await request('GET', base)).body as { metadata: { resourceVersion: string; continue: string } };
    await request('PATCH', `${MP}/pool0`, {
      body: { metadata: { annotations: { page: '1' } } },
      contentType: 'application/merge-patch+json',
    });
    const second = (await request('GET', `${base}&continue=${first.metadata.continue}`)).body as {
      metadata: { resourceVersion: string };
    };
    expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    expect(Number(sim.cluster('mgmt-weu').store.resourceVersion)).toBeGreaterThan(
      Number(first.metadata.resourceVersion),
    );
    sim.cluster('mgmt-weu').store.compact();
    await request('PATCH', `${MP}/pool0`, {
      body: { metadata: { annotations: { page: '2' } } },
      contentType: 'application/merge-patch+json',
    });
    const expired = await request('GET', `${base}&continue=${first.metadata.continue}`);
    expect(expired.status).toBe(410);
    expect(expired.body.reason).toBe('Expired');
  });
});

describe('watch', () => {
  it('sends current objects as ADDED when no resourceVersion is given, then changes', async () => {
    const events = watch(`${MP}?watch=true`, 2);
    await new Promise((r) => setTimeout(r, 100));
    await request('PATCH', `${MP}/pool0`, {
      body: { metadata: { annotations: { w: '1' } } },
      contentType: 'application/merge-patch+json',
    });
    expect((await events).map((e) => e.type)).toEqual(['ADDED', 'MODIFIED']);
  });

  it('resumes from a resourceVersion, and answers 410 Expired past the history window', async () => {
    const rv = sim.cluster('mgmt-weu').store.resourceVersion;
    for (let i = 0; i < 3; i++)
      await request('PATCH', `${MP}/pool0`, {
        body: { metadata: { annotations: { n: String(i) } } },
        contentType: 'application/merge-patch+json',
      });
    const resumed = await watch(`${MP}?watch=true&resourceVersion=${rv}`, 3);
    expect(resumed.map((e) => (e.object.metadata as { annotations: Record<string, string> }).annotations.n)).toEqual([
      '0',
      '1',
      '2',
    ]);
    for (let i = 0; i < 6; i++)
      await request('PATCH', `${MP}/pool0`, {
        body: { metadata: { annotations: { n: `x${i}` } } },
        contentType: 'application/merge-patch+json',
      });
    const gone = await watch(`${MP}?watch=true&resourceVersion=${rv}`, 1);
    expect(gone).toEqual([
      { type: 'ERROR', object: expect.objectContaining({ kind: 'Status', code: 410, reason: 'Expired' }) as unknown },
    ]);
  });

  it('sends bookmarks when asked, and ends at timeoutSeconds', async () => {
    const start = Date.now();
    const events = await watch(
      `${MP}?watch=true&allowWatchBookmarks=true&timeoutSeconds=1&resourceVersion=${sim.cluster('mgmt-weu').store.resourceVersion}`,
      100,
      5000,
    );
    expect(Date.now() - start).toBeLessThan(3000);
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((e) => e.type === 'BOOKMARK')).toBe(true);
  });

  it('converts watched objects to the requested version', async () => {
    const events = await watch('/apis/cluster.x-k8s.io/v1beta1/namespaces/default/machinepools?watch=true', 1);
    expect(events[0]?.object).toMatchObject({
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      status: { infrastructureReady: false },
    });
  });
});

describe('access reviews', () => {
  it('answers a SubjectAccessReview from the policy', async () => {
    const review = (user: string, verb: string, namespace = 'default', groups: string[] = []) =>
      request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user,
            groups,
            resourceAttributes: { verb, group: 'cluster.x-k8s.io', resource: 'machinepools', namespace },
          },
        },
      });
    expect(((await review('viewer', 'list')).body.status as { allowed: boolean }).allowed).toBe(true);
    expect(((await review('viewer', 'patch')).body.status as { allowed: boolean }).allowed).toBe(false);
    expect(
      ((await review('alice', 'patch', 'default', ['pool-operators'])).body.status as { allowed: boolean }).allowed,
    ).toBe(true);
    expect(
      ((await review('alice', 'patch', 'kube-system', ['pool-operators'])).body.status as { allowed: boolean }).allowed,
    ).toBe(false);
  });

  it("answers a TokenReview with the token's user and groups, and only for those allowed to ask", async () => {
    const review = (token: string, as?: string) =>
      request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
        ...(as ? { token: sim.tokens.get(as) } : {}),
      });
    const ok = await review(sim.tokens.get('operator') as string);
    expect(ok.status).toBe(201);
    expect(ok.body.status).toEqual({
      authenticated: true,
      user: { username: 'operator', uid: 'sim-operator', groups: ['pool-operators', 'system:authenticated'] },
    });
    expect((await review('no-such-token')).body.status).toEqual({
      authenticated: false,
      error: 'invalid bearer token',
    });
    expect((await review(sim.tokens.get('admin') as string, 'viewer')).status).toBe(403);
  });

  it('logs every write, and lets a test act just before one is applied', async () => {
    const server = sim.cluster('mgmt-weu');
    const seen: string[] = [];
    server.beforeWrite = (w) => {
      seen.push(`${w.verb} ${w.resource}/${w.name} by ${w.user}${w.dryRun ? ' (dry run)' : ''}`);
    };
    await request('PATCH', `${MP}/pool0?dryRun=All`, {
      body: { metadata: { annotations: { a: 'b' } } },
      contentType: 'application/merge-patch+json',
    });
    server.beforeWrite = null;
    expect(seen).toEqual(['patch machinepools/pool0 by admin (dry run)']);
    expect(server.writes.at(-1)).toMatchObject({
      verb: 'patch',
      resource: 'machinepools',
      name: 'pool0',
      dryRun: true,
    });
  });

  it('honours impersonation only for those allowed to impersonate', async () => {
    const asViewer = await request('DELETE', `${MP}/pool0`, { headers: { 'Impersonate-User': 'viewer' } });
    expect(asViewer.status).toBe(403);
    expect(asViewer.body.message).toContain('User "viewer" cannot delete');
    const byViewer = await request('GET', MP, {
      token: sim.tokens.get('viewer'),
      headers: { 'Impersonate-User': 'admin' },
    });
    expect(byViewer.status).toBe(403);
    expect(byViewer.body.message).toContain('cannot impersonate');
  });
});
