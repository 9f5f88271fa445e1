import 'server-only';
// One management cluster (a kubeconfig context): list+watch informers for the CAPI and CAPZ kinds a pool is
// made of, and a Node informer per workload cluster built from its `<cluster>-kubeconfig` Secret. Keeps its
// own indexed caches, tells the collector which pools changed, and reports its health as data. The caches and
// indexes (pool-index), workload clusters (workloads, workload-source), Events (pool-events), health
// (source-health) and a pool's input (pool-input) are modules of their own; this one starts, runs and stops them.

import type { KubeConfig } from '@kubernetes/client-node';
import { MACHINE_POOL_LABEL as POOL_LABEL, namespaceOf } from '@/lib/slim';
import type { SourceHealth, SourceState } from '@/lib/api-types';
import type { PoolInput } from '@/lib/pool-model';
import type { KubeObject } from '@/lib/unstructured';
import { scaleSetOfList } from '@/lib/provider-id';
import { agentPoolRefOf } from '../azure/aks-reader';
import { log } from '../log';
import { NO_AKS_KINDS, servedAksKinds, type AksKinds } from './aks-kinds';
import { PooledKubeConfig, callOptions, servedMachinePoolVersion } from './calls';
import { Informer } from './informer';
import { CALL_TIMEOUT_MS, readCapzVersion } from './one-off-calls';
import { type PoolEvent, PoolEvents } from './pool-events';
import { type KindName, PoolIndex } from './pool-index';
import { buildPoolInput } from './pool-input';
import { publicError } from './public-error';
import { KindHealth } from './source-health';
import { Workloads } from './workloads';

export type { SourceHealth } from '@/lib/api-types';
export type { PoolEvent } from './pool-events';

interface Kind {
  name: KindName;
  group: string;
  version: string;
  plural: string;
  labelSelector?: string;
}

/** Waits between discovery attempts while a management cluster does not answer. */
const DISCOVERY_BACKOFF_MS = [1000, 2000, 5000, 10_000, 30_000];

/** The Secret and CAPZ refresh tick, and how many ticks between reads of live workload clusters' Secrets. */
const REFRESH_TICK_MS = 60_000;
export const REFRESH_EVERY_TICKS = 5;

/** The informers of the AKS pool kinds the cluster serves. */
function aksInformerKinds(k: AksKinds): Kind[] {
  const infra = 'infrastructure.cluster.x-k8s.io';
  return [
    ...(k.ammp
      ? [{ name: 'ammp' as const, group: infra, version: 'v1beta1', plural: 'azuremanagedmachinepools' }]
      : []),
    ...(k.asomp
      ? [{ name: 'asomp' as const, group: infra, version: k.asomp, plural: 'azureasomanagedmachinepools' }]
      : []),
    ...(k.asoap
      ? [
          {
            name: 'asoap' as const,
            group: 'containerservice.azure.com',
            version: k.asoap,
            plural: 'managedclustersagentpools',
          },
        ]
      : []),
  ];
}

export class ContextSource {
  /** The caches of the CAPI and CAPZ kinds, by `namespace/name` (the index's: see PoolIndex). */
  readonly caches: Record<KindName, Map<string, KubeObject>>;
  private readonly index: PoolIndex;
  private readonly workloads: Workloads;
  private readonly events: PoolEvents;
  private readonly kindHealth: KindHealth;
  private readonly informers: Informer[] = [];
  private mpInformer: Informer | null = null;
  private secretTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** Ends a pause between discovery attempts (see connect). */
  private wakeOnStop: () => void = () => {};
  mpVersion = 'v1beta2';
  /** The AKS pool kinds the cluster serves, found by discovery at start: only those are watched. */
  aksKinds: AksKinds = NO_AKS_KINDS;
  /** Informer restarts after an error, by kind (`node` counts every workload cluster's Node informer). */
  readonly restarts = new Map<string, number>();
  /** The CAPZ controller's image tag (e.g. "v1.26.0"), when it can be read; it decides which readiness rules apply. */
  capzVersion: string | null = null;

  constructor(
    readonly context: string,
    private readonly kc: KubeConfig,
    /**
     * Called with pool keys (`namespace/name`) whose inputs changed; `urgent` for a change someone made to the
     * pool itself (its MachinePool's, AzureMachinePool's or Cluster's spec, annotations, labels or deletion).
     */
    private readonly onChange: (pools: string[], urgent?: boolean) => void,
    /** Called with Events about a pool's objects (MachinePool, AzureMachinePool, AMPMs, Machines). */
    onEvent: (pools: string[], event: PoolEvent) => void = () => {},
    /** The Secret refresh tick (tests shorten it). */
    private readonly refreshTickMs = REFRESH_TICK_MS,
  ) {
    this.index = new PoolIndex(onChange);
    this.caches = this.index.caches;
    this.workloads = new Workloads(context, kc, this.index, onChange, () => this.restarted('node'));
    this.events = new PoolEvents(kc, this.index, onEvent, () => this.restarted('event'));
    this.kindHealth = new KindHealth(context);
  }

  private restarted(kind: string): void {
    this.restarts.set(kind, (this.restarts.get(kind) ?? 0) + 1);
  }

  /**
   * Starts the source and returns at once (it reports its own state): API discovery, retried until the cluster
   * answers, then the informers; and the tick that reads Secrets and the CAPZ version. Nothing here waits on the
   * cluster, so one that hangs delays no other context.
   */
  async start(): Promise<void> {
    this.stopped = false;
    this.kindHealth.starting('discovery');
    // Kubeconfig Secrets are read one by one (get, not list/watch: poolscope needs no right to read every Secret):
    // when a Cluster appears, every minute while its workload cluster is not live (recoveries), and every five
    // minutes while it is (rotations); the CAPZ version and the AKS kinds served every five minutes. Each read is a
    // new TLS connection.
    let ticks = 0;
    this.secretTimer = setInterval(() => {
      const full = ++ticks % REFRESH_EVERY_TICKS === 0;
      void this.workloads.refreshWorkloads(full);
      if (full) void this.refreshCapzVersion();
      if (full) void this.refreshAksKinds();
    }, this.refreshTickMs);
    void this.connect();
  }

  /** Discovery until it answers (with backoff), then the informers and the CAPZ version. */
  private async connect(): Promise<void> {
    for (let attempt = 0; !this.stopped; attempt++) {
      try {
        this.mpVersion = await servedMachinePoolVersion(this.kc, callOptions(CALL_TIMEOUT_MS));
        this.aksKinds = await this.discoverAksKinds();
        this.kindHealth.delete('discovery');
        break;
      } catch (e) {
        this.setKindHealth('discovery', 'error', publicError(e, 'API discovery'));
        await this.pause(DISCOVERY_BACKOFF_MS[Math.min(attempt, DISCOVERY_BACKOFF_MS.length - 1)] as number);
      }
    }
    if (this.stopped) return;
    this.startInformers();
    await this.refreshCapzVersion();
  }

  /** Waits `ms`, or less when the source stops. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      this.wakeOnStop = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }

  private setKindHealth(kind: string, state: SourceHealth['state'], error?: string): void {
    // Every pool's source state changed.
    if (this.kindHealth.report(kind, state, error)) this.onChange(this.poolKeys());
  }

  /**
   * The informers of the CAPI and CAPZ kinds (the MachinePool's at the version discovered), of the AKS pool kinds
   * the cluster serves, and of Events.
   */
  private startInformers(): void {
    const kinds: Kind[] = [
      { name: 'mp', group: 'cluster.x-k8s.io', version: this.mpVersion, plural: 'machinepools' },
      { name: 'cluster', group: 'cluster.x-k8s.io', version: this.mpVersion, plural: 'clusters' },
      {
        name: 'machine',
        group: 'cluster.x-k8s.io',
        version: this.mpVersion,
        plural: 'machines',
        labelSelector: POOL_LABEL,
      },
      { name: 'amp', group: 'infrastructure.cluster.x-k8s.io', version: 'v1beta1', plural: 'azuremachinepools' },
      {
        name: 'ampm',
        group: 'infrastructure.cluster.x-k8s.io',
        version: 'v1beta1',
        plural: 'azuremachinepoolmachines',
      },
      ...aksInformerKinds(this.aksKinds),
    ];
    for (const k of kinds) this.startInformer(k);
    this.informers.push(this.events.start());
  }

  /**
   * AKS pool kinds the cluster has come to serve since the informers started (CAPZ's AKS CRDs or ASO installed
   * later) are watched from now on, and their pools analysed with them. A kind no longer served keeps its informer,
   * which reports the kind failing.
   */
  private async refreshAksKinds(): Promise<void> {
    if (this.stopped || !this.mpInformer) return;
    const served = await this.discoverAksKinds();
    const watched = new Set(aksInformerKinds(this.aksKinds).map((k) => k.name));
    const added = aksInformerKinds(served).filter((k) => !watched.has(k.name));
    if (added.length === 0 || this.stopped) return;
    this.aksKinds = {
      ammp: this.aksKinds.ammp || served.ammp,
      asomp: this.aksKinds.asomp ?? served.asomp,
      asoap: this.aksKinds.asoap ?? served.asoap,
    };
    log().info(
      { context: this.context, kinds: added.map((k) => k.plural) },
      'AKS pool kinds now served: watching them',
    );
    for (const k of added) this.startInformer(k);
    // Every pool's input may change: an AKS pool's infra object or ASO's agent pool is now read.
    this.onChange(this.poolKeys());
  }

  /** Starts the informer of one kind: its items are this source's cache of the kind. */
  private startInformer(k: Kind): void {
    const informer = new Informer({
      kc: this.kc,
      path: `/apis/${k.group}/${k.version}/${k.plural}`,
      kind: k.name,
      labelSelector: k.labelSelector,
      items: this.caches[k.name],
      onState: (st, error) => this.setKindHealth(k.name, st, error),
      onRestart: () => this.restarted(k.name),
      // A MachinePool's Machine is named after its AMPM: the two caches share their key strings.
      keysFrom: k.name === 'ampm' ? this.caches.machine : k.name === 'machine' ? this.caches.ampm : undefined,
    });
    informer.on('add', (o, _old, key) => this.upserted(k.name, o, key));
    informer.on('update', (o, old, key) => this.upserted(k.name, o, key, old));
    informer.on('delete', (o, _old, key) => this.removed(k.name, o, key));
    this.kindHealth.starting(k.name);
    informer.start();
    this.informers.push(informer);
    if (k.name === 'mp') this.mpInformer = informer;
  }

  /**
   * The AKS kinds the cluster serves. A failure here does not hold up the cluster's other kinds: poolscope then
   * watches none of them until the next refresh finds them, says so in its log, and its AKS pools' analyses say
   * their infra object was not found.
   */
  private async discoverAksKinds(): Promise<AksKinds> {
    try {
      return await servedAksKinds(this.kc, callOptions(CALL_TIMEOUT_MS));
    } catch (e) {
      log().warn(
        { context: this.context, error: publicError(e, 'AKS kinds discovery') },
        'AKS pool kinds not discovered',
      );
      return NO_AKS_KINDS;
    }
  }

  /** Reads the CAPZ version (see readCapzVersion); every pool's input changes with it. */
  private async refreshCapzVersion(): Promise<void> {
    const tag = await readCapzVersion(this.kc);
    if (tag !== this.capzVersion) {
      this.capzVersion = tag;
      this.onChange(this.poolKeys());
    }
  }

  /** After the informer stored `o` (replacing `old`): index it, tell which pools changed, deliver its Events parked. */
  private upserted(kind: KindName, o: KubeObject, k: string, old?: KubeObject): void {
    const ns = namespaceOf(o) ?? '';
    if (kind === 'cluster') this.workloads.clusterStored(ns, o, old);
    this.index.indexed(kind, o, k, ns, old);
    this.events.arrived(kind, o, ns, old);
  }

  /** After the informer dropped `o`. */
  private removed(kind: KindName, o: KubeObject, k: string): void {
    if (kind === 'cluster') this.workloads.clusterRemoved(k);
    this.index.removed(kind, o, k);
  }

  /**
   * The management cluster's health (its worst kind; while any is down, since the first went down, with that one's
   * error), then each workload cluster's.
   */
  health(): SourceHealth[] {
    return [this.kindHealth.overall(), ...this.workloads.health()];
  }

  /** State of the management cluster source, for the pool model. */
  kubeState(): SourceState {
    const h = this.health()[0] as SourceHealth;
    if (h.state === 'live') return { state: 'ok' };
    if (h.state === 'starting') return { state: 'unknown', reason: 'not listed yet' };
    return { state: 'unreachable', error: h.error ?? 'the management cluster does not answer' };
  }

  /**
   * The pool's scale set, lower-cased, without building its input: an AzureMachinePool's spec.providerID; for an
   * AzureManagedMachinePool, the node resource group's scale set its list names (CAPZ lists that scale set's VMs).
   * Null for an AzureASOManagedMachinePool: it lists Nodes, and its VMs are not read.
   */
  scaleSetOf(poolKey: string): string | null {
    const infra = this.index.infraOf(poolKey);
    if (infra?.kind === 'ammp') return scaleSetOfList(infra.obj?.spec?.providerIDList);
    const pid = infra?.kind === 'amp' ? infra.obj?.spec?.providerID : undefined;
    return typeof pid === 'string' ? pid.toLowerCase() : null;
  }

  /**
   * An AKS pool's agent pool ARM id, as ASO records it on its ManagedClustersAgentPool (`status.id`): null for a
   * self-managed pool, before ASO has made the agent pool, or when the id is not one (agentPoolRefOf).
   */
  agentPoolOf(poolKey: string): string | null {
    const id = (this.index.asoAgentPoolOf(poolKey)?.status as { id?: unknown } | undefined)?.id;
    return typeof id === 'string' && agentPoolRefOf(id) ? id : null;
  }

  /** The Azure region of a pool's scale set, from the AzureMachinePool's spec.location (null when absent). */
  regionOf(poolKey: string): string | null {
    const loc = this.index.ampOf(poolKey)?.spec?.location;
    return typeof loc === 'string' && loc ? loc.toLowerCase().replace(/\s+/g, '') : null;
  }

  /** Every pool of this context, as `namespace/name`. */
  poolKeys(): string[] {
    return [...this.caches.mp.keys()];
  }

  /**
   * Whether the MachinePools have been listed: from then on, a pool missing from the cache is gone from the
   * cluster (before, it may just not have arrived yet).
   */
  machinePoolsListed(): boolean {
    return (this.mpInformer?.lists ?? 0) > 0;
  }

  /** Whether the cluster has the MachinePool `namespace/name` (as the cache has it). */
  hasPool(poolKey: string): boolean {
    return this.caches.mp.has(poolKey);
  }

  /** The objects that make up one pool, as the pool model takes them; null when the MachinePool is gone. */
  poolInput(poolKey: string): PoolInput | null {
    return buildPoolInput(poolKey, this.index, this.workloads, this, this.aksKinds);
  }

  stop(): void {
    this.stopped = true;
    this.wakeOnStop();
    for (const i of this.informers) i.stop();
    this.workloads.stop();
    if (this.secretTimer) clearInterval(this.secretTimer);
    if (this.kc instanceof PooledKubeConfig) void this.kc.closeConnections();
  }
}
