import 'server-only';
// Kubernetes plumbing shared by the sources and the resync: a KubeConfig per context, the served MachinePool
// version, and one-off calls with a deadline, a chosen patch type and the API server's own Status message.

import type https from 'node:https';
import tls from 'node:tls';
import {
  ApisApi,
  KubeConfig,
  Observable,
  type ConfigurationOptions,
  type ObservableMiddleware,
  type RequestContext,
  type ResponseContext,
} from '@kubernetes/client-node';
import { isIP } from 'node:net';
import { Agent, type buildConnector, type Dispatcher } from 'undici';
import { LocalFailure } from './public-error';

const of = <T>(v: T) => new Observable(Promise.resolve(v));

/** Request options: abort after `timeoutMs`, and send `contentType` (a patch type) when given. */
export function callOptions(timeoutMs: number, contentType?: string): ConfigurationOptions<ObservableMiddleware> {
  const middleware: ObservableMiddleware = {
    pre: (ctx: RequestContext) => {
      ctx.setSignal(AbortSignal.timeout(timeoutMs));
      if (contentType) ctx.setHeaderParam('Content-Type', contentType);
      return of(ctx);
    },
    post: (r: ResponseContext) => of(r),
  };
  return { middleware: [middleware], middlewareMergeStrategy: 'append' };
}

export interface KubeFailure {
  /** HTTP status, or 0 when no answer came (timeout, connection refused). */
  status: number;
  /** The Status reason (Conflict, Invalid, Forbidden, …) or the network error's name. */
  reason: string;
  message: string;
}

/** What went wrong in a client-node call, in the API server's words. */
export function kubeFailure(e: unknown): KubeFailure {
  const err = e as {
    code?: unknown;
    body?: unknown;
    name?: string;
    message?: string;
    cause?: { name?: string; code?: string; message?: string };
  };
  if (typeof err.code === 'number') {
    let body: { reason?: string; message?: string } = {};
    try {
      body = typeof err.body === 'string' ? (JSON.parse(err.body) as typeof body) : ((err.body ?? {}) as typeof body);
    } catch {
      body = { message: String(err.body) };
    }
    return { status: err.code, reason: body.reason ?? 'Error', message: body.message ?? `HTTP ${err.code}` };
  }
  const name =
    err.name === 'TimeoutError' || err.name === 'AbortError' || err.cause?.name === 'TimeoutError'
      ? 'Timeout'
      : (err.cause?.code ?? err.name ?? 'Error');
  const message =
    name === 'Timeout' ? 'the API server did not answer in time' : (err.cause?.message ?? err.message ?? String(e));
  return { status: 0, reason: name, message };
}

/**
 * A KubeConfig whose requests share one connection pool (an undici Agent) and one TLS context per cluster and
 * user. client-node builds a new Agent for every request: a new TLS handshake, an OpenSSL context of its own
 * (~35 KB outside V8's heap) for each connection, and an Agent never closed, whose connection stays open while
 * idle until the server's keep-alive runs out. A collector keeps a watch open per kind and cluster (~350 at 100k
 * VMs), each starting anew every five to ten minutes. Through one Agent a new watch takes the connection an ended
 * one left idle, and every connection shares the TLS context. An API server that speaks HTTP/2 (as real ones do)
 * gets one connection for all of them ({@link agentFor}); one that does not, a connection per open request.
 *
 * Like client-node's own agent cache, the TLS material (CA, client certificate and key) is read once per cluster
 * and user; credentials sent as headers (tokens, exec plugins) are still applied to each request. Clusters reached
 * through a proxy keep client-node's own dispatcher.
 */
export class PooledKubeConfig extends KubeConfig {
  /**
   * The shared Agent, and when to ask the server for its protocol again (when it could not be reached: the Agent
   * then speaks HTTP/1.1, which any API server takes, and is replaced once the server answers).
   */
  private pool: { key: string; agent: Agent; h2: boolean; askAgainAt?: number } | null = null;

  private reaskDue(): boolean {
    return this.pool?.askAgainAt !== undefined && Date.now() >= this.pool.askAgainAt;
  }

  override async applySecurityAuthentication(ctx: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(ctx);
    const cluster = this.getCurrentCluster();
    if (!ctx.getDispatcher() || cluster?.proxyUrl) return;
    ctx.setDispatcher(await this.agent());
  }

  /** The shared Agent of the current cluster and user. */
  async agent(): Promise<Agent> {
    const cluster = this.getCurrentCluster();
    const key = JSON.stringify([cluster?.name ?? '', cluster?.server ?? '', this.getCurrentUser()?.name ?? '']);
    if (this.pool?.key === key && !this.reaskDue()) return this.pool.agent;
    const opts: https.RequestOptions = {};
    await this.applyToHTTPSOptions(opts);
    // Another request may have built it meanwhile.
    if (this.pool?.key === key && !this.reaskDue()) return this.pool.agent;
    const secureContext = tls.createSecureContext({
      ca: opts.ca,
      cert: opts.cert,
      key: opts.key,
      pfx: opts.pfx,
      passphrase: opts.passphrase,
    });
    const connect = {
      secureContext,
      keepAlive: true,
      keepAliveInitialDelay: 30_000,
      ...(opts.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: opts.rejectUnauthorized }),
      ...(opts.servername ? { servername: opts.servername } : {}),
    };
    const protocol = await serverProtocol(cluster?.server ?? '', connect);
    const askAgainAt = protocol === null ? Date.now() + PROTOCOL_RETRY_MS : undefined;
    if (this.pool?.key === key && (!this.reaskDue() || (protocol !== 'h2' && !this.pool.h2))) {
      // Asked again and still no HTTP/2: the Agent (and its open connections) stays.
      if (this.reaskDue()) this.pool.askAgainAt = askAgainAt;
      return this.pool.agent;
    }
    const old = this.pool?.agent;
    this.pool = {
      key,
      agent: agentFor(protocol, connect),
      h2: protocol === 'h2',
      ...(askAgainAt === undefined ? {} : { askAgainAt }),
    };
    void old?.close().catch(() => {});
    sharedDispatchers.add(this.pool.agent);
    return this.pool.agent;
  }

  /** Closes the shared connections (when the source using this KubeConfig stops). */
  async closeConnections(): Promise<void> {
    const agent = this.pool?.agent;
    this.pool = null;
    await agent?.destroy().catch(() => {});
  }
}

/**
 * Requests one HTTP/2 connection carries at once. API servers allow 100 to 250 streams a connection (kube-apiserver's
 * `--http2-max-streams-per-connection`); undici also keeps to what the server announces.
 */
const H2_STREAMS_PER_CONNECTION = 100;

/** How long a cluster that could not be asked for its protocol is talked to over HTTP/1.1 before asking again. */
export const PROTOCOL_RETRY_MS = 60_000;

type ConnectOptions = buildConnector.BuildOptions & { servername?: string };

/**
 * The protocol an API server chooses through ALPN ('h2' or 'http/1.1'), or null when it cannot be reached. One TLS
 * handshake, closed at once.
 */
export async function serverProtocol(
  server: string,
  connect: ConnectOptions,
  timeoutMs = 5_000,
): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:') return 'http/1.1';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    const socket = tls.connect({
      ...(connect as tls.ConnectionOptions),
      host,
      port: Number(url.port || 443),
      servername: connect.servername ?? (isIP(host) ? undefined : host),
      ALPNProtocols: ['h2', 'http/1.1'],
    });
    const done = (p: string | null) => {
      socket.destroy();
      resolve(p);
    };
    socket.setTimeout(timeoutMs, () => done(null));
    socket.once('secureConnect', () => done(socket.alpnProtocol || 'http/1.1'));
    socket.once('error', () => done(null));
  });
}

/**
 * The Agent for an API server that speaks `protocol`. Over HTTP/2 one connection carries every request and watch
 * (a collector's ~7 watches per management cluster share a TLS connection, ~150 KB of memory outside V8's heap,
 * instead of one apiece): undici multiplexes only when its `pipelining` allows more than one request at a time,
 * and opens a connection per request while the first one is being set up unless `connections` says one. Over
 * HTTP/1.1 (a server or proxy without HTTP/2, or one not reached yet) the same settings would queue requests
 * behind a watch that never ends: there, a connection per request at a time.
 */
function agentFor(protocol: string | null, connect: ConnectOptions): Agent {
  return protocol === 'h2'
    ? new Agent({ connect, allowH2: true, connections: 1, pipelining: H2_STREAMS_PER_CONNECTION })
    : new Agent({ connect });
}

/** Dispatchers a PooledKubeConfig shares: a caller must not close them after its own request. */
const sharedDispatchers = new WeakSet<object>();

export function isSharedDispatcher(d: Dispatcher | undefined): boolean {
  return d !== undefined && sharedDispatchers.has(d);
}

/** A copy of `kc` whose current context is `context` (client-node clients talk to the current context). */
export function contextKubeConfig(kc: KubeConfig, context: string): PooledKubeConfig {
  const c = new PooledKubeConfig();
  c.loadFromString(kc.exportConfig());
  c.setCurrentContext(context);
  return c;
}

/** The MachinePool version a cluster serves: v1beta2 when it does (CAPI ≥ v1.11), else its preferred one. */
export async function servedMachinePoolVersion(
  kc: KubeConfig,
  options?: ConfigurationOptions<ObservableMiddleware>,
): Promise<string> {
  const groups = await kc.makeApiClient(ApisApi).getAPIVersions(options);
  const capi = groups.groups.find((g) => g.name === 'cluster.x-k8s.io');
  if (!capi) throw new LocalFailure('the cluster does not serve cluster.x-k8s.io: is Cluster API installed?');
  return capi.versions.some((v) => v.version === 'v1beta2') ? 'v1beta2' : (capi.preferredVersion?.version ?? 'v1beta1');
}
