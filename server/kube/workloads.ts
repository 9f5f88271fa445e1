import 'server-only';
// A management cluster's workload clusters: a Node informer each, (re)started from the Cluster's
// `<cluster>-kubeconfig` Secret — untrusted input, which workload-kubeconfig checks before poolscope uses it.

import type { KubeConfig } from '@kubernetes/client-node';
import { CoreV1Api } from '@kubernetes/client-node';
import type { SourceHealth } from '@/lib/api-types';
import type { KubeObject } from '@/lib/unstructured';
import { log } from '../log';
import { callOptions } from './calls';
import { CALL_TIMEOUT_MS } from './one-off-calls';
import type { PoolIndex } from './pool-index';
import { LocalFailure, logDetail, publicError } from './public-error';
import { controlPlaneEndpointOf } from './workload-kubeconfig';
import { WorkloadSource } from './workload-source';

/** The workload clusters of one management cluster (a kubeconfig context), by Cluster `namespace/name`. */
export class Workloads {
  private readonly byCluster = new Map<string, WorkloadSource>();

  constructor(
    private readonly context: string,
    private readonly kc: KubeConfig,
    private readonly index: PoolIndex,
    /** Called with pool keys (`namespace/name`) whose inputs changed. */
    private readonly onChange: (pools: string[]) => void,
    /** Called when a Node informer restarts after an error. */
    private readonly onRestart: () => void,
  ) {}

  /** A Cluster's workload cluster, once its Secret was read. */
  get(k: string): WorkloadSource | undefined {
    return this.byCluster.get(k);
  }

  /** Each workload cluster's health. */
  health(): SourceHealth[] {
    return [...this.byCluster.values()].map((w) => w.health);
  }

  /**
   * After the informer stored Cluster `o` (replacing `old`): a new Cluster, or one whose endpoint moved (the
   * kubeconfig's server is checked against it), has its Secret read.
   */
  clusterStored(ns: string, o: KubeObject, old: KubeObject | undefined): void {
    if (!old || JSON.stringify(controlPlaneEndpointOf(old)) !== JSON.stringify(controlPlaneEndpointOf(o)))
      void this.refreshWorkload(ns, String(o.metadata?.name));
  }

  /** After the informer dropped the Cluster `k`: stops its Node informer. */
  clusterRemoved(k: string): void {
    const w = this.byCluster.get(k);
    w?.stop();
    this.byCluster.delete(k);
  }

  /** Re-reads the kubeconfig Secrets of workload clusters that are not live, or of all of them (`all`). */
  async refreshWorkloads(all: boolean): Promise<void> {
    for (const c of this.index.caches.cluster.values()) {
      const ns = String(c.metadata?.namespace);
      const name = String(c.metadata?.name);
      if (all || this.byCluster.get(`${ns}/${name}`)?.health.state !== 'live') await this.refreshWorkload(ns, name);
    }
  }

  /** Reads `<cluster>-kubeconfig` (key `value`) and (re)starts the Node informer when it changed or failed. */
  private async refreshWorkload(ns: string, cluster: string): Promise<void> {
    const k = `${ns}/${cluster}`;
    let w = this.byCluster.get(k);
    if (!w) {
      w = new WorkloadSource(
        cluster,
        ns,
        this.context,
        (nodes) => this.onChange(this.index.poolsOfNodes(ns, cluster, nodes)),
        this.onRestart,
      );
      this.byCluster.set(k, w);
    }
    const what = `Secret ${ns}/${cluster}-kubeconfig`;
    try {
      const secret = await this.kc
        .makeApiClient(CoreV1Api)
        .readNamespacedSecret({ name: `${cluster}-kubeconfig`, namespace: ns }, callOptions(CALL_TIMEOUT_MS));
      const value = secret.data?.value;
      if (!value) throw new LocalFailure(`${what} has no key "value"`);
      const yaml = Buffer.from(value, 'base64').toString('utf8');
      const endpoint = controlPlaneEndpointOf(this.index.caches.cluster.get(k));
      const used = `${JSON.stringify(endpoint)}\n${yaml}`;
      if (w.health.state === 'starting' || w.health.state === 'error' || w.kubeconfig !== used) {
        w.kubeconfig = used;
        w.start(yaml, endpoint);
      }
    } catch (e) {
      const msg = (e as { code?: unknown }).code === 404 ? `${what} not found` : publicError(e, `read ${what}`);
      // A running Node informer (with the last kubeconfig accepted) says best how the workload cluster is; a Secret
      // that cannot be read while the management cluster is down is that cluster's problem, shown there.
      if (w.running && (e as { code?: unknown }).code !== 404) {
        log().warn(
          { context: this.context, secret: `${ns}/${cluster}-kubeconfig`, error: msg, detail: logDetail(e) },
          'kubeconfig Secret not read',
        );
        return;
      }
      w.setHealth('error', msg);
      this.onChange(this.index.poolsOfCluster(ns, cluster));
    }
  }

  stop(): void {
    for (const w of this.byCluster.values()) w.stop();
  }
}
