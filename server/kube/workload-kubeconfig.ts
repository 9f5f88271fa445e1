import 'server-only';
// A workload cluster's kubeconfig, read from its `<cluster>-kubeconfig` Secret: anyone who can write a Cluster
// and a Secret in a watched namespace writes it, so it is untrusted input. client-node honours everything a
// kubeconfig can say — `exec` and `auth-provider` run programs, `token-file` and the certificate and key paths
// read local files, `proxy-url` sends the credentials elsewhere — and reads `token-file` while merely loading.
// So the YAML is parsed here and only a server and inline credentials are kept: a KubeConfig is built from
// those alone (docs/security.md).

import { parse } from 'yaml';
import { PooledKubeConfig } from './calls';

/** A kubeconfig poolscope will not use, and why (shown as the workload cluster's source error). */
export class UnsafeKubeconfigError extends Error {}

/** CAPI writes a few kilobytes; a Secret holds at most 1 MiB. */
const MAX_KUBECONFIG_BYTES = 256 * 1024;

/** Keys used, and keys that change nothing about where or how poolscope connects (ignored); any other is refused. */
const TOP = {
  used: ['clusters', 'users', 'contexts', 'current-context'],
  inert: ['apiVersion', 'kind', 'preferences', 'extensions'],
};
const CLUSTER = { used: ['server', 'certificate-authority-data'], inert: ['extensions'] };
const USER = { used: ['token', 'client-certificate-data', 'client-key-data'], inert: ['extensions'] };
const CONTEXT = { used: ['cluster', 'user'], inert: ['namespace', 'extensions'] };

/** Where CAPI says the workload cluster's API server is (Cluster.spec.controlPlaneEndpoint). */
export interface ControlPlaneEndpoint {
  host: string;
  port: number;
}

/** What poolscope keeps of a workload kubeconfig. */
export interface WorkloadCredentials {
  server: string;
  caData: string;
  token?: string;
  certData?: string;
  keyData?: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function refuse(message: string): never {
  throw new UnsafeKubeconfigError(message);
}

/** Checks an entry's keys against what is used and what is inert. */
function checkKeys(o: Obj, allowed: { used: string[]; inert: string[] }, where: string): void {
  for (const k of Object.keys(o)) {
    if (!allowed.used.includes(k) && !allowed.inert.includes(k)) {
      refuse(`${where} has "${k}", which poolscope does not accept from a Secret (only ${allowed.used.join(', ')})`);
    }
  }
}

/** The entry named `name` of a list of `{name, <field>: {...}}` (clusters, users, contexts). */
function entry(doc: Obj, list: string, field: string, name: unknown): Obj {
  const items = doc[list];
  if (items !== undefined && !Array.isArray(items)) refuse(`"${list}" is not a list`);
  const found = (items ?? []).find((e: unknown) => isObj(e) && e.name === name);
  if (!isObj(found)) refuse(`no ${list.slice(0, -1)} named "${String(name)}"`);
  checkKeys(found, { used: ['name', field], inert: [] }, `${list.slice(0, -1)} "${String(name)}"`);
  const inner = found[field];
  if (!isObj(inner)) refuse(`${list.slice(0, -1)} "${String(name)}" has no "${field}"`);
  return inner;
}

const str = (v: unknown, what: string): string | undefined => {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v === '') refuse(`${what} is not a non-empty string`);
  return v;
};

/** The host without IPv6 brackets, lower-cased. */
const bareHost = (h: string) => h.replace(/^\[|\]$/g, '').toLowerCase();

/** `server`: an https origin (no credentials, path, query or fragment), matching the control plane endpoint. */
function checkServer(server: string, endpoint: ControlPlaneEndpoint | null): string {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    refuse(`server "${server.slice(0, 200)}" is not a URL`);
  }
  if (url.protocol !== 'https:') refuse(`server ${url.origin} is not https`);
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) {
    refuse('server must be a plain https://host:port, without credentials, path or query');
  }
  if (!endpoint?.host)
    refuse('the Cluster has no spec.controlPlaneEndpoint.host yet, so the server cannot be checked against it');
  const port = Number(url.port || 443);
  if (bareHost(url.hostname) !== bareHost(endpoint.host) || port !== (endpoint.port || 443)) {
    refuse(`server ${url.host} is not the Cluster's control plane endpoint (${endpoint.host}:${endpoint.port || 443})`);
  }
  return url.origin;
}

/**
 * The server and credentials of a Secret's kubeconfig, or an UnsafeKubeconfigError saying what it holds that
 * poolscope does not accept: anything but `server` and `certificate-authority-data` in the cluster, `token` or
 * `client-certificate-data` with `client-key-data` in the user; a server other than the Cluster's endpoint.
 */
export function parseWorkloadKubeconfig(text: string, endpoint: ControlPlaneEndpoint | null): WorkloadCredentials {
  if (Buffer.byteLength(text) > MAX_KUBECONFIG_BYTES) refuse(`it is over ${MAX_KUBECONFIG_BYTES / 1024} KiB`);
  let doc: unknown;
  try {
    doc = parse(text, { maxAliasCount: 0, uniqueKeys: true });
  } catch (e) {
    refuse(`it is not valid YAML (${(e as Error).message.split('\n')[0]?.slice(0, 200)})`);
  }
  if (!isObj(doc)) refuse('it is not a YAML mapping');
  checkKeys(doc, TOP, 'the kubeconfig');
  const contexts = Array.isArray(doc.contexts) ? doc.contexts : [];
  const current =
    doc['current-context'] ?? (contexts.length === 1 && isObj(contexts[0]) ? contexts[0].name : undefined);
  if (typeof current !== 'string' || !current) refuse('it names no current-context');
  const context = entry(doc, 'contexts', 'context', current);
  checkKeys(context, CONTEXT, `context "${current}"`);
  const cluster = entry(doc, 'clusters', 'cluster', context.cluster);
  checkKeys(cluster, CLUSTER, `cluster "${String(context.cluster)}"`);
  const user = entry(doc, 'users', 'user', context.user);
  checkKeys(user, USER, `user "${String(context.user)}"`);
  const server = checkServer(
    str(cluster.server, "the cluster's server") ?? refuse('the cluster has no server'),
    endpoint,
  );
  const caData =
    str(cluster['certificate-authority-data'], 'certificate-authority-data') ??
    refuse('the cluster has no certificate-authority-data');
  const token = str(user.token, "the user's token");
  const certData = str(user['client-certificate-data'], 'client-certificate-data');
  const keyData = str(user['client-key-data'], 'client-key-data');
  if (!token && !(certData && keyData))
    refuse('the user has neither a token nor client-certificate-data with client-key-data');
  if (Boolean(certData) !== Boolean(keyData))
    refuse('the user has only one of client-certificate-data and client-key-data');
  return { server, caData, ...(token ? { token } : {}), ...(certData ? { certData, keyData } : {}) };
}

/** A KubeConfig holding only the given server and credentials (nothing else can reach client-node). */
export function workloadKubeConfig(c: WorkloadCredentials): PooledKubeConfig {
  const kc = new PooledKubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'workload', server: c.server, caData: c.caData, skipTLSVerify: false }],
    users: [
      {
        name: 'workload',
        ...(c.token ? { token: c.token } : {}),
        ...(c.certData ? { certData: c.certData, keyData: c.keyData } : {}),
      },
    ],
    contexts: [{ name: 'workload', cluster: 'workload', user: 'workload' }],
    currentContext: 'workload',
  });
  return kc;
}

/** Cluster.spec.controlPlaneEndpoint, when it names a host. */
export function controlPlaneEndpointOf(cluster: { spec?: unknown } | null | undefined): ControlPlaneEndpoint | null {
  const e = isObj(cluster?.spec) ? cluster.spec.controlPlaneEndpoint : undefined;
  if (!isObj(e) || typeof e.host !== 'string' || !e.host) return null;
  return { host: e.host, port: typeof e.port === 'number' ? e.port : 0 };
}
