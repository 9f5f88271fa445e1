import 'server-only';
// Kubernetes plumbing shared by the sources and the resync: a KubeConfig per context, the served MachinePool
// version, and one-off calls with a deadline, a chosen patch type and the API server's own Status message.

import { ApisApi, KubeConfig, Observable, type ConfigurationOptions, type ObservableMiddleware, type RequestContext, type ResponseContext } from '@kubernetes/client-node';

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
  const err = e as { code?: unknown; body?: unknown; name?: string; message?: string; cause?: { name?: string; code?: string; message?: string } };
  if (typeof err.code === 'number') {
    let body: { reason?: string; message?: string } = {};
    try {
      body = typeof err.body === 'string' ? (JSON.parse(err.body) as typeof body) : ((err.body ?? {}) as typeof body);
    } catch {
      body = { message: String(err.body) };
    }
    return { status: err.code, reason: body.reason ?? 'Error', message: body.message ?? `HTTP ${err.code}` };
  }
  const name = err.name === 'TimeoutError' || err.name === 'AbortError' || err.cause?.name === 'TimeoutError' ? 'Timeout' : (err.cause?.code ?? err.name ?? 'Error');
  const message = name === 'Timeout' ? 'the API server did not answer in time' : (err.cause?.message ?? err.message ?? String(e));
  return { status: 0, reason: name, message };
}

/** A copy of `kc` whose current context is `context` (client-node clients talk to the current context). */
export function contextKubeConfig(kc: KubeConfig, context: string): KubeConfig {
  const c = new KubeConfig();
  c.loadFromString(kc.exportConfig());
  c.setCurrentContext(context);
  return c;
}

/** The MachinePool version a cluster serves: v1beta2 when it does (CAPI ≥ v1.11), else its preferred one. */
export async function servedMachinePoolVersion(kc: KubeConfig, options?: ConfigurationOptions<ObservableMiddleware>): Promise<string> {
  const groups = await kc.makeApiClient(ApisApi).getAPIVersions(options);
  const capi = groups.groups.find((g) => g.name === 'cluster.x-k8s.io');
  if (!capi) throw new Error('the cluster does not serve cluster.x-k8s.io: is Cluster API installed?');
  return capi.versions.some((v) => v.version === 'v1beta2') ? 'v1beta2' : (capi.preferredVersion?.version ?? 'v1beta1');
}
