import 'server-only';
// The process's resync service, built on first use from the validated settings and the runtime's store.

import type { KubeConfig } from '@kubernetes/client-node';
import type { AgentPoolRead, AgentPoolRef } from '../azure/aks-reader';
import { AzureReader, type AzureRead, type ScaleSetRef } from '../azure/reader';
import { runtime, resolveContexts, type Runtime } from '../runtime';
import type { Env } from '../env';
import { contextKubeConfig } from '../kube/calls';
import { logLine } from '../log';
import { Access } from './identity';
import { ResyncService, type ResyncDeps } from './resync';

const services = new WeakMap<Runtime, ResyncService>();

export interface ResyncWiring {
  env: Env;
  store: ResyncDeps['store'];
  publish: ResyncDeps['publish'];
  /** Defaults: the kubeconfig and contexts the settings name, ARM through DefaultAzureCredential, JSON logs. */
  kubeconfig?: KubeConfig;
  contexts?: string[];
  readAzure?: (ref: ScaleSetRef) => Promise<AzureRead>;
  readAgentPool?: (ref: AgentPoolRef) => Promise<AgentPoolRead>;
  /** This process's collector's Azure budgets, where it collects: a fresh AKS read waits out their Retry-After. */
  budgets?: () => { key: string; blockedUntil: string | null }[];
  log?: ResyncDeps['log'];
}

/**
 * `read`, unless AKS asked the collector to wait (a 429's Retry-After on the subscription's AKS budget): then an
 * answer saying so, without a call, as the collector itself would not call before then.
 */
function heedingAks(
  read: (ref: AgentPoolRef) => Promise<AgentPoolRead>,
  budgets: NonNullable<ResyncWiring['budgets']>,
): (ref: AgentPoolRef) => Promise<AgentPoolRead> {
  return async (ref) => {
    const key = `${ref.subscriptionId.toLowerCase()}|aks`;
    const until = budgets().find((b) => b.key === key)?.blockedUntil;
    const waitMs = until ? Date.parse(until) - Date.now() : 0;
    if (waitMs <= 0) return read(ref);
    return {
      state: 'throttled',
      error: `AKS asked poolscope to wait until ${until}: not read again before then`,
      retryAfterSeconds: Math.ceil(waitMs / 1000),
      remaining: {},
      calls: 0,
    };
  };
}

export function buildResyncService(w: ResyncWiring): ResyncService {
  const e = w.env;
  const { kc, contexts } = w.kubeconfig && w.contexts ? { kc: w.kubeconfig, contexts: w.contexts } : resolveContexts(e);
  const perContext = new Map<string, KubeConfig>();
  const kubeconfigFor = (context: string) => {
    let c = perContext.get(context);
    if (!c) {
      c = contextKubeConfig(kc, context);
      perContext.set(context, c);
    }
    return c;
  };
  const timeoutMs = e.POOLSCOPE_KUBE_TIMEOUT_SECONDS * 1000;
  const trustedProxy =
    e.POOLSCOPE_TRUSTED_PROXY && e.POOLSCOPE_TRUSTED_PROXY_SECRET
      ? { name: e.POOLSCOPE_TRUSTED_PROXY, secret: e.POOLSCOPE_TRUSTED_PROXY_SECRET }
      : undefined;
  let { readAzure, readAgentPool } = w;
  if (!readAzure) {
    const azure = new AzureReader({
      endpoint: e.POOLSCOPE_ARM_ENDPOINT,
      disableInstanceDiscovery: e.POOLSCOPE_AZURE_DISABLE_INSTANCE_DISCOVERY,
    });
    readAzure = (ref) => azure.read(ref);
    readAgentPool ??= (ref) => azure.readAgentPool(ref);
  }
  if (readAgentPool && w.budgets) readAgentPool = heedingAks(readAgentPool, w.budgets);
  return new ResyncService({
    contexts,
    kubeconfigFor,
    access: new Access({ kubeconfigFor, trustedProxy, timeoutMs }),
    store: w.store,
    readAzure,
    ...(readAgentPool ? { readAgentPool } : {}),
    publish: w.publish,
    readOnly: e.POOLSCOPE_READ_ONLY,
    timeoutMs,
    waitSeconds: e.POOLSCOPE_RESYNC_WAIT_SECONDS,
    log: w.log ?? logLine,
  });
}

export async function resyncService(): Promise<ResyncService> {
  const rt = await runtime();
  let s = services.get(rt);
  if (!s) {
    const { collector } = rt;
    s = buildResyncService({
      env: rt.env,
      store: rt.store,
      publish: (c) => rt.publish(c),
      ...(collector ? { budgets: () => collector.budgets() } : {}),
    });
    services.set(rt, s);
  }
  return s;
}
