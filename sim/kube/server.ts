// One simulated Kubernetes API server over HTTPS: its options, lifecycle, counters for tests, and the dispatch of
// each request to discovery (discovery.ts), access control (access.ts), and the read and write verbs (reads.ts,
// writes.ts) on every resource of the resource table.

import { randomUUID } from 'node:crypto';
import http2, { type Http2SecureServer } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import type { KubeObject } from '../../lib/unstructured';
import { RequestAccess } from './access';
import type { PolicyRule, UserInfo } from './auth';
import { discoveryDoc } from './discovery';
import { ApiError } from './errors';
import { readBody, send, sendError, type Req, type Res } from './http';
import { serveRead, type ReadHost } from './reads';
import { parseRoute, selectorsOf, verbOf, type Route } from './route';
import type { ClusterStore } from './store';
import { serveScale, serveWrite, writeParamsOf } from './writes';

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

export class SimApiServer {
  readonly name: string;
  readonly store: ClusterStore;
  private server: Http2SecureServer;
  /** Open TLS connections (HTTP/2 sessions and HTTP/1.1 sockets), to close them at stop. */
  private readonly sockets = new Set<Socket>();
  private readonly access: RequestAccess;
  private readonly openStreams = new Map<Res, () => void>();
  /** What the read verbs (watch streams above all) need of this server. */
  private readonly readHost: ReadHost;
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
  /**
   * Resources (`group/plural`) this server does not serve, as when their CRDs are not installed: absent from
   * discovery, 404 at their paths. Deleting one installs it.
   */
  readonly hidden = new Set<string>();

  constructor(private readonly opts: ApiServerOptions) {
    this.name = opts.name;
    this.store = opts.store;
    this.access = new RequestAccess(opts.tokens, opts.policy);
    this.readHost = {
      store: opts.store,
      openStreams: this.openStreams,
      watchRequests: this.watchRequests,
      bookmarkIntervalMs: opts.bookmarkIntervalMs,
    };
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

  /** Requests allowed per policy rule so far (see Authorizer.hits). */
  get policyHits(): ReadonlyMap<PolicyRule, number> {
    return this.access.policyHits;
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
    const user = this.access.authenticate(req);
    const method = req.method ?? 'GET';
    const doc =
      method === 'GET'
        ? discoveryDoc(path, { url: this.url_, gitVersion: this.opts.gitVersion, hidden: this.hidden })
        : undefined;
    if (doc !== undefined) {
      this.count('discovery');
      send(res, 200, doc);
      return;
    }
    const route = parseRoute(path);
    if (!route || this.hidden.has(`${route.resource.group}/${route.resource.plural}`))
      throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    await this.serveResource(req, res, method, user, route, url.searchParams);
  }

  /** A request to a resource (or its status or scale): checks, records and authorizes it, then serves its verb. */
  private async serveResource(
    req: Req,
    res: Res,
    method: string,
    user: UserInfo,
    route: Route,
    q: URLSearchParams,
  ): Promise<void> {
    const { resource: r } = route;
    const write = writeParamsOf(q, route.version);
    const verb = verbOf(method, route, q);
    this.count(verb);
    if (verb !== 'get' && verb !== 'list' && verb !== 'watch')
      await this.recordWrite(verb, route, user, write.opts.dryRun);

    if (r.createOnly) {
      const body = (await readBody(req, true)) as KubeObject;
      send(res, 201, this.access.review(r, body, user));
      return;
    }

    this.access.authorize(
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
    const call = { req, res, route, q, ...selectorsOf(q) };

    if (route.subresource === 'scale') {
      send(res, 200, await serveScale(this.store, verb, call, write.opts), write.warningHeaders());
      return;
    }
    if (verb === 'get' || verb === 'list' || verb === 'watch') serveRead(this.readHost, verb, call);
    else await serveWrite(this.store, verb, call, write);
  }

  /** Keeps a write request in `writes` (bounded), then runs the `beforeWrite` fault injection. */
  private async recordWrite(verb: string, route: Route, user: UserInfo, dryRun: boolean): Promise<void> {
    const r = route.resource;
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
}
