import 'server-only';
// The process's resync service, built on first use from the validated settings and the runtime's store.

import type { KubeConfig } from '@kubernetes/client-node';
import type { AgentPoolRead, AgentPoolRef, MachinesRead } from '../azure/aks-reader';
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
  readMachines?: (ref: AgentPoolRef) => Promise<MachinesRead>;
  /** This process's collector's Azure budgets, where it collects: a fresh AKS read waits out their Retry-After. */
  budgets?: () => { key: string; blockedUntil: string | null }[];
  /** Until when this process's collector waits before reading a scale set (a 429's Retry-After), where it collects. */
  scaleSetWait?: (id: string) => string | null;
  log?: ResyncDeps['log'];
}

/**
 * `read`, unless the collector was asked to wait before reading what `ref` names (a 429's Retry-After, until the time
 * `waitUntil` gives): then `waited`, an answer saying so, without a call, as the collector itself would not call.
 */
function heeding<Ref, Read>(
  read: (ref: Ref) => Promise<Read>,
  waitUntil: (ref: Ref) => string | null | undefined,
  waited: (until: string, retryAfterSeconds: number) => Read,
): (ref: Ref) => Promise<Read> {
  return async (ref) => {
    const until = waitUntil(ref);
    const waitMs = until ? Date.parse(until) - Date.now() : 0;
    return until && waitMs > 0 ? waited(until, Math.ceil(waitMs / 1000)) : read(ref);
  };
}

const waitedWords = (who: string, until: string) =>
  `${who} asked poolscope to wait until ${until}: not read again before then`;

/** A scale set's read, heeding its subscription and region's Retry-After. */
function heedingCompute(
  read: (ref: ScaleSetRef) => Promise<AzureRead>,
  wait: NonNullable<ResyncWiring['scaleSetWait']>,
): (ref: ScaleSetRef) => Promise<AzureRead> {
  const id = (ref: ScaleSetRef) =>
    `azure:///subscriptions/${ref.subscriptionId}/resourceGroups/${ref.resourceGroup}/providers/Microsoft.Compute/virtualMachineScaleSets/${ref.name}`.toLowerCase();
  return heeding(
    read,
    (ref) => wait(id(ref)),
    (until, retryAfterSeconds) => ({
      state: 'throttled',
      error: waitedWords('Azure', until),
      retryAfterSeconds,
      remaining: {},
      calls: 0,
      ops: { vmssGet: 0, vmList: 0, instanceView: 0 },
    }),
  );
}

/** An AKS read of an agent pool (the pool, or its machines), heeding its subscription's AKS Retry-After. */
function heedingAks<Read extends AgentPoolRead | MachinesRead>(
  read: (ref: AgentPoolRef) => Promise<Read>,
  budgets: NonNullable<ResyncWiring['budgets']>,
): (ref: AgentPoolRef) => Promise<Read> {
  const key = (ref: AgentPoolRef) => `${ref.subscriptionId.toLowerCase()}|aks`;
  return heeding(
    read,
    (ref) => budgets().find((b) => b.key === key(ref))?.blockedUntil,
    (until, retryAfterSeconds) =>
      ({ state: 'throttled', error: waitedWords('AKS', until), retryAfterSeconds, remaining: {}, calls: 0 }) as Read,
  );
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
  let { readAzure, readAgentPool, readMachines } = w;
  if (!readAzure) {
    const azure = new AzureReader({
      endpoint: e.POOLSCOPE_ARM_ENDPOINT,
      disableInstanceDiscovery: e.POOLSCOPE_AZURE_DISABLE_INSTANCE_DISCOVERY,
    });
    readAzure = (ref) => azure.read(ref);
    readAgentPool ??= (ref) => azure.readAgentPool(ref);
    readMachines ??= (ref) => azure.readMachines(ref);
  }
  if (readAgentPool && w.budgets) readAgentPool = heedingAks(readAgentPool, w.budgets);
  if (readMachines && w.budgets) readMachines = heedingAks(readMachines, w.budgets);
  if (w.scaleSetWait) readAzure = heedingCompute(readAzure, w.scaleSetWait);
  return new ResyncService({
    contexts,
    kubeconfigFor,
    access: new Access({ kubeconfigFor, trustedProxy, timeoutMs }),
    store: w.store,
    readAzure,
    ...(readAgentPool ? { readAgentPool } : {}),
    ...(readMachines ? { readMachines } : {}),
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
      ...(collector
        ? { budgets: () => collector.budgets(), scaleSetWait: (id: string) => collector.azure.throttledUntil(id) }
        : {}),
    });
    services.set(rt, s);
  }
  return s;
}
