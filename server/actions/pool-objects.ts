import 'server-only';
// Fresh reads and careful writes of one pool's objects on its management cluster, each call with a deadline:
// what a resync decides on must be what the API server holds now, not what a cache held a moment ago.

import { ApisApi, CoreV1Api, CustomObjectsApi, PatchStrategy, type KubeConfig } from '@kubernetes/client-node';
import { asoAgentPoolObjectName } from '@/lib/aks-model';
import type { InfraKind, PoolRef } from '@/lib/api-types';
import { AMPM_POOL_LABEL, MACHINE_POOL_LABEL } from '@/lib/slim';
import type { KubeObject } from '@/lib/unstructured';
import { servedAksKinds } from '../kube/aks-kinds';
import { callOptions, kubeFailure, servedMachinePoolVersion, type KubeFailure } from '../kube/calls';

const CAPI = 'cluster.x-k8s.io';
const INFRA = 'infrastructure.cluster.x-k8s.io';
const ASO = 'containerservice.azure.com';

/**
 * Each infra kind's resource, read and patched at v1beta1, CAPZ's storage version, but an AzureASOManagedMachinePool
 * at the version the cluster serves (v1alpha1 on CAPZ before v1.20).
 */
const INFRA_PLURALS: Record<InfraKind, string> = {
  AzureMachinePool: 'azuremachinepools',
  AzureManagedMachinePool: 'azuremanagedmachinepools',
  AzureASOManagedMachinePool: 'azureasomanagedmachinepools',
};

export const infraPlural = (kind: InfraKind): string => INFRA_PLURALS[kind];

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
  /** The infra object the MachinePool names, of its kind (null when it does not exist). */
  infraKind: InfraKind;
  infra: KubeObject | null;
  /** The same object when it is an AzureMachinePool (null for an AKS pool). */
  amp: KubeObject | null;
  /** An AKS pool's ASO ManagedClustersAgentPool (null: none; undefined: a self-managed pool, or ASO not served). */
  asoAgentPool?: KubeObject | null;
  cluster: KubeObject | null;
  ampms: KubeObject[];
  machines: KubeObject[];
  mpVersion: string;
}

/** The MachinePool version a cluster serves (v1beta2 preferred), remembered per context. */
const versions = new Map<string, Promise<string>>();
/** The ASO containerservice version a cluster prefers (null: not served), remembered per context. */
const asoVersions = new Map<string, Promise<string | null>>();
/** The AzureASOManagedMachinePool version a cluster serves, remembered per context. */
const asompVersions = new Map<string, Promise<string>>();

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

  /**
   * The infra object a MachinePool names: its kind (AzureMachinePool unless it names an AKS kind, as the collector
   * reads it) and its name (the MachinePool's own when it names none).
   */
  static infraOf(mp: KubeObject): { kind: InfraKind; name: string } {
    const ref = (mp.spec?.template as { spec?: { infrastructureRef?: { name?: string; kind?: string } } } | undefined)
      ?.spec?.infrastructureRef;
    const named = ref?.kind;
    const kind =
      named !== undefined && named !== 'AzureMachinePool' && Object.hasOwn(INFRA_PLURALS, named)
        ? (named as InfraKind)
        : 'AzureMachinePool';
    return { kind, name: ref?.name ?? String(mp.metadata?.name) };
  }

  async infraObject(kind: InfraKind, name: string): Promise<KubeObject | null> {
    return this.get(INFRA, await this.infraVersion(kind), INFRA_PLURALS[kind], name);
  }

  private async infraVersion(kind: InfraKind): Promise<string> {
    if (kind !== 'AzureASOManagedMachinePool') return 'v1beta1';
    let v = asompVersions.get(this.ref.context);
    if (!v) {
      v = this.call('discovering the AzureASOManagedMachinePool version', async () => {
        return (await servedAksKinds(this.kc, callOptions(this.timeoutMs))).asomp ?? 'v1beta1';
      });
      asompVersions.set(this.ref.context, v);
      v.catch(() => asompVersions.delete(this.ref.context));
    }
    return v;
  }

  private async asoVersion(): Promise<string | null> {
    let v = asoVersions.get(this.ref.context);
    if (!v) {
      v = this.call('discovering the ASO containerservice version', async () => {
        const groups = (await this.kc.makeApiClient(ApisApi).getAPIVersions(callOptions(this.timeoutMs))).groups;
        const g = groups.find((x) => x.name === ASO);
        return g?.preferredVersion?.version ?? g?.versions[0]?.version ?? null;
      });
      asoVersions.set(this.ref.context, v);
      // Not served (null) is not remembered: ASO installed later is found at the next resync.
      v.then((x) => x === null && asoVersions.delete(this.ref.context)).catch(() =>
        asoVersions.delete(this.ref.context),
      );
    }
    return v;
  }

  /** An AKS infra object's ASO agent pool object: null when there is none, undefined when ASO is not served. */
  private async asoAgentPool(infra: KubeObject, kind: InfraKind): Promise<KubeObject | null | undefined> {
    const version = await this.asoVersion();
    const name = asoAgentPoolObjectName(infra, kind === 'AzureManagedMachinePool' ? 'ammp' : 'asomp');
    if (version === null) return undefined;
    // The name is read from a cluster object: only a Kubernetes object name goes into the field selector.
    if (name === null || !/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(name)) return null;
    // A list by name: the collector's read role lists these objects, and the resync needs no more rights. Without it
    // the verdict reads ASO's state as unknown: a resync is not refused for what would only explain it.
    try {
      const { items } = (await this.custom.listNamespacedCustomObject(
        {
          group: ASO,
          version,
          plural: 'managedclustersagentpools',
          namespace: this.ref.namespace,
          fieldSelector: `metadata.name=${name}`,
        },
        callOptions(this.timeoutMs),
      )) as { items: KubeObject[] };
      return items[0] ?? null;
    } catch {
      return undefined;
    }
  }

  /** Everything the pool model needs from the management cluster, read now. */
  async read(mp: KubeObject): Promise<FreshPool> {
    const version = await this.mpVersion();
    const ns = this.ref.namespace;
    const { kind, name: ampName } = PoolObjects.infraOf(mp);
    const clusterName = String(mp.spec?.clusterName ?? '');
    const cluster = () => (clusterName ? this.get(CAPI, version, 'clusters', clusterName) : Promise.resolve(null));
    if (kind !== 'AzureMachinePool') {
      // An AKS pool has no AzureMachinePoolMachines and no Machines.
      const [infra, c] = await Promise.all([this.infraObject(kind, ampName), cluster()]);
      const asoAgentPool = infra ? await this.asoAgentPool(infra, kind) : null;
      return {
        mp,
        infraKind: kind,
        infra,
        amp: null,
        asoAgentPool,
        cluster: c,
        ampms: [],
        machines: [],
        mpVersion: version,
      };
    }
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
    const [amp, c, ampms, machines] = await Promise.all([
      this.infraObject('AzureMachinePool', ampName),
      cluster(),
      list(INFRA, 'v1beta1', 'azuremachinepoolmachines', `${AMPM_POOL_LABEL}=${ampName}`),
      list(CAPI, version, 'machines', `${MACHINE_POOL_LABEL}=${this.ref.name}`),
    ]);
    return { mp, infraKind: kind, infra: amp, amp, cluster: c, ampms, machines, mpVersion: version };
  }

  /** Merge-patches an annotation; returns the object as the API server stored (or, dry run, would store) it. */
  async annotate(
    kind: 'MachinePool' | InfraKind,
    name: string,
    key: string,
    value: string,
    dryRun: boolean,
  ): Promise<KubeObject> {
    const [group, version, plural] =
      kind === 'MachinePool'
        ? [CAPI, await this.mpVersion(), 'machinepools']
        : [INFRA, await this.infraVersion(kind), INFRA_PLURALS[kind]];
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
