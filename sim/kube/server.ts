// One simulated Kubernetes API server over HTTPS: discovery, the REST verbs on every resource of the
// resource table, watch streams, tables for kubectl, authentication, authorization and impersonation.

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import http2, { type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import type { KubeObject } from '../../lib/unstructured';
import { Authorizer, forbiddenMessage, type PolicyRule, type ResourceAttributes, type UserInfo } from './auth';
import { ApiError, badRequest } from './errors';
import { evalJsonPath } from './jsonpath';
import { applyPatch, PATCH_TYPES, type PatchType } from './patch';
import { decodeKubeProtobuf, PROTOBUF_KINDS, ProtobufError } from './protobuf';
import { apiVersionOf, findByPlural, RESOURCES, storageVersion, type ResourceDef } from './resources';
import { applyScale, scaleOf } from './scale';
import { parseFieldSelector, parseLabelSelector, SelectorError } from './selectors';
import type { ClusterStore, StoredEvent, WriteOptions } from './store';

export interface ApiServerOptions {
  name: string;
  store: ClusterStore;
  tls: { certPem: string; keyPem: string };
  /** bearer token → identity */
  tokens: Record<string, UserInfo>;
  policy: PolicyRule[];
  port?: number;
  host?: string;
  /** How often watches with allowWatchBookmarks get a BOOKMARK (ms). */
  bookmarkIntervalMs?: number;
  /** Kubernetes version the server reports. */
  gitVersion?: string;
}

/** One write request as the server received it (kept for tests and for `beforeWrite`). */
export interface WriteRecord {
  verb: string;
  group: string;
  resource: string;
  namespace?: string;
  name?: string;
  /** `status` or `scale` for a write to a subresource. */
  subresource?: string;
  user: string;
  dryRun: boolean;
}

interface Route {
  resource: ResourceDef;
  version: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

const MAX_BODY = 3 * 1024 * 1024;

/** A request and its response over HTTP/2 or HTTP/1.1 (the server speaks both, as an API server does: kubectl and client-go use HTTP/2). */
type Req = IncomingMessage | Http2ServerRequest;
type Res = ServerResponse | Http2ServerResponse;

/** API groups Kubernetes itself serves (not CRDs). */
const BUILT_IN_GROUPS = new Set([
  '',
  'apps',
  'policy',
  'rbac.authorization.k8s.io',
  'coordination.k8s.io',
  'events.k8s.io',
  'authorization.k8s.io',
  'authentication.k8s.io',
]);

function send(res: Res, code: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function sendError(res: Res, e: ApiError): void {
  send(res, e.code, e.toStatus());
}

/** A Kubernetes protobuf body's JSON form; a kind (or a set field) the decoder has no table for is a 415 that names it. */
function decodeProtobufBody(raw: Buffer): unknown {
  try {
    return decodeKubeProtobuf(raw);
  } catch (e) {
    if (!(e instanceof ProtobufError)) throw e;
    if (!e.unsupported) throw badRequest(`the request body could not be decoded: ${e.message}`);
    throw new ApiError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml ` +
        `(this simulator decodes application/vnd.kubernetes.protobuf for ${PROTOBUF_KINDS.join(', ')}; ${e.message}: send it as application/json)`,
    );
  }
}

/**
 * Reads a JSON body, or a Kubernetes protobuf one where `protobuf` says a real server takes it (built-in kinds, and
 * the Scale of a custom resource); custom resources have no protobuf form, so there it is a 415.
 */
async function readBody(req: Req, protobuf = false): Promise<unknown> {
  const ct = req.headers['content-type'] ?? '';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY) throw new ApiError(413, 'BadRequest', 'request entity too large');
    chunks.push(c as Buffer);
  }
  const raw = Buffer.concat(chunks);
  if (protobuf && /protobuf/.test(ct)) return decodeProtobufBody(raw);
  if (/protobuf|cbor/.test(ct)) {
    throw new ApiError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml`,
    );
  }
  const text = raw.toString('utf8');
  if (!text.trim()) throw badRequest('the request body is empty');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw badRequest(`the request body could not be decoded: ${(e as Error).message}`);
  }
}

/** The patch type of a PATCH request; strategic merge is for built-in kinds only (custom resources refuse it, as on a real server). */
function patchTypeOf(req: Req, r: ResourceDef): PatchType {
  const ct = (req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
  const type = PATCH_TYPES[ct as keyof typeof PATCH_TYPES];
  if (!type)
    throw new ApiError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${Object.keys(PATCH_TYPES).join(', ')}`,
    );
  if (type === 'strategic' && !BUILT_IN_GROUPS.has(r.group)) {
    throw new ApiError(
      415,
      'UnsupportedMediaType',
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    );
  }
  return type;
}

function age(ts: unknown): string {
  const ms = Date.now() - Date.parse(String(ts));
  if (!Number.isFinite(ms)) return '<unknown>';
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 120) return `${m}m`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h}h` : `${Math.floor(h / 24)}d`;
}

function wantsTable(req: Req): boolean {
  return /as=Table/.test(req.headers.accept ?? '');
}

function tableFor(r: ResourceDef, items: KubeObject[], rv: string, cont?: string): Record<string, unknown> {
  const cols = r.printerColumns ?? [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }];
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion: rv, ...(cont ? { continue: cont } : {}) },
    columnDefinitions: [
      {
        name: 'Name',
        type: 'string',
        format: 'name',
        description: 'Name must be unique within a namespace.',
        priority: 0,
      },
      ...cols.map((c) => ({
        name: c.name,
        type: c.type === 'date' ? 'string' : c.type,
        format: '',
        description: c.jsonPath,
        priority: c.priority ?? 0,
      })),
    ],
    rows: items.map((o) => ({
      cells: [
        o.metadata?.name ?? '',
        ...cols.map((c) => {
          const v = evalJsonPath(o, c.jsonPath);
          if (c.type === 'date') return v === undefined ? '<unknown>' : age(v);
          return v === undefined ? '' : Array.isArray(v) ? v.join(',') : v;
        }),
      ],
      object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata },
    })),
  };
}

export class SimApiServer {
  readonly name: string;
  readonly store: ClusterStore;
  private server: Http2SecureServer;
  /** Open TLS connections (HTTP/2 sessions and HTTP/1.1 sockets), to close them at stop. */
  private readonly sockets = new Set<Socket>();
  private readonly authz: Authorizer;
  private readonly openStreams = new Map<Res, () => void>();
  private url_ = '';
  /** Requests received, by HTTP version ('2.0', '1.1'), for tests. */
  readonly httpVersions = new Map<string, number>();
  /** Requests served, by verb, for benchmarks and tests. */
  readonly requestCounts = new Map<string, number>();
  /** Every watch request received, with its query (newest last, bounded). */
  readonly watchRequests: { resource: string; query: Record<string, string> }[] = [];
  /** Every write request received (newest last, bounded), including dry runs and access reviews. */
  readonly writes: WriteRecord[] = [];
  /**
   * Fault injection: runs before each write is applied (after authorization). A test uses it to make a
   * "controller" write land between a client's read and its write.
   */
  beforeWrite: ((w: WriteRecord) => void | Promise<void>) | null = null;
  /** When false, every connection is dropped, as for an API server that is down or unreachable. */
  available = true;
  /** TLS connections accepted since start (clients that reuse connections open few), and those open now. */
  connections = { accepted: 0, open: 0 };

  constructor(private readonly opts: ApiServerOptions) {
    this.name = opts.name;
    this.store = opts.store;
    this.authz = new Authorizer(opts.policy);
    // HTTP/2 (offered first, through ALPN) and HTTP/1.1, like a real API server.
    this.server = http2.createSecureServer(
      { cert: opts.tls.certPem, key: opts.tls.keyPem, allowHTTP1: true },
      (req: Req, res: Res) => {
        this.httpVersions.set(req.httpVersion, (this.httpVersions.get(req.httpVersion) ?? 0) + 1);
        if (!this.available) {
          req.socket.destroy();
          return;
        }
        this.handle(req, res).catch((e: unknown) => {
          if (res.headersSent) {
            res.destroy();
            return;
          }
          sendError(
            res,
            e instanceof ApiError ? e : new ApiError(500, 'InternalError', `internal error: ${(e as Error).message}`),
          );
        });
      },
    );
    this.server.on('secureConnection', (socket: Socket) => {
      this.connections.accepted++;
      this.connections.open++;
      this.sockets.add(socket);
      socket.once('close', () => {
        this.connections.open--;
        this.sockets.delete(socket);
      });
    });
  }

  get url(): string {
    return this.url_;
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.opts.port ?? 0, this.opts.host ?? '127.0.0.1', () => resolve());
    });
    const addr = this.server.address() as AddressInfo;
    this.url_ = `https://127.0.0.1:${addr.port}`;
    return this.url_;
  }

  async stop(): Promise<void> {
    for (const close of this.openStreams.values()) close();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Takes the server down (every request's connection is dropped) or brings it back. */
  setAvailable(available: boolean): void {
    this.available = available;
    if (!available) this.resetWatchConnections();
  }

  /** Ends every open watch stream cleanly, as an API server does when a watch times out or it shuts down. */
  dropWatches(): void {
    for (const close of this.openStreams.values()) close();
  }

  /** Cuts every open watch connection mid-stream, as a network failure or a crashed server would. */
  resetWatchConnections(): void {
    for (const s of [...this.openStreams.keys()]) s.destroy();
  }

  private count(verb: string): void {
    this.requestCounts.set(verb, (this.requestCounts.get(verb) ?? 0) + 1);
  }

  private authenticate(req: Req): UserInfo {
    const h = req.headers.authorization ?? '';
    const m = /^Bearer\s+(.+)$/i.exec(h);
    const user = m ? this.opts.tokens[m[1] as string] : undefined;
    if (!user) throw new ApiError(401, 'Unauthorized', 'Unauthorized');
    const asUser = req.headers['impersonate-user'];
    if (typeof asUser !== 'string') return user;
    const check = (resource: string, name: string) => {
      const d = this.authz.authorize(user, { verb: 'impersonate', group: '', resource, name });
      if (!d.allowed)
        throw new ApiError(
          403,
          'Forbidden',
          `${resource} "${name}" is forbidden: User "${user.username}" cannot impersonate resource "${resource}" in API group "" at the cluster scope`,
        );
    };
    check('users', asUser);
    const rawGroups = req.headers['impersonate-group'];
    const groups = rawGroups === undefined ? [] : Array.isArray(rawGroups) ? rawGroups : [rawGroups];
    for (const g of groups) check('groups', g);
    return { username: asUser, groups: [...groups, 'system:authenticated'] };
  }

  /** Requests allowed per policy rule so far (see Authorizer.hits). */
  get policyHits(): ReadonlyMap<PolicyRule, number> {
    return this.authz.hits;
  }

  private authorize(user: UserInfo, a: ResourceAttributes, plural: string): void {
    if (!this.authz.authorize(user, a).allowed)
      throw new ApiError(403, 'Forbidden', forbiddenMessage(user, a, plural), {
        name: a.name,
        group: a.group,
        kind: plural,
      });
  }

  private discovery(path: string): unknown | undefined {
    const groups = [...new Set(RESOURCES.filter((r) => r.group).map((r) => r.group))];
    const groupDoc = (g: string) => {
      const versions = [
        ...new Set(
          RESOURCES.filter((r) => r.group === g).flatMap((r) => r.versions.filter((v) => v.served).map((v) => v.name)),
        ),
      ];
      const preferred =
        RESOURCES.find((r) => r.group === g && r.versions.length > 1) ?? RESOURCES.find((r) => r.group === g);
      const pv = preferred ? storageVersion(preferred) : versions[0];
      return {
        name: g,
        versions: versions.map((v) => ({ groupVersion: `${g}/${v}`, version: v })),
        preferredVersion: { groupVersion: `${g}/${pv}`, version: pv },
      };
    };
    const resourceList = (g: string, v: string) => ({
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: apiVersionOf(g, v),
      resources: RESOURCES.filter((r) => r.group === g && r.versions.some((x) => x.name === v && x.served)).flatMap(
        (r) => [
          {
            name: r.plural,
            singularName: r.singular,
            namespaced: r.namespaced,
            kind: r.kind,
            verbs: r.verbs,
            ...(r.shortNames.length ? { shortNames: r.shortNames } : {}),
            ...(r.categories ? { categories: r.categories } : {}),
            storageVersionHash: Buffer.from(`${r.group}/${r.plural}`).toString('base64').slice(0, 11),
          },
          ...(r.statusSubresource
            ? [
                {
                  name: `${r.plural}/status`,
                  singularName: '',
                  namespaced: r.namespaced,
                  kind: r.kind,
                  verbs: ['get', 'patch', 'update'],
                },
              ]
            : []),
          // kubectl's scale client learns from this entry that the subresource speaks autoscaling/v1 Scale.
          ...(r.scale
            ? [
                {
                  name: `${r.plural}/scale`,
                  singularName: '',
                  namespaced: r.namespaced,
                  group: 'autoscaling',
                  version: 'v1',
                  kind: 'Scale',
                  verbs: ['get', 'patch', 'update'],
                },
              ]
            : []),
        ],
      ),
    });
    if (path === '/version') {
      const gv = this.opts.gitVersion ?? 'v1.33.4';
      const [, major, minor] = /^v(\d+)\.(\d+)/.exec(gv) ?? [];
      return {
        major,
        minor,
        gitVersion: gv,
        gitCommit: 'poolscope-sim',
        gitTreeState: 'clean',
        buildDate: '2026-08-01T00:00:00Z',
        goVersion: 'go1.24.5',
        compiler: 'gc',
        platform: 'linux/amd64',
      };
    }
    if (path === '/openapi/v3') return this.openapiRoot();
    const oa = /^\/openapi\/v3\/(api\/v1|apis\/[^/]+\/[^/]+)$/.exec(path);
    if (oa) return this.openapiGroupVersion(oa[1] as string);
    if (path === '/api')
      return {
        kind: 'APIVersions',
        versions: ['v1'],
        serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: this.url_.replace('https://', '') }],
      };
    if (path === '/api/v1') return resourceList('', 'v1');
    if (path === '/apis') return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map(groupDoc) };
    const m = /^\/apis\/([^/]+)(?:\/([^/]+))?$/.exec(path);
    if (m && groups.includes(m[1] as string)) {
      if (!m[2]) return { kind: 'APIGroup', apiVersion: 'v1', ...groupDoc(m[1] as string) };
      const list = resourceList(m[1] as string, m[2]);
      return list.resources.length ? list : undefined;
    }
    return undefined;
  }

  /** The OpenAPI v3 index kubectl reads to learn that the server validates fields itself. */
  private openapiRoot(): unknown {
    const gvs = new Set<string>();
    for (const r of RESOURCES)
      for (const v of r.versions) if (v.served) gvs.add(r.group ? `apis/${r.group}/${v.name}` : `api/${v.name}`);
    return {
      paths: Object.fromEntries(
        [...gvs].map((gv) => [
          gv,
          { serverRelativeURL: `/openapi/v3/${gv}?hash=${Buffer.from(gv).toString('hex').slice(0, 16)}` },
        ]),
      ),
    };
  }

  /**
   * One group-version's OpenAPI v3 document: paths with the operations and the `fieldValidation` parameter,
   * and an open schema per kind (the server validates against the real CRD schemas itself).
   */
  private openapiGroupVersion(gv: string): unknown {
    const [group, version] = gv.startsWith('api/') ? ['', gv.slice(4)] : (gv.slice(5).split('/') as [string, string]);
    const rs = RESOURCES.filter((r) => r.group === group && r.versions.some((v) => v.name === version && v.served));
    if (rs.length === 0) return undefined;
    const schemaName = (r: ResourceDef) =>
      `${group ? group.split('.').reverse().join('.') : 'io.k8s.api.core'}.${version}.${r.kind}`;
    const paths: Record<string, unknown> = {};
    const param = (name: string) => ({ name, in: 'query', schema: { type: 'string', uniqueItems: true } });
    for (const r of rs) {
      const gvk = { group, version, kind: r.kind };
      const op = (action: string, extra: string[] = []) => ({
        'x-kubernetes-action': action,
        'x-kubernetes-group-version-kind': gvk,
        parameters: [param('dryRun'), param('fieldManager'), ...extra.map(param)],
        responses: {
          200: {
            description: 'OK',
            content: { 'application/json': { schema: { $ref: `#/components/schemas/${schemaName(r)}` } } },
          },
        },
      });
      const base = `/${gv}${r.namespaced ? '/namespaces/{namespace}' : ''}/${r.plural}`;
      paths[base] = { get: op('list'), post: op('post', ['fieldValidation']) };
      paths[`${base}/{name}`] = {
        get: op('get'),
        put: op('put', ['fieldValidation']),
        patch: op('patch', ['fieldValidation', 'force']),
        delete: op('delete'),
      };
    }
    const schemas = Object.fromEntries(
      rs.map((r) => [
        schemaName(r),
        {
          type: 'object',
          'x-kubernetes-group-version-kind': [{ group, version, kind: r.kind }],
          'x-kubernetes-preserve-unknown-fields': true,
        },
      ]),
    );
    return {
      openapi: '3.0.0',
      info: { title: 'Kubernetes', version: this.opts.gitVersion ?? 'v1.33.4' },
      paths,
      components: { schemas },
    };
  }

  private route(path: string): Route | undefined {
    let group = '';
    let version: string;
    let rest: string[];
    const segs = path.split('/').filter(Boolean);
    if (segs[0] === 'api' && segs.length >= 3) {
      version = segs[1] as string;
      rest = segs.slice(2);
    } else if (segs[0] === 'apis' && segs.length >= 4) {
      group = segs[1] as string;
      version = segs[2] as string;
      rest = segs.slice(3);
    } else return undefined;
    let namespace: string | undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3 && rest[2] !== 'status' && rest[2] !== 'finalize') {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    const [plural, name, subresource, ...extra] = rest;
    if (!plural || extra.length) return undefined;
    const resource = findByPlural(group, version, plural);
    if (!resource) return undefined;
    if (namespace && !resource.namespaced) return undefined;
    if (
      subresource &&
      !((subresource === 'status' && resource.statusSubresource) || (subresource === 'scale' && resource.scale))
    )
      return undefined;
    return { resource, version, namespace, name, subresource };
  }

  private async handle(req: Req, res: Res): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://sim');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    res.setHeader('Audit-Id', randomUUID());
    if (path === '/healthz' || path === '/readyz' || path === '/livez') {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end('ok');
      return;
    }
    const user = this.authenticate(req);
    const method = req.method ?? 'GET';
    const doc = method === 'GET' ? this.discovery(path) : undefined;
    if (doc !== undefined) {
      this.count('discovery');
      send(res, 200, doc);
      return;
    }
    const route = this.route(path);
    if (!route) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    const { resource: r } = route;
    const q = url.searchParams;

    const dryRunValues = q.getAll('dryRun');
    if (dryRunValues.some((v) => v !== 'All')) throw badRequest(`Invalid dryRun value: ${dryRunValues.join(',')}`);
    const dryRun = dryRunValues.includes('All');
    const fv = q.get('fieldValidation');
    if (fv && !['Strict', 'Warn', 'Ignore'].includes(fv))
      throw badRequest(`fieldValidation must be one of Strict, Warn, Ignore; got "${fv}"`);
    const warnings: string[] = [];
    const writeOpts = {
      dryRun,
      version: route.version,
      fieldValidation: (fv ?? 'Warn') as 'Strict' | 'Warn' | 'Ignore',
      warnings,
    };
    const warningHeaders = (): Record<string, string> =>
      warnings.length ? { Warning: warnings.map((w) => `299 - "${w.replace(/"/g, '\\"')}"`).join(', ') } : {};

    const isCollection = route.name === undefined;
    let verb: string;
    if (method === 'GET')
      verb = isCollection ? (q.get('watch') === 'true' || q.get('watch') === '1' ? 'watch' : 'list') : 'get';
    else if (method === 'POST' && isCollection) verb = 'create';
    else if (method === 'PUT' && !isCollection) verb = 'update';
    else if (method === 'PATCH' && !isCollection) verb = 'patch';
    else if (method === 'DELETE') verb = isCollection ? 'deletecollection' : 'delete';
    else throw new ApiError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`);
    // A subresource (status, scale) is read, replaced and patched, nothing else.
    if (route.subresource && !['get', 'update', 'patch'].includes(verb))
      throw new ApiError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`);
    if (!r.verbs.includes(verb))
      throw new ApiError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`);
    this.count(verb);
    if (verb !== 'get' && verb !== 'list' && verb !== 'watch') {
      const w: WriteRecord = {
        verb,
        group: r.group,
        resource: r.plural,
        namespace: route.namespace,
        name: route.name,
        ...(route.subresource ? { subresource: route.subresource } : {}),
        user: user.username,
        dryRun,
      };
      this.writes.push(w);
      if (this.writes.length > 10_000) this.writes.shift();
      await this.beforeWrite?.(w);
    }

    if (r.createOnly) {
      const body = (await readBody(req, true)) as KubeObject;
      send(res, 201, this.review(r, body, user));
      return;
    }

    this.authorize(
      user,
      {
        verb,
        group: r.group,
        resource: r.plural,
        subresource: route.subresource,
        namespace: route.namespace,
        name: route.name,
      },
      r.plural,
    );

    let labels;
    let fields;
    try {
      labels = parseLabelSelector(q.get('labelSelector'));
      fields = parseFieldSelector(q.get('fieldSelector'));
    } catch (e) {
      if (e instanceof SelectorError) throw badRequest(e.message);
      throw e;
    }

    if (route.subresource === 'scale') {
      send(res, 200, await this.serveScale(req, r, route, verb, writeOpts), warningHeaders());
      return;
    }

    switch (verb) {
      case 'get': {
        const obj = this.store.get(r, route.namespace, route.name as string, route.version);
        send(res, 200, wantsTable(req) ? tableFor(r, [obj], this.store.resourceVersion) : obj);
        return;
      }
      case 'list': {
        const limitRaw = q.get('limit');
        const limit = limitRaw === null ? undefined : Number(limitRaw);
        if (limit !== undefined && (!Number.isInteger(limit) || limit < 0))
          throw badRequest(`invalid limit "${limitRaw}"`);
        const page = this.store.list(
          r,
          { namespace: route.namespace, labels, fields, limit: limit || undefined, continueToken: q.get('continue') },
          route.version,
        );
        if (wantsTable(req)) {
          send(res, 200, tableFor(r, page.items, page.resourceVersion, page.continueToken));
          return;
        }
        send(res, 200, {
          kind: r.listKind,
          apiVersion: apiVersionOf(r.group, route.version),
          metadata: {
            resourceVersion: page.resourceVersion,
            ...(page.continueToken ? { continue: page.continueToken, remainingItemCount: page.remaining } : {}),
          },
          items: page.items,
        });
        return;
      }
      case 'watch':
        this.serveWatch(req, res, r, route, q, labels, fields);
        return;
      case 'create': {
        const body = (await readBody(req, BUILT_IN_GROUPS.has(r.group))) as KubeObject;
        const obj = this.store.create(r, route.namespace, body, writeOpts);
        send(res, 201, obj, warningHeaders());
        return;
      }
      case 'update': {
        const body = (await readBody(req, BUILT_IN_GROUPS.has(r.group))) as KubeObject;
        const obj = this.store.update(r, route.namespace, route.name as string, body, {
          ...writeOpts,
          subresource: route.subresource as 'status' | undefined,
        });
        send(res, 200, obj, warningHeaders());
        return;
      }
      case 'patch': {
        const type = patchTypeOf(req, r);
        const body = await readBody(req);
        const obj = this.store.patch(r, route.namespace, route.name as string, type, body, {
          ...writeOpts,
          subresource: route.subresource as 'status' | undefined,
        });
        send(res, 200, obj, warningHeaders());
        return;
      }
      case 'delete': {
        let pre: string | undefined;
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        const text = Buffer.concat(chunks).toString('utf8').trim();
        if (text) {
          let opts: { preconditions?: { resourceVersion?: string }; dryRun?: string[] };
          try {
            opts = JSON.parse(text) as typeof opts;
          } catch (e) {
            throw badRequest(`the request body could not be decoded: ${(e as Error).message}`);
          }
          pre = opts.preconditions?.resourceVersion;
          if (opts.dryRun?.includes('All')) writeOpts.dryRun = true;
        }
        const obj = this.store.delete(r, route.namespace, route.name as string, { ...writeOpts, preconditionRv: pre });
        send(res, 200, obj);
        return;
      }
      case 'deletecollection': {
        const page = this.store.list(r, { namespace: route.namespace, labels, fields });
        for (const o of page.items) this.store.delete(r, o.metadata?.namespace, o.metadata?.name ?? '', writeOpts);
        send(res, 200, {
          kind: r.listKind,
          apiVersion: apiVersionOf(r.group, route.version),
          metadata: { resourceVersion: this.store.resourceVersion },
          items: page.items,
        });
        return;
      }
    }
  }

  /**
   * The /scale subresource: GET reads the Scale; PUT and PATCH write one (a patch applies to the current Scale),
   * which becomes an update of the object itself, so generation, resourceVersion, conflicts and watch events are
   * the object's own. Answers the Scale as it is after the write.
   */
  private async serveScale(
    req: Req,
    r: ResourceDef,
    route: Route,
    verb: string,
    writeOpts: WriteOptions,
  ): Promise<unknown> {
    const paths = r.scale as NonNullable<ResourceDef['scale']>;
    const name = route.name as string;
    const current = this.store.get(r, route.namespace, name, route.version);
    if (verb === 'get') return scaleOf(current, paths);
    let written: unknown;
    if (verb === 'update') written = await readBody(req, true);
    else {
      const type = patchTypeOf(req, r);
      written = applyPatch(type, scaleOf(current, paths, true), await readBody(req));
    }
    const obj = this.store.update(r, route.namespace, name, applyScale(current, written, paths, name), writeOpts);
    return scaleOf(obj, paths);
  }

  private review(r: ResourceDef, body: KubeObject, requester: UserInfo): KubeObject {
    if (body.kind !== r.kind)
      throw badRequest(`the kind in the data (${String(body.kind)}) does not match the expected kind (${r.kind})`);
    if (r.kind === 'TokenReview') return this.tokenReview(body, requester);
    const spec = (body.spec ?? {}) as {
      user?: string;
      groups?: string[];
      resourceAttributes?: ResourceAttributes & { resource?: string };
      nonResourceAttributes?: unknown;
    };
    const a = spec.resourceAttributes;
    const subject =
      r.kind === 'SelfSubjectAccessReview' ? requester : { username: spec.user ?? '', groups: spec.groups ?? [] };
    if (r.kind === 'SubjectAccessReview') {
      this.authorize(requester, { verb: 'create', group: r.group, resource: r.plural }, r.plural);
      if (!subject.username && subject.groups.length === 0)
        throw new ApiError(
          422,
          'Invalid',
          'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified',
        );
    }
    if (!a) {
      return {
        ...body,
        apiVersion: 'authorization.k8s.io/v1',
        metadata: { creationTimestamp: null as unknown as string },
        status: { allowed: false, reason: 'only resourceAttributes are supported by this server' },
      };
    }
    const decision = this.authz.authorize(subject, {
      verb: a.verb ?? '',
      group: a.group ?? '',
      resource: a.resource ?? '',
      subresource: a.subresource || undefined,
      namespace: a.namespace || undefined,
      name: a.name || undefined,
    });
    return {
      ...body,
      apiVersion: 'authorization.k8s.io/v1',
      metadata: { creationTimestamp: null as unknown as string },
      status: decision.allowed ? { allowed: true, reason: decision.reason } : { allowed: false },
    };
  }

  /** authentication.k8s.io/v1 TokenReview: who a bearer token belongs to, as the API server's authenticator says. */
  private tokenReview(body: KubeObject, requester: UserInfo): KubeObject {
    this.authorize(
      requester,
      { verb: 'create', group: 'authentication.k8s.io', resource: 'tokenreviews' },
      'tokenreviews',
    );
    const token = (body.spec as { token?: unknown } | undefined)?.token;
    if (typeof token !== 'string' || token === '')
      throw new ApiError(422, 'Invalid', 'TokenReview.authentication.k8s.io "" is invalid: spec.token: Required value');
    const user = this.opts.tokens[token];
    return {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      metadata: { creationTimestamp: null as unknown as string },
      spec: body.spec,
      status: user
        ? { authenticated: true, user: { username: user.username, uid: `sim-${user.username}`, groups: user.groups } }
        : { authenticated: false, error: 'invalid bearer token' },
    } as KubeObject;
  }

  private serveWatch(
    req: Req,
    res: Res,
    r: ResourceDef,
    route: Route,
    q: URLSearchParams,
    labels: ReturnType<typeof parseLabelSelector>,
    fields: ReturnType<typeof parseFieldSelector>,
  ): void {
    this.watchRequests.push({ resource: r.plural, query: Object.fromEntries(q) });
    if (this.watchRequests.length > 1000) this.watchRequests.shift();
    const table = wantsTable(req);
    const encode = (e: StoredEvent) => {
      const obj = r.convert && route.version !== storageVersion(r) ? r.convert(e.object, route.version) : e.object;
      return `${JSON.stringify({ type: e.type, object: table ? tableFor(r, [obj], String(e.rv)) : obj })}\n`;
    };
    const timeoutSec = q.get('timeoutSeconds') ? Number(q.get('timeoutSeconds')) : 1800;
    if (!Number.isFinite(timeoutSec) || timeoutSec < 0)
      throw badRequest(`invalid timeoutSeconds "${q.get('timeoutSeconds')}"`);
    // No Content-Length: chunked over HTTP/1.1, DATA frames over HTTP/2 (which has no Transfer-Encoding).
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
    // The headers go out now (a client waits for them before reading events); HTTP/2's writeHead sends them itself.
    if ('flushHeaders' in res) res.flushHeaders();
    let unsubscribe: (() => void) | undefined;
    const timers: NodeJS.Timeout[] = [];
    const close = () => {
      unsubscribe?.();
      for (const t of timers) clearTimeout(t);
      this.openStreams.delete(res);
      if (!res.writableEnded) res.end();
    };
    const write = (text: string) => {
      // Both kinds of response take a string (their overloads differ only in the callback's type).
      if (!res.writableEnded && !res.destroyed) (res as ServerResponse).write(text);
    };
    this.openStreams.set(res, close);
    req.on('close', close);
    res.on('close', close);
    try {
      unsubscribe = this.store.watch(
        { resource: r, namespace: route.namespace ?? null, labels, fields, send: (e) => write(encode(e)) },
        q.get('resourceVersion'),
      );
    } catch (e) {
      if (e instanceof ApiError) {
        write(`${JSON.stringify({ type: 'ERROR', object: e.toStatus() })}\n`);
        close();
        return;
      }
      throw e;
    }
    if (timeoutSec > 0) timers.push(setTimeout(close, timeoutSec * 1000));
    if (q.get('allowWatchBookmarks') === 'true') {
      const tick = () => {
        if (res.writableEnded) return;
        write(
          `${JSON.stringify({ type: 'BOOKMARK', object: { kind: r.kind, apiVersion: apiVersionOf(r.group, route.version), metadata: { resourceVersion: this.store.resourceVersion } } })}\n`,
        );
        timers.push(setTimeout(tick, this.opts.bookmarkIntervalMs ?? 60_000));
      };
      timers.push(setTimeout(tick, this.opts.bookmarkIntervalMs ?? 60_000));
    }
  }
}
