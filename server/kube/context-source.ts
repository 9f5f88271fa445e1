import 'server-only';
// One management cluster (a kubeconfig context): list+watch informers for the CAPI and CAPZ kinds a pool is
// made of, and a Node informer per workload cluster built from its `<cluster>-kubeconfig` Secret. Keeps its
// own indexed caches, tells the collector which pools changed, and reports its health as data.

import type { KubeConfig } from '@kubernetes/client-node';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import {
  AMPM_POOL_LABEL,
  MACHINE_POOL_LABEL as POOL_LABEL,
  labelOf,
  nameOf,
  namespaceOf,
  providerIdOf,
} from '@/lib/slim';
import type { SourceHealth, SourceState } from '@/lib/api-types';
import type { DepartedAmpm, PoolInput } from '@/lib/pool-model';
import { OTHER_SCALE_SET, joinKey, namedScaleSetKey, scaleSetKeyOf } from '@/lib/provider-id';
import type { KubeObject } from '@/lib/unstructured';
import { log } from '../log';
import { PooledKubeConfig, callOptions, servedMachinePoolVersion } from './calls';
import { EventMemory, latestEventTime } from './event-memory';
import { Informer } from './informer';
import { LocalFailure, logDetail, publicError } from './public-error';
import {
  UnsafeKubeconfigError,
  controlPlaneEndpointOf,
  parseWorkloadKubeconfig,
  workloadKubeConfig,
  type ControlPlaneEndpoint,
} from './workload-kubeconfig';

export type { SourceHealth } from '@/lib/api-types';

interface Kind {
  name: 'mp' | 'amp' | 'ampm' | 'machine' | 'cluster';
  group: string;
  version: string;
  plural: string;
  labelSelector?: string;
}

/** The tag of an image reference ("…/cluster-api-azure-controller:v1.26.0" → "v1.26.0"); null for a digest or none. */
export function imageTag(image: string | undefined): string | null {
  if (!image || image.includes('@')) return null;
  const last = image.split('/').pop() ?? '';
  const i = last.lastIndexOf(':');
  return i >= 0 ? last.slice(i + 1) || null : null;
}

/**
 * How long a deleted AMPM is remembered (PoolInput.departedAmpms): well beyond the longest wait for a pool's next
 * Azure read (its 2-minute slow lane, or a budget shared by many moving pools).
 */
const DEPARTED_MS = 15 * 60_000;

const key = (o: { metadata?: { name?: string; namespace?: string } }) =>
  `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

function addTo(index: Map<string, Set<string>>, k: string, name: string): void {
  const set = index.get(k);
  if (set) set.add(name);
  else index.set(k, new Set([name]));
}

const DOWN = new Set<SourceHealth['state']>(['stale', 'error']);

/**
 * A source's health after a report of `state` (and `error`): the same object when nothing changed. `since` is when
 * the source entered its state, and one outage is one: moving between stale and error, or a new error text, keeps
 * the time the source went down.
 */
export function nextHealth(
  prev: SourceHealth,
  state: SourceHealth['state'],
  error?: string,
  now = new Date(),
): SourceHealth {
  if (prev.state === state && prev.error === error) return prev;
  const since = prev.state === state || (DOWN.has(prev.state) && DOWN.has(state)) ? prev.since : now.toISOString();
  const { error: _old, ...rest } = prev;
  return { ...rest, state, since, ...(error ? { error } : {}) };
}

/** The key of a scale set's resource group's flexible VMs (see scaleSetKeyOf), which a pool's Nodes may be. */
function flexKeyOf(scaleSetKey: string): string {
  return `${scaleSetKey.slice(0, scaleSetKey.lastIndexOf('/'))}/~flex`;
}

/**
 * Per list: the join keys of its IDs outside a given scale set (and its flexible VMs), with that scale set.
 * A pool's list names its own scale set's VMs, whose Nodes its scale set finds: only the rest (usually none)
 * need looking up by ID, so no list's every ID is kept lower-cased.
 */
const listForeignKeys = new WeakMap<object, { scaleSet: string | null; keys: string[] }>();

function foreignKeysOf(list: unknown, scaleSetKey: string | null): string[] {
  if (!Array.isArray(list)) return [];
  const hit = listForeignKeys.get(list);
  if (hit && hit.scaleSet === scaleSetKey) return hit.keys;
  const own = scaleSetKey === null ? [] : [scaleSetKey, flexKeyOf(scaleSetKey)];
  const keys = [
    ...new Set(
      list.filter((id): id is string => typeof id === 'string' && !own.includes(scaleSetKeyOf(id))).map(joinKey),
    ),
  ];
  listForeignKeys.set(list, { scaleSet: scaleSetKey, keys });
  return keys;
}

/** A providerID list's strings as a set, built once per list (like {@link foreignKeysOf}). */
const listRawIds = new WeakMap<object, Set<unknown>>();

function rawIdsOf(list: unknown): Set<unknown> | null {
  if (!Array.isArray(list)) return null;
  let ids = listRawIds.get(list);
  if (!ids) {
    ids = new Set(list);
    listRawIds.set(list, ids);
  }
  return ids;
}

function removeFrom(index: Map<string, Set<string>>, k: string, name: string): void {
  const set = index.get(k);
  if (!set) return;
  set.delete(name);
  if (set.size === 0) index.delete(k);
}

class WorkloadSource {
  nodes = new Map<string, KubeObject>();
  /**
   * Node names by where their providerID points and by the ID itself (case-insensitive): a pool's analysis
   * takes its own Nodes, not the cluster's thousands, and a Node's change concerns its own pool.
   */
  private readonly byScaleSet = new Map<string, Set<string>>();
  health: SourceHealth;
  private informer: Informer | null = null;
  /** The running informer's KubeConfig: its connections are closed with it. */
  private kc: PooledKubeConfig | null = null;
  listed = false;
  /** The kubeconfig (and endpoint) the running informer was built from, to restart only when either changes. */
  kubeconfig: string | null = null;

  constructor(
    readonly cluster: string,
    private readonly namespace: string,
    context: string,
    /** The Nodes that changed (none: every pool's input changed, e.g. the source's state). */
    private readonly onChange: (nodes: KubeObject[]) => void,
    private readonly onRestart: () => void = () => {},
  ) {
    this.health = { name: cluster, context, kind: 'workload', state: 'starting', since: new Date().toISOString() };
  }

  /** Files a Node's name (`name`: the informer's key for it, the cache's string) under its scale set, or takes it out. */
  private index(o: KubeObject, add: boolean, name: string): void {
    (add ? addTo : removeFrom)(this.byScaleSet, scaleSetKeyOf(providerIdOf(o)), name);
  }

  /**
   * The Nodes whose providerID has this join key: looked for among their scale set's Nodes (a rare lookup — an
   * ID outside the pool's own scale set — which is why no index by ID is kept: it held a lower-cased copy of
   * every Node's providerID).
   */
  private byJoinKey(key: string): Set<string> {
    const out = new Set<string>();
    // The key is the ID lower-cased without `azure://`: its scale set's Nodes, and those whose providerID does
    // not parse (filed apart, and one of them may have the same key: the prefix missing).
    for (const where of new Set([scaleSetKeyOf(`azure://${key}`), OTHER_SCALE_SET])) {
      for (const n of this.byScaleSet.get(where) ?? []) {
        const pid = providerIdOf(this.nodes.get(n) ?? {});
        if (typeof pid === 'string' && joinKey(pid) === key) out.add(n);
      }
    }
    return out;
  }

  /**
   * The Nodes a pool's analysis can join: those in its scale set (and, for flexible orchestration, its
   * resource group's flexible VMs), and those whose providerID another of its sources names.
   */
  nodesFor(scaleSetKey: string | null, ids: PoolIds): KubeObject[] {
    const names = new Set<string>();
    const take = (set: Set<string> | undefined) => {
      if (set) for (const n of set) names.add(n);
    };
    if (scaleSetKey) {
      take(this.byScaleSet.get(scaleSetKey));
      take(this.byScaleSet.get(flexKeyOf(scaleSetKey)));
    }
    // A listed ID in the pool's own scale set names a Node taken above already: only the others (found once
    // per list) are looked up. An AMPM's or Machine's ID is nearly always in a list (found there by its exact
    // string), so it is lower-cased only when it is not.
    for (const list of ids.lists) for (const k of foreignKeysOf(list, scaleSetKey)) take(this.byJoinKey(k));
    const listed = ids.lists.map(rawIdsOf);
    for (const objects of ids.objects) {
      for (const o of objects) {
        const id = providerIdOf(o);
        if (typeof id === 'string' && !listed.some((l) => l?.has(id))) take(this.byJoinKey(joinKey(id)));
      }
    }
    const out: KubeObject[] = [];
    for (const n of names) {
      const node = this.nodes.get(n);
      if (node) out.push(node);
    }
    return out;
  }

  /** (Re)starts the Node informer with a Secret's kubeconfig, or reports why poolscope will not use it. */
  start(kubeconfigYaml: string, endpoint: ControlPlaneEndpoint | null): void {
    this.stop();
    let kc: PooledKubeConfig;
    try {
      kc = workloadKubeConfig(parseWorkloadKubeconfig(kubeconfigYaml, endpoint));
    } catch (e) {
      const why = e instanceof UnsafeKubeconfigError ? e.message : 'it cannot be read';
      this.setHealth(
        'error',
        `poolscope does not use the kubeconfig in Secret ${this.namespace}/${this.cluster}-kubeconfig: ${why}`,
      );
      return;
    }
    this.kc = kc;
    const informer = new Informer({
      kc,
      path: '/api/v1/nodes',
      kind: 'node',
      items: this.nodes,
      onState: (st, error) => {
        if (st === 'live') this.listed = true;
        const changed = this.health.state !== st || this.health.error !== error;
        this.setHealth(st, error);
        if (changed) this.onChange([]);
      },
      onRestart: this.onRestart,
    });
    informer.on('add', (o, _old, k) => {
      this.index(o, true, k);
      this.onChange([o]);
    });
    informer.on('update', (o, old, k) => {
      // Moved only when its scale set changed: the index keeps the name string the cache keeps (see indexed).
      if (!old || scaleSetKeyOf(providerIdOf(old)) !== scaleSetKeyOf(providerIdOf(o))) {
        if (old) this.index(old, false, k);
        this.index(o, true, k);
      }
      this.onChange(old ? [o, old] : [o]);
    });
    informer.on('delete', (o, _old, k) => {
      this.index(o, false, k);
      this.onChange([o]);
    });
    informer.start();
    this.informer = informer;
  }

  setHealth(state: SourceHealth['state'], error?: string): void {
    this.health = nextHealth(this.health, state, error);
  }

  /** Whether a Node informer runs (with the last kubeconfig that was accepted). */
  get running(): boolean {
    return this.informer !== null;
  }

  /** What a pool's model gets: its Nodes (see nodesFor), or why they are not known. */
  data(scaleSetKey: string | null, ids: PoolIds): PoolInput['workload'] {
    if (this.health.state === 'live' && this.listed) return { state: 'ok', nodes: this.nodesFor(scaleSetKey, ids) };
    if (this.health.state === 'starting') return { state: 'unknown', reason: 'the workload cluster is not listed yet' };
    return { state: 'unreachable', error: this.health.error ?? 'the workload cluster does not answer' };
  }

  stop(): void {
    this.informer?.stop();
    this.informer = null;
    void this.kc?.closeConnections();
    this.kc = null;
  }
}

/** A Kubernetes Event about one of a pool's objects. */
export interface PoolEvent {
  uid: string;
  reason: string;
  message: string;
  type: string;
  object: string;
  time: string;
  /** How many times it happened so far (Event.count). */
  count: number;
}

/** The deadline of a one-off call (discovery, a Secret, the CAPZ Deployment). */
const CALL_TIMEOUT_MS = 10_000;

/** Waits between discovery attempts while a management cluster does not answer. */
const DISCOVERY_BACKOFF_MS = [1000, 2000, 5000, 10_000, 30_000];

/** The Secret and CAPZ refresh tick, and how many ticks between reads of live workload clusters' Secrets. */
const REFRESH_TICK_MS = 60_000;
export const REFRESH_EVERY_TICKS = 5;

/** The Event `involvedObject.kind` of each cached kind that Events are about. */
const EVENT_KIND_OF: Partial<Record<Kind['name'], string>> = {
  mp: 'MachinePool',
  amp: 'AzureMachinePool',
  ampm: 'AzureMachinePoolMachine',
  machine: 'Machine',
};

/** The kinds whose Events are recorded. */
const EVENT_KINDS = new Set(Object.values(EVENT_KIND_OF));

/** Events waiting for their object, at most (see ContextSource's `parked`). */
const PARKED_EVENTS = 1000;

/**
 * Whether an update of a pool-level object (MachinePool, AzureMachinePool, Cluster) is someone acting on the
 * pool (spec but its providerIDList, annotations, labels, deletion) rather than a controller writing status or
 * the lists: those are analysed first, ahead of a fleet's instance churn.
 */
function userChange(o: KubeObject, old: KubeObject | undefined): boolean {
  if (!old) return true;
  const a = o.metadata ?? {};
  const b = old.metadata ?? {};
  return (
    (a.generation !== b.generation && ownSpec(o) !== ownSpec(old)) ||
    a.deletionTimestamp !== b.deletionTimestamp ||
    JSON.stringify(a.annotations ?? {}) !== JSON.stringify(b.annotations ?? {}) ||
    JSON.stringify(a.labels ?? {}) !== JSON.stringify(b.labels ?? {})
  );
}

/**
 * A spec's JSON but its providerIDList: CAPZ and CAPI write the lists as instances come and go (a new
 * generation each time, a few times a minute per pool under churn), which is not someone acting on the pool.
 */
function ownSpec(o: KubeObject): string {
  const { providerIDList: _lists, ...rest } = (o.spec ?? {}) as Record<string, unknown>;
  return JSON.stringify(rest);
}

/**
 * Every providerID a pool's Kubernetes objects name: its two lists, and (`providerIdOf`) its AMPMs' and
 * Machines' IDs — read where they are used, not gathered into arrays at every analysis.
 */
interface PoolIds {
  lists: unknown[];
  objects: readonly (readonly KubeObject[])[];
}

/** The objects of a cache that an index names (one array, built as the index is read: this runs at every analysis). */
function cached(cache: Map<string, KubeObject>, keys: Set<string> | undefined): KubeObject[] {
  const out: KubeObject[] = [];
  if (keys) {
    for (const k of keys) {
      const o = cache.get(k);
      if (o) out.push(o);
    }
  }
  return out;
}

function poolIds(mp: KubeObject, amp: KubeObject | null, ampms: KubeObject[], machines: KubeObject[]): PoolIds {
  return { lists: [mp.spec?.providerIDList, amp?.spec?.providerIDList], objects: [ampms, machines] };
}

export class ContextSource {
  readonly caches: Record<Kind['name'], Map<string, KubeObject>> = {
    mp: new Map(),
    amp: new Map(),
    ampm: new Map(),
    machine: new Map(),
    cluster: new Map(),
  };
  /** AMPM keys by `${namespace}/${amp name}`; Machine keys by `${namespace}/${pool name}`. */
  private readonly ampmsByAmp = new Map<string, Set<string>>();
  /** AMPMs deleted lately, by AzureMachinePool (`namespace/name`), oldest first: see PoolInput.departedAmpms. */
  private readonly departed = new Map<string, DepartedAmpm[]>();
  private readonly machinesByPool = new Map<string, Set<string>>();
  /** MachinePool keys by `namespace/cluster` and by `namespace/AzureMachinePool name` (see indexMp). */
  private readonly mpsByCluster = new Map<string, Set<string>>();
  private readonly mpsByAmp = new Map<string, Set<string>>();
  private readonly workloads = new Map<string, WorkloadSource>();
  private readonly informers: Informer[] = [];
  private mpInformer: Informer | null = null;
  private readonly kindHealth = new Map<string, SourceHealth>();
  private secretTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** Ends a pause between discovery attempts (see connect). */
  private wakeOnStop: () => void = () => {};
  mpVersion = 'v1beta2';
  /** Informer restarts after an error, by kind (`node` counts every workload cluster's Node informer). */
  readonly restarts = new Map<string, number>();

  private restarted(kind: string): void {
    this.restarts.set(kind, (this.restarts.get(kind) ?? 0) + 1);
  }
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
    private readonly onEvent: (pools: string[], event: PoolEvent) => void = () => {},
    /** The Secret refresh tick (tests shorten it). */
    private readonly refreshTickMs = REFRESH_TICK_MS,
  ) {}

  /** Which pools an Event's object belongs to. */
  private poolsOfEvent(ns: string, kind: string, name: string): string[] {
    if (kind === 'MachinePool') return [`${ns}/${name}`];
    if (kind === 'AzureMachinePool') return this.poolsOfAmp(ns, name);
    if (kind === 'AzureMachinePoolMachine') {
      const a = this.caches.ampm.get(`${ns}/${name}`);
      return a ? this.poolsOfAmp(ns, String(a.metadata?.labels?.[AMPM_POOL_LABEL])) : [];
    }
    const m = this.caches.machine.get(`${ns}/${name}`);
    return m ? [`${ns}/${m.metadata?.labels?.[POOL_LABEL]}`] : [];
  }

  private startEvents(): void {
    // Events are not kept: only their arrival matters (`seen` tells a relist's replays from new ones).
    const informer = new Informer({
      kc: this.kc,
      path: '/api/v1/events',
      kind: 'event',
      keep: false,
      onRestart: () => this.restarted('event'),
    });
    const seen = new EventMemory();
    const handle = (o: KubeObject) => {
      const e = o as {
        metadata?: { uid?: string; namespace?: string };
        involvedObject?: { kind?: string; name?: string };
        reason?: string;
        message?: string;
        type?: string;
        count?: number;
        lastTimestamp?: string;
        eventTime?: string;
        firstTimestamp?: string;
      };
      const kind = e.involvedObject?.kind ?? '';
      if (!EVENT_KINDS.has(kind)) return;
      const id = `${e.metadata?.uid}:${e.count ?? 1}`;
      if (!seen.news(id, latestEventTime(e), informer.lists === 0, Date.now())) return;
      const ns = String(e.metadata?.namespace);
      const name = String(e.involvedObject?.name);
      const ev: PoolEvent = {
        uid: id,
        reason: e.reason ?? 'Unknown',
        message: e.message ?? '',
        type: e.type ?? 'Normal',
        object: `${kind}/${name}`,
        count: e.count ?? 1,
        time: e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? new Date().toISOString(),
      };
      const pools = this.poolsOfEvent(ns, kind, name);
      if (pools.length) this.onEvent(pools, ev);
      else this.park(`${ns}/${kind}/${name}`, ev);
    };
    informer.on('add', handle);
    informer.on('update', handle);
    informer.start();
    this.informers.push(informer);
  }

  /**
   * Starts the source and returns at once (it reports its own state): API discovery, retried until the cluster
   * answers, then the informers; and the tick that reads Secrets and the CAPZ version. Nothing here waits on the
   * cluster, so one that hangs delays no other context.
   */
  async start(): Promise<void> {
    this.stopped = false;
    this.kindHealth.set('discovery', {
      name: this.context,
      context: this.context,
      kind: 'management',
      state: 'starting',
      since: new Date().toISOString(),
    });
    // Kubeconfig Secrets are read one by one (get, not list/watch: poolscope needs no right to read every Secret):
    // when a Cluster appears, every minute while its workload cluster is not live (recoveries), and every five
    // minutes while it is (rotations); the CAPZ version every five minutes. Each read is a new TLS connection.
    let ticks = 0;
    this.secretTimer = setInterval(() => {
      const full = ++ticks % REFRESH_EVERY_TICKS === 0;
      void this.refreshWorkloads(full);
      if (full) void this.refreshCapzVersion();
    }, this.refreshTickMs);
    void this.connect();
  }

  /** Discovery until it answers (with backoff), then the informers and the CAPZ version. */
  private async connect(): Promise<void> {
    for (let attempt = 0; !this.stopped; attempt++) {
      try {
        this.mpVersion = await servedMachinePoolVersion(this.kc, callOptions(CALL_TIMEOUT_MS));
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
    const prev = this.kindHealth.get(kind) ?? {
      name: this.context,
      context: this.context,
      kind: 'management' as const,
      state: 'starting' as const,
      since: new Date().toISOString(),
    };
    const next = nextHealth(prev, state, error);
    if (next === prev) return;
    this.kindHealth.set(kind, next);
    // Every pool's source state changed.
    this.onChange(this.poolKeys());
  }

  /** The informers of the CAPI and CAPZ kinds (the MachinePool's at the version discovered) and of Events. */
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
    ];
    for (const k of kinds) {
      // The informer's items are this source's cache of the kind.
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
      this.kindHealth.set(k.name, {
        name: this.context,
        context: this.context,
        kind: 'management',
        state: 'starting',
        since: new Date().toISOString(),
      });
      informer.start();
      this.informers.push(informer);
      if (k.name === 'mp') this.mpInformer = informer;
    }
    this.startEvents();
  }

  /**
   * Reads the CAPZ controller image: the Deployment `capz-system/capz-controller-manager` that `clusterctl init`
   * creates, else any Deployment labelled as the Azure infrastructure provider. Unknown (null) when neither can
   * be read; the diagnosis then gives advice that holds for every CAPZ version.
   */
  private async refreshCapzVersion(): Promise<void> {
    const apps = this.kc.makeApiClient(AppsV1Api);
    let image: string | undefined;
    try {
      const d = await apps.readNamespacedDeployment(
        { name: 'capz-controller-manager', namespace: 'capz-system' },
        callOptions(CALL_TIMEOUT_MS),
      );
      image =
        d.spec?.template.spec?.containers.find((c) => c.name === 'manager')?.image ??
        d.spec?.template.spec?.containers[0]?.image;
    } catch {
      try {
        const list = await apps.listDeploymentForAllNamespaces(
          { labelSelector: 'cluster.x-k8s.io/provider=infrastructure-azure' },
          callOptions(CALL_TIMEOUT_MS),
        );
        image = list.items[0]?.spec?.template.spec?.containers.find((c) => c.name === 'manager')?.image;
      } catch {
        image = undefined;
      }
    }
    const tag = imageTag(image);
    if (tag !== this.capzVersion) {
      this.capzVersion = tag;
      this.onChange(this.poolKeys());
    }
  }

  /**
   * The management cluster's health (its worst kind; while any is down, since the first went down, with that one's
   * error), then each workload cluster's.
   */
  health(): SourceHealth[] {
    const kinds = [...this.kindHealth.values()];
    const down = kinds.filter((h) => DOWN.has(h.state)).sort((a, b) => a.since.localeCompare(b.since));
    const first = down[0];
    const worst = first
      ? { ...first, state: down.some((h) => h.state === 'error') ? ('error' as const) : ('stale' as const) }
      : (kinds.find((h) => h.state === 'starting') ?? kinds[0]);
    const mgmt: SourceHealth = worst ?? {
      name: this.context,
      context: this.context,
      kind: 'management',
      state: 'starting',
      since: new Date().toISOString(),
    };
    return [mgmt, ...[...this.workloads.values()].map((w) => w.health)];
  }

  /** State of the management cluster source, for the pool model. */
  kubeState(): SourceState {
    const h = this.health()[0] as SourceHealth;
    if (h.state === 'live') return { state: 'ok' };
    if (h.state === 'starting') return { state: 'unknown', reason: 'not listed yet' };
    return { state: 'unreachable', error: h.error ?? 'the management cluster does not answer' };
  }

  /**
   * The pools whose input the changed Nodes are part of: the pools of their scale set, and pools whose lists
   * name them; every pool of the cluster for Nodes whose providerID says no scale set (or for none at all).
   */
  private poolsOfNodes(ns: string, cluster: string, nodes: KubeObject[]): string[] {
    const pools = this.poolsOfCluster(ns, cluster);
    if (nodes.length === 0) return pools;
    const keys = new Set(nodes.map((n) => scaleSetKeyOf(providerIdOf(n))));
    if ([...keys].some((k) => k === OTHER_SCALE_SET || k.endsWith('/~flex'))) return pools;
    let ids: Set<string> | null = null;
    return pools.filter((p) => {
      const amp = this.ampOf(p);
      const own = amp ? this.ampScaleSetKey(amp) : null;
      if (own !== null && keys.has(own)) return true;
      // Node churn reaches here for every pool of the cluster: a Node outside the pool's scale set concerns it
      // only if a list names it, among the list's IDs outside that scale set (found once per list).
      ids ??= new Set(
        nodes.flatMap((n) => {
          const id = providerIdOf(n);
          return typeof id === 'string' ? [joinKey(id)] : [];
        }),
      );
      const found = ids;
      const lists = [this.caches.mp.get(p)?.spec?.providerIDList, amp?.spec?.providerIDList];
      return lists.some((l) => foreignKeysOf(l, own).some((k) => found.has(k)));
    });
  }

  /**
   * An AzureMachinePool's scale-set key (see scaleSetKeyOf), worked out once per stored object: every Node
   * event of a workload cluster asks it of each of the cluster's pools.
   */
  private readonly ampKeys = new WeakMap<KubeObject, string>();

  private ampScaleSetKey(amp: KubeObject): string {
    let k = this.ampKeys.get(amp);
    if (k === undefined) {
      k = scaleSetKeyOf(amp.spec?.providerID);
      this.ampKeys.set(amp, k);
    }
    return k;
  }

  /** The MachinePools of a cluster (by `spec.clusterName`). */
  private poolsOfCluster(ns: string, cluster: string): string[] {
    return [...(this.mpsByCluster.get(`${ns}/${cluster}`) ?? [])];
  }

  /** The MachinePools whose infrastructureRef names an AzureMachinePool. */
  private poolsOfAmp(ns: string, amp: string): string[] {
    return [...(this.mpsByAmp.get(`${ns}/${amp}`) ?? [])];
  }

  /**
   * Files a MachinePool under its cluster and its AzureMachinePool (or takes it out): every Node, AMPM and
   * AzureMachinePool event asks which pools it concerns, and filtering all of a context's MachinePools for each
   * (1,000 at 100k VMs, ~100 events a second under churn) was a share of the collector's CPU of its own.
   */
  private indexMp(m: KubeObject, add: boolean): void {
    const k = key(m);
    const ns = String(m.metadata?.namespace ?? '');
    const cluster = m.spec?.clusterName;
    const amp = (m.spec?.template as { spec?: { infrastructureRef?: { name?: unknown } } } | undefined)?.spec
      ?.infrastructureRef?.name;
    const file = add ? addTo : removeFrom;
    if (typeof cluster === 'string') file(this.mpsByCluster, `${ns}/${cluster}`, k);
    if (typeof amp === 'string') file(this.mpsByAmp, `${ns}/${amp}`, k);
  }

  /**
   * Events about an object the caches do not hold yet, by `namespace/kind/name`: the Event informer and the
   * object's own race (an AMPM's Event can come before the AMPM, above all after a relist), and an Event is
   * handled once. Delivered when the object arrives; the oldest dropped beyond {@link PARKED_EVENTS}.
   */
  private readonly parked = new Map<string, PoolEvent[]>();

  private park(objectKey: string, ev: PoolEvent): void {
    this.parked.set(objectKey, [...(this.parked.get(objectKey) ?? []), ev]);
    if (this.parked.size > PARKED_EVENTS) this.parked.delete(this.parked.keys().next().value as string);
  }

  /** Delivers the Events parked for an object that has just arrived, if it names a pool now. */
  private unpark(ns: string, kind: string, name: string): void {
    const objectKey = `${ns}/${kind}/${name}`;
    const waiting = this.parked.get(objectKey);
    if (!waiting) return;
    const pools = this.poolsOfEvent(ns, kind, name);
    if (!pools.length) return;
    this.parked.delete(objectKey);
    for (const ev of waiting) this.onEvent(pools, ev);
  }

  /** After the informer stored `o` (replacing `old`): index it, tell which pools changed, deliver its Events parked. */
  private upserted(kind: Kind['name'], o: KubeObject, k: string, old?: KubeObject): void {
    const ns = namespaceOf(o) ?? '';
    this.indexed(kind, o, k, ns, old);
    if (this.parked.size) {
      const eventKind = EVENT_KIND_OF[kind];
      if (eventKind) this.unpark(ns, eventKind, String(nameOf(o)));
      // A new AzureMachinePool or MachinePool can name the pool of objects already cached.
      if (!old && (kind === 'amp' || kind === 'mp'))
        for (const [pk] of [...this.parked]) this.unpark(...(pk.split('/') as [string, string, string]));
    }
  }

  /**
   * Indexes `o` (in place of `old`) and tells which pools changed. `k` is the informer's key for it: the indexes of
   * AMPMs and Machines hold the string the cache holds (a copy of its own per object was ~13 MB at 100k VMs). An
   * update in the same pool leaves the index as it is — the cache keeps the key it first stored, so the index must
   * too; an update's key is a new string of the same characters.
   */
  private indexed(kind: Kind['name'], o: KubeObject, k: string, ns: string, old: KubeObject | undefined): void {
    if (kind === 'ampm') {
      const pool = labelOf(o, AMPM_POOL_LABEL);
      if (!old || labelOf(old, AMPM_POOL_LABEL) !== pool) {
        if (old) removeFrom(this.ampmsByAmp, `${ns}/${labelOf(old, AMPM_POOL_LABEL)}`, k);
        addTo(this.ampmsByAmp, `${ns}/${pool}`, k);
      }
      this.onChange(this.poolsOfAmp(ns, String(pool)));
    } else if (kind === 'machine') {
      const pool = labelOf(o, POOL_LABEL);
      if (!old || labelOf(old, POOL_LABEL) !== pool) {
        if (old) removeFrom(this.machinesByPool, `${ns}/${labelOf(old, POOL_LABEL)}`, k);
        addTo(this.machinesByPool, `${ns}/${pool}`, k);
      }
      this.onChange([`${ns}/${pool}`]);
    } else if (kind === 'mp') {
      if (old) this.indexMp(old, false);
      this.indexMp(o, true);
      this.onChange([k], userChange(o, old));
    } else if (kind === 'amp') {
      this.onChange(this.poolsOfAmp(ns, String(o.metadata?.name)), userChange(o, old));
    } else if (kind === 'cluster') {
      // A new Cluster, or one whose endpoint moved (the kubeconfig's server is checked against it).
      if (!old || JSON.stringify(controlPlaneEndpointOf(old)) !== JSON.stringify(controlPlaneEndpointOf(o)))
        void this.refreshWorkload(ns, String(o.metadata?.name));
      this.onChange(this.poolsOfCluster(ns, String(o.metadata?.name)), userChange(o, old));
    }
  }

  /** After the informer dropped `o`. */
  private removed(kind: Kind['name'], o: KubeObject, k: string): void {
    const ns = namespaceOf(o) ?? '';
    if (kind === 'ampm') {
      const amp = `${ns}/${labelOf(o, AMPM_POOL_LABEL)}`;
      removeFrom(this.ampmsByAmp, amp, k);
      const pid = providerIdOf(o);
      if (typeof pid === 'string' && pid) {
        const list = this.departedOf(amp) ?? [];
        list.push({ providerID: pid, at: Date.now() });
        this.departed.set(amp, list);
      }
    }
    if (kind === 'machine') removeFrom(this.machinesByPool, `${ns}/${labelOf(o, POOL_LABEL)}`, k);
    if (kind === 'mp') this.indexMp(o, false);
    if (kind === 'amp') this.departed.delete(`${ns}/${nameOf(o)}`);
    if (kind === 'cluster') {
      const w = this.workloads.get(k);
      w?.stop();
      this.workloads.delete(k);
    }
    this.onChange(
      kind === 'mp'
        ? [k]
        : kind === 'amp' || kind === 'ampm'
          ? this.poolsOfAmp(ns, String(kind === 'amp' ? nameOf(o) : labelOf(o, AMPM_POOL_LABEL)))
          : kind === 'machine'
            ? [`${ns}/${labelOf(o, POOL_LABEL)}`]
            : this.poolsOfCluster(ns, String(nameOf(o))),
    );
  }

  /** Re-reads the kubeconfig Secrets of workload clusters that are not live, or of all of them (`all`). */
  private async refreshWorkloads(all: boolean): Promise<void> {
    for (const c of this.caches.cluster.values()) {
      const ns = String(c.metadata?.namespace);
      const name = String(c.metadata?.name);
      if (all || this.workloads.get(`${ns}/${name}`)?.health.state !== 'live') await this.refreshWorkload(ns, name);
    }
  }

  /** Reads `<cluster>-kubeconfig` (key `value`) and (re)starts the Node informer when it changed or failed. */
  private async refreshWorkload(ns: string, cluster: string): Promise<void> {
    const k = `${ns}/${cluster}`;
    let w = this.workloads.get(k);
    if (!w) {
      w = new WorkloadSource(
        cluster,
        ns,
        this.context,
        (nodes) => this.onChange(this.poolsOfNodes(ns, cluster, nodes)),
        () => this.restarted('node'),
      );
      this.workloads.set(k, w);
    }
    const what = `Secret ${ns}/${cluster}-kubeconfig`;
    try {
      const secret = await this.kc
        .makeApiClient(CoreV1Api)
        .readNamespacedSecret({ name: `${cluster}-kubeconfig`, namespace: ns }, callOptions(CALL_TIMEOUT_MS));
      const value = secret.data?.value;
      if (!value) throw new LocalFailure(`${what} has no key "value"`);
      const yaml = Buffer.from(value, 'base64').toString('utf8');
      const endpoint = controlPlaneEndpointOf(this.caches.cluster.get(k));
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
      this.onChange(this.poolsOfCluster(ns, cluster));
    }
  }

  /** The pool's scale set (its AzureMachinePool's spec.providerID, lower-cased), without building its input. */
  scaleSetOf(poolKey: string): string | null {
    const pid = this.ampOf(poolKey)?.spec?.providerID;
    return typeof pid === 'string' ? pid.toLowerCase() : null;
  }

  /** The Azure region of a pool's scale set, from the AzureMachinePool's spec.location (null when absent). */
  regionOf(poolKey: string): string | null {
    const loc = this.ampOf(poolKey)?.spec?.location;
    return typeof loc === 'string' && loc ? loc.toLowerCase().replace(/\s+/g, '') : null;
  }

  private ampOf(poolKey: string): KubeObject | undefined {
    const mp = this.caches.mp.get(poolKey);
    if (!mp) return undefined;
    const ns = String(mp.metadata?.namespace);
    const ampName =
      (mp.spec?.template as { spec?: { infrastructureRef?: { name?: string } } } | undefined)?.spec?.infrastructureRef
        ?.name ?? String(mp.metadata?.name);
    return this.caches.amp.get(`${ns}/${ampName}`);
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

  /** An AzureMachinePool's AMPMs deleted within DEPARTED_MS (those before are forgotten), or undefined. */
  private departedOf(amp: string): DepartedAmpm[] | undefined {
    const list = this.departed.get(amp);
    if (!list) return undefined;
    const cutoff = Date.now() - DEPARTED_MS;
    let old = 0;
    while (old < list.length && (list[old] as DepartedAmpm).at < cutoff) old++;
    if (old) list.splice(0, old);
    if (list.length) return list;
    this.departed.delete(amp);
    return undefined;
  }

  /**
   * For the other scale sets a pool's lists name (rare: a hand-edited or stale list), the MachinePool whose
   * AzureMachinePool has each, as `namespace/name`; undefined when the lists name none. Looked up among every
   * AzureMachinePool of the context, only then.
   */
  private otherScaleSetPools(mp: KubeObject, amp: KubeObject | null): Record<string, string> | undefined {
    const own = amp ? this.ampScaleSetKey(amp) : null;
    const wanted = new Set<string>();
    for (const list of [mp.spec?.providerIDList, amp?.spec?.providerIDList]) {
      for (const k of foreignKeysOf(list, own)) {
        const s = namedScaleSetKey(`azure://${k}`);
        if (s) wanted.add(s);
      }
    }
    if (!wanted.size) return undefined;
    const out: Record<string, string> = {};
    for (const [k, a] of this.caches.amp) {
      const s = this.ampScaleSetKey(a);
      if (!wanted.has(s) || out[s]) continue;
      const [ns, name] = k.split('/') as [string, string];
      const pool = this.poolsOfAmp(ns, name)[0];
      if (pool) out[s] = pool;
    }
    return out;
  }

  /** The objects that make up one pool, as the pool model takes them; null when the MachinePool is gone. */
  poolInput(poolKey: string): PoolInput | null {
    const mp = this.caches.mp.get(poolKey);
    if (!mp) return null;
    const ns = String(mp.metadata?.namespace);
    const ampName =
      (mp.spec?.template as { spec?: { infrastructureRef?: { name?: string } } } | undefined)?.spec?.infrastructureRef
        ?.name ?? String(mp.metadata?.name);
    const amp = this.caches.amp.get(`${ns}/${ampName}`) ?? null;
    const ampms = cached(this.caches.ampm, this.ampmsByAmp.get(`${ns}/${ampName}`));
    const machines = cached(this.caches.machine, this.machinesByPool.get(`${ns}/${mp.metadata?.name}`));
    const clusterName = String(mp.spec?.clusterName ?? '');
    const cluster = this.caches.cluster.get(`${ns}/${clusterName}`) ?? null;
    const w = this.workloads.get(`${ns}/${clusterName}`);
    const departedAmpms = this.departedOf(`${ns}/${ampName}`);
    const otherScaleSetPools = this.otherScaleSetPools(mp, amp);
    return {
      ...(departedAmpms ? { departedAmpms } : {}),
      ...(otherScaleSetPools ? { otherScaleSetPools } : {}),
      context: this.context,
      capzVersion: this.capzVersion,
      machinePool: mp,
      azureMachinePool: amp,
      azureMachinePoolMachines: ampms,
      machines,
      cluster,
      workload: w
        ? w.data(amp ? this.ampScaleSetKey(amp) : null, poolIds(mp, amp, ampms, machines))
        : {
            state: 'unknown',
            reason: cluster ? 'the workload cluster is not read yet' : `Cluster ${clusterName} not found`,
          },
    };
  }

  stop(): void {
    this.stopped = true;
    this.wakeOnStop();
    for (const i of this.informers) i.stop();
    for (const w of this.workloads.values()) w.stop();
    if (this.secretTimer) clearInterval(this.secretTimer);
    if (this.kc instanceof PooledKubeConfig) void this.kc.closeConnections();
  }
}
