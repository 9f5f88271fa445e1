// Starts a set of simulated clusters in one process — management clusters holding CAPI/CAPZ objects and
// workload clusters holding Nodes — and writes the kubeconfig that reaches them, like a real fleet.

import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import type { KubeObject } from '../../lib/unstructured';
import { ADMIN_RULE, type PolicyRule, type UserInfo } from './auth';
import { findUpstreamDir, loadCrdSchemas, validateAgainstCrd } from './crd-schema';
import { findByKind, RESOURCES, type ResourceDef } from './resources';
import { SimApiServer } from './server';
import { ClusterStore, type Validator } from './store';
import { generateTls, type SimTls } from './tls';

export interface SimClusterSpec {
  name: string;
  role: 'management' | 'workload';
  /** Objects to load, exactly as `kubectl get -o yaml` prints them (status included). */
  objects?: KubeObject[];
}

interface SimUser {
  name: string;
  groups?: string[];
  /** Fixed token; a random one is generated when omitted. */
  token?: string;
}

export interface KubeSimulatorOptions {
  clusters: SimClusterSpec[];
  /** Extra users (an `admin` in group system:masters always exists). */
  users?: SimUser[];
  /** Extra policy rules, added to "system:masters may do everything". */
  policy?: PolicyRule[];
  /** Where to write the kubeconfig; a temporary directory by default. */
  kubeconfigPath?: string;
  /** CRD folder for schema validation: a path, null to disable, undefined to look for ../shared/upstream. */
  upstreamDir?: string | null;
  historyWindow?: number;
  bookmarkIntervalMs?: number;
  /** CA directory (see sim/kube/tls.ts); defaults to POOLSCOPE_SIM_CA_DIR, else an in-memory CA. */
  caDir?: string | null;
  /** Serving certificate to use (shared with the simulated Azure); generated when omitted. */
  tls?: SimTls;
  /** Called once with a human-readable notice (e.g. schema validation off). */
  log?: (msg: string) => void;
}

export interface KubeSimulator {
  tls: SimTls;
  kubeconfigPath: string;
  /** One kubeconfig file per non-admin user (same clusters and contexts), keyed by user name. */
  userKubeconfigPaths: Map<string, string>;
  /** Admin kubeconfig (object form) with one context per cluster, named after the cluster. */
  kubeconfig: Record<string, unknown>;
  clusters: Map<string, SimApiServer>;
  tokens: Map<string, string>;
  schemaValidation: boolean;
  cluster(name: string): SimApiServer;
  /** A kubeconfig (object form) for one cluster and one user. */
  kubeconfigFor(cluster: string, user?: string): Record<string, unknown>;
  /** Loads objects into a cluster as they are (status included), creating their namespaces. */
  load(cluster: string, objects: KubeObject[]): void;
  stop(): Promise<void>;
}

const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..');
const NS: ResourceDef = RESOURCES.find((r) => r.group === '' && r.plural === 'namespaces') as ResourceDef;
const DNS1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function makeValidator(upstreamDir: string | null): Validator {
  const schemas = upstreamDir ? loadCrdSchemas(upstreamDir) : null;
  return (obj) => {
    const problems: { field: string; message: string; unknownField?: boolean }[] = [];
    const name = obj.metadata?.name ?? '';
    if (name && (!DNS1123.test(name) || name.length > 253)) {
      problems.push({
        field: 'metadata.name',
        message: `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
      });
    }
    const errors = schemas ? validateAgainstCrd(schemas, obj) : null;
    for (const e of errors ?? []) {
      problems.push({
        field: e.path.replace(/^\./, ''),
        message: e.message,
        unknownField: e.message === 'field not declared in schema',
      });
    }
    return problems;
  };
}

function loadObjects(store: ClusterStore, objects: KubeObject[]): void {
  const namespaces = new Set<string>();
  for (const o of objects) if (o.metadata?.namespace) namespaces.add(o.metadata.namespace);
  for (const o of objects) if (o.kind === 'Namespace' && o.metadata?.name) namespaces.delete(o.metadata.name);
  for (const ns of namespaces) {
    if (!store.has(NS, undefined, ns))
      store.load(NS, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns }, status: { phase: 'Active' } });
  }
  // Namespaces first, so namespaced objects find theirs.
  const sorted = [...objects].sort((a, b) => Number(b.kind === 'Namespace') - Number(a.kind === 'Namespace'));
  for (const o of sorted) {
    const r = findByKind(o.apiVersion ?? '', o.kind ?? '');
    if (!r)
      throw new Error(
        `no simulated resource serves ${o.apiVersion} ${o.kind} (object ${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''})`,
      );
    store.load(r, o);
  }
}

function kubeconfigDoc(
  clusters: { name: string; url: string }[],
  caPem: string,
  user: string,
  token: string,
  current: string,
): Record<string, unknown> {
  const ca = Buffer.from(caPem).toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'Config',
    preferences: {},
    clusters: clusters.map((c) => ({ name: c.name, cluster: { server: c.url, 'certificate-authority-data': ca } })),
    users: [{ name: user, user: { token } }],
    contexts: clusters.map((c) => ({ name: c.name, context: { cluster: c.name, user } })),
    'current-context': current,
  };
}

export async function startKubeSimulator(opts: KubeSimulatorOptions): Promise<KubeSimulator> {
  const log = opts.log ?? ((m: string) => console.log(m));
  const upstream = opts.upstreamDir === undefined ? findUpstreamDir(REPO_ROOT) : opts.upstreamDir;
  if (!upstream)
    log(
      'sim/kube: upstream CRDs not found (POOLSCOPE_UPSTREAM_DIR or ../shared/upstream); objects are not validated against CAPI/CAPZ schemas.',
    );
  const validate = makeValidator(upstream);
  const tls =
    opts.tls ??
    (await generateTls({ caDir: opts.caDir === undefined ? (process.env.POOLSCOPE_SIM_CA_DIR ?? null) : opts.caDir }));

  const tokens = new Map<string, string>();
  const identities: Record<string, UserInfo> = {};
  const addUser = (u: SimUser) => {
    const token = u.token ?? randomBytes(24).toString('base64url');
    tokens.set(u.name, token);
    identities[token] = { username: u.name, groups: [...(u.groups ?? []), 'system:authenticated'] };
  };
  addUser({ name: 'admin', groups: ['system:masters'] });
  for (const u of opts.users ?? []) addUser(u);
  const policy = [ADMIN_RULE, ...(opts.policy ?? [])];

  const clusters = new Map<string, SimApiServer>();
  for (const spec of opts.clusters) {
    if (clusters.has(spec.name)) throw new Error(`duplicate cluster name "${spec.name}"`);
    const store = new ClusterStore({ historyWindow: opts.historyWindow, validate });
    const server = new SimApiServer({
      name: spec.name,
      store,
      tls,
      tokens: identities,
      policy,
      bookmarkIntervalMs: opts.bookmarkIntervalMs,
    });
    await server.start();
    clusters.set(spec.name, server);
  }

  const cluster = (name: string) => {
    const c = clusters.get(name);
    if (!c) throw new Error(`no simulated cluster named "${name}"`);
    return c;
  };
  const kubeconfigFor = (name: string, user = 'admin') => {
    const token = tokens.get(user);
    if (!token) throw new Error(`no simulated user named "${user}"`);
    return kubeconfigDoc([{ name, url: cluster(name).url }], tls.caPem, user, token, name);
  };

  for (const spec of opts.clusters) loadObjects(cluster(spec.name).store, spec.objects ?? []);

  // Each workload cluster gets its <cluster>-kubeconfig Secret in the management cluster that has a
  // Cluster object of that name, as CAPI writes it: its server is the Cluster's control plane endpoint, which
  // is where this simulator serves that workload cluster.
  const CLUSTER_DEF = findByKind('cluster.x-k8s.io/v1beta2', 'Cluster') as ResourceDef;
  for (const w of opts.clusters.filter((c) => c.role === 'workload')) {
    const url = new URL(cluster(w.name).url);
    const controlPlaneEndpoint = { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 443) };
    for (const m of opts.clusters.filter((c) => c.role === 'management')) {
      const store = cluster(m.name).store;
      for (const capiCluster of store.list(CLUSTER_DEF).items.filter((c) => c.metadata?.name === w.name)) {
        const ns = capiCluster.metadata?.namespace as string;
        store.update(CLUSTER_DEF, ns, w.name, {
          ...capiCluster,
          spec: { ...(capiCluster.spec ?? {}), controlPlaneEndpoint },
        });
        loadObjects(store, [
          {
            apiVersion: 'v1',
            kind: 'Secret',
            type: 'cluster.x-k8s.io/secret',
            metadata: {
              name: `${w.name}-kubeconfig`,
              namespace: ns,
              labels: { 'cluster.x-k8s.io/cluster-name': w.name },
              ownerReferences: [
                {
                  apiVersion: 'controlplane.cluster.x-k8s.io/v1beta2',
                  kind: 'KubeadmControlPlane',
                  name: `${w.name}-control-plane`,
                  uid: capiCluster.metadata?.uid,
                  controller: true,
                },
              ],
            },
            data: { value: Buffer.from(stringify(kubeconfigFor(w.name))).toString('base64') },
          } as KubeObject,
        ]);
      }
    }
  }

  const management = opts.clusters.filter((c) => c.role === 'management');
  const all = opts.clusters.map((c) => ({ name: c.name, url: cluster(c.name).url }));
  const kubeconfig = kubeconfigDoc(
    all,
    tls.caPem,
    'admin',
    tokens.get('admin') as string,
    (management[0] ?? opts.clusters[0])?.name ?? '',
  );
  const kubeconfigPath =
    opts.kubeconfigPath ?? path.join(os.tmpdir(), `poolscope-sim-${process.pid}-${Date.now()}`, 'kubeconfig');
  mkdirSync(path.dirname(kubeconfigPath), { recursive: true });
  writeFileSync(kubeconfigPath, stringify(kubeconfig), { mode: 0o600 });
  const userKubeconfigPaths = new Map<string, string>();
  for (const [user, token] of tokens) {
    if (user === 'admin') continue;
    const file = `${kubeconfigPath}-${user}`;
    writeFileSync(file, stringify(kubeconfigDoc(all, tls.caPem, user, token, String(kubeconfig['current-context']))), {
      mode: 0o600,
    });
    userKubeconfigPaths.set(user, file);
  }

  return {
    tls,
    kubeconfigPath,
    userKubeconfigPaths,
    kubeconfig,
    clusters,
    tokens,
    schemaValidation: upstream !== null,
    cluster,
    kubeconfigFor,
    load: (name, objects) => loadObjects(cluster(name).store, objects),
    stop: async () => {
      await Promise.all([...clusters.values()].map((c) => c.stop()));
    },
  };
}
