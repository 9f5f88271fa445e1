import 'server-only';
// Fresh reads and careful writes of one pool's objects on its management cluster, each call with a deadline:
// what a resync decides on must be what the API server holds now, not what a cache held a moment ago.

import { CoreV1Api, CustomObjectsApi, PatchStrategy, type KubeConfig } from '@kubernetes/client-node';
import type { PoolRef } from '@/lib/api-types';
import { AMPM_POOL_LABEL, MACHINE_POOL_LABEL } from '@/lib/slim';
import type { KubeObject } from '@/lib/unstructured';
import { callOptions, kubeFailure, servedMachinePoolVersion, type KubeFailure } from '../kube/calls';

const CAPI = 'cluster.x-k8s.io';
const INFRA = 'infrastructure.cluster.x-k8s.io';

export class KubeCallError extends Error {
  constructor(
    readonly failure: KubeFailure,
    readonly what: string,
  ) {
    super(`${what}: ${failure.message}`);
  }
}

export interface FreshPool {
  mp: KubeObject;
  amp: KubeObject | null;
  cluster: KubeObject | null;
  ampms: KubeObject[];
  machines: KubeObject[];
  mpVersion: string;
}

/** The MachinePool version a cluster serves (v1beta2 preferred), remembered per context. */
const versions = new Map<string, Promise<string>>();

export const listOf = (o: KubeObject | null | undefined): string[] | undefined => {
  const l = (o?.spec as { providerIDList?: unknown } | undefined)?.providerIDList;
  return Array.isArray(l) ? l.map(String) : undefined;
};

export const rvOf = (o: KubeObject | null | undefined): string | null => o?.metadata?.resourceVersion ?? null;

export class PoolObjects {
  private readonly custom: CustomObjectsApi;

  constructor(
    private readonly kc: KubeConfig,
    readonly ref: PoolRef,
    private readonly timeoutMs: number,
  ) {
    this.custom = kc.makeApiClient(CustomObjectsApi);
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw new KubeCallError(kubeFailure(e), what);
    }
  }

  async mpVersion(): Promise<string> {
    let v = versions.get(this.ref.context);
    if (!v) {
      v = this.call('discovering the Cluster API version', () =>
        servedMachinePoolVersion(this.kc, callOptions(this.timeoutMs)),
      );
      versions.set(this.ref.context, v);
      v.catch(() => versions.delete(this.ref.context));
    }
    return v;
  }

  /** null when the object does not exist. */
  private async get(group: string, version: string, plural: string, name: string): Promise<KubeObject | null> {
    try {
      return (await this.custom.getNamespacedCustomObject(
        { group, version, plural, namespace: this.ref.namespace, name },
        callOptions(this.timeoutMs),
      )) as KubeObject;
    } catch (e) {
      const f = kubeFailure(e);
      if (f.status === 404) return null;
      throw new KubeCallError(f, `reading ${plural} ${this.ref.namespace}/${name}`);
    }
  }

  async machinePool(): Promise<KubeObject | null> {
    return this.get(CAPI, await this.mpVersion(), 'machinepools', this.ref.name);
  }

  static ampName(mp: KubeObject): string {
    return (
      (mp.spec?.template as { spec?: { infrastructureRef?: { name?: string } } } | undefined)?.spec?.infrastructureRef
        ?.name ?? String(mp.metadata?.name)
    );
  }

  async azureMachinePool(name: string): Promise<KubeObject | null> {
    return this.get(INFRA, 'v1beta1', 'azuremachinepools', name);
  }

  /** Everything the pool model needs from the management cluster, read now. */
  async read(mp: KubeObject): Promise<FreshPool> {
    const version = await this.mpVersion();
    const ns = this.ref.namespace;
    const ampName = PoolObjects.ampName(mp);
    const clusterName = String(mp.spec?.clusterName ?? '');
    const list = (group: string, v: string, plural: string, labelSelector: string) =>
      this.call(
        `listing ${plural}`,
        async () =>
          (
            (await this.custom.listNamespacedCustomObject(
              { group, version: v, plural, namespace: ns, labelSelector },
              callOptions(this.timeoutMs),
            )) as { items: KubeObject[] }
          ).items,
      );
    const [amp, cluster, ampms, machines] = await Promise.all([
      this.azureMachinePool(ampName),
      clusterName ? this.get(CAPI, version, 'clusters', clusterName) : Promise.resolve(null),
      list(INFRA, 'v1beta1', 'azuremachinepoolmachines', `${AMPM_POOL_LABEL}=${ampName}`),
      list(CAPI, version, 'machines', `${MACHINE_POOL_LABEL}=${this.ref.name}`),
    ]);
    return { mp, amp, cluster, ampms, machines, mpVersion: version };
  }

  /** Merge-patches an annotation; returns the object as the API server stored (or, dry run, would store) it. */
  async annotate(
    kind: 'MachinePool' | 'AzureMachinePool',
    name: string,
    key: string,
    value: string,
    dryRun: boolean,
  ): Promise<KubeObject> {
    const [group, version, plural] =
      kind === 'MachinePool' ? [CAPI, await this.mpVersion(), 'machinepools'] : [INFRA, 'v1beta1', 'azuremachinepools'];
    return this.call(
      `annotating ${kind} ${this.ref.namespace}/${name}`,
      async () =>
        (await this.custom.patchNamespacedCustomObject(
          {
            group,
            version,
            plural,
            namespace: this.ref.namespace,
            name,
            body: { metadata: { annotations: { [key]: value } } },
            fieldManager: 'poolscope',
            ...(dryRun ? { dryRun: 'All' } : {}),
          },
          callOptions(this.timeoutMs, PatchStrategy.MergePatch),
        )) as KubeObject,
    );
  }

  /**
   * Sets MachinePool spec.providerIDList with a JSON patch whose `test` pins the list it replaces (or, when the
   * field is absent, the resourceVersion): a controller that wrote in between makes the patch fail, never lose.
   */
  async setProviderIdList(mp: KubeObject, target: string[], dryRun: boolean): Promise<KubeObject> {
    const current = listOf(mp);
    const ops = current
      ? [
          { op: 'test', path: '/spec/providerIDList', value: current },
          { op: 'replace', path: '/spec/providerIDList', value: target },
        ]
      : [
          { op: 'test', path: '/metadata/resourceVersion', value: rvOf(mp) },
          { op: 'add', path: '/spec/providerIDList', value: target },
        ];
    return this.call(
      `patching MachinePool ${this.ref.namespace}/${this.ref.name}`,
      async () =>
        (await this.custom.patchNamespacedCustomObject(
          {
            group: CAPI,
            version: await this.mpVersion(),
            plural: 'machinepools',
            namespace: this.ref.namespace,
            name: this.ref.name,
            body: ops,
            fieldManager: 'poolscope',
            ...(dryRun ? { dryRun: 'All' } : {}),
          },
          callOptions(this.timeoutMs, PatchStrategy.JsonPatch),
        )) as KubeObject,
    );
  }

  /** Records a core/v1 Event on the MachinePool; returns its name. */
  async event(mp: KubeObject, type: 'Normal' | 'Warning', message: string, instance: string): Promise<string> {
    const now = new Date();
    const name = `${this.ref.name}.${now.getTime().toString(16)}${Math.floor(Math.random() * 0xffff).toString(16)}`;
    await this.call('recording the Event', () =>
      this.kc.makeApiClient(CoreV1Api).createNamespacedEvent(
        {
          namespace: this.ref.namespace,
          body: {
            metadata: { name, namespace: this.ref.namespace },
            involvedObject: {
              apiVersion: String(mp.apiVersion),
              kind: 'MachinePool',
              name: this.ref.name,
              namespace: this.ref.namespace,
              uid: mp.metadata?.uid,
              resourceVersion: rvOf(mp) ?? undefined,
            },
            reason: 'PoolscopeResync',
            message,
            type,
            source: { component: 'poolscope' },
            reportingComponent: 'poolscope',
            reportingInstance: instance,
            firstTimestamp: now,
            lastTimestamp: now,
            count: 1,
          },
        },
        callOptions(this.timeoutMs),
      ),
    );
    return name;
  }
}
