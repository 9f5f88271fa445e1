// What the living world remembers between controller passes (VM plans, pending faults, when each controller last
// ran, read caches) and its options and clock: one object the World owns and hands to the world-*.ts modules
// that act for each controller.

import type { KubeObject } from '../../lib/unstructured';
import type { Rest, ScaleSetRecord } from '../azure/state';
import type { SimAzureServer } from '../azure/server';
import type { KubeSimulator } from '../kube/simulator';
import type { ClusterStore } from '../kube/store';
import type { CacheOrder, CapzBehaviour } from './capz-behaviour';
import type { CapiNode } from './capi-behaviour';

export interface WorldOptions {
  /** CAPZ behaviour of every management cluster, or per management cluster name. */
  capz: CapzBehaviour | Record<string, CapzBehaviour>;
  /** Simulated seconds per real second. */
  speed?: number;
  /** Real milliseconds between controller passes. */
  tickMs?: number;
  /** Simulated seconds a VM takes to provision, to be deleted, a Node to join and to become Ready. */
  delays?: Partial<WorldDelays>;
  /** Seeds the order CAPZ's cache lists AzureMachinePoolMachines in (a test replays it); random by default. */
  seed?: number;
  /** Whether AKS pools move (ASO, AKS and CAPZ's AKS controllers run); else they stand as the scenario put them. */
  aksControllers?: boolean;
}

export interface WorldDelays {
  provision: number;
  delete: number;
  join: number;
  ready: number;
  /** CAPZ's requeue: an AzureMachinePool is reconciled this often, and at once when spec.replicas changes. */
  capzRequeue: number;
  /** ASO's periodic re-read of each agent pool from AKS (AZURE_SYNC_PERIOD, 1 h by default in ASO). */
  asoSync: number;
  /** How long AKS takes to upgrade an agent pool's nodes to a new Kubernetes version (surge, drain, reimage). */
  aksUpgrade: number;
  /**
   * How long a Node outlives its VM: its kubelet gone, the node lifecycle controller marks it Ready=Unknown
   * after its grace period (~40 s), and cloud-provider-azure's cloud node lifecycle controller, which checks
   * NotReady Nodes every 5 s, deletes the Node whose instance no longer exists.
   */
  nodeGone: number;
}

const DEFAULT_DELAYS: WorldDelays = {
  provision: 20,
  delete: 10,
  join: 15,
  ready: 10,
  capzRequeue: 30,
  asoSync: 3600,
  aksUpgrade: 120,
  nodeGone: 45,
};

interface VmPlan {
  /** Simulated time (ms) the next transition is due. */
  dueAt: number;
  /** Error code if provisioning will fail. */
  failWith?: string;
  /** Whether a Node will join for it. */
  joins: boolean;
}

interface PendingFailure {
  count: number;
  errorCode: string;
}

export class WorldState {
  readonly plans = new Map<string, VmPlan>();
  readonly pendingFailures = new Map<string, PendingFailure>();
  /** When CAPZ last reconciled each pool, and at which spec.replicas. */
  readonly lastCapz = new Map<string, { at: number; replicas: unknown }>();
  readonly lastCapi = new Map<string, { at: number; sig: string }>();
  /** When ASO last read each agent pool from AKS (by ASO object key), for its periodic resync. */
  readonly asoSynced = new Map<string, number>();
  /** AKS agent pools (by ARM id, lower-case) whose next write from ASO fails, and how. */
  readonly aksFailures = new Map<string, { code: string; message: string }>();
  /** AKS agent pools (by ARM id, lower-case) busy with an operation of AKS's own until then (simulated ms). */
  readonly aksBusyUntil = new Map<string, number>();
  /** AKS agent pools (by ARM id, lower-case) upgrading: to which version, and the count to return to after surge. */
  readonly aksUpgrades = new Map<string, { version: string; count: number }>();
  /**
   * AKS control planes (by managed cluster ARM id, lower-case) told to upgrade: the version, and when they reach it
   * (simulated ms). A control plane not here is at least as new as its pools.
   */
  readonly aksControlPlanes = new Map<string, { version: string; at: number }>();
  /** ASO agent pool objects (by key, as asoSynced) CAPZ rewrites at every reconcile: a perpetual diff (K7). */
  readonly aksPerpetualDiff = new Set<string>();
  /** When CAPZ last rewrote each of those (simulated ms). */
  readonly lastDiffWrite = new Map<string, number>();
  /** Workload clusters whose API the management controllers cannot reach (a world event). */
  readonly unreachable = new Set<string>();
  /** Scale sets whose new VMs never get a Node (a world event). */
  readonly noJoin = new Set<string>();
  private readonly startReal = Date.now();
  private readonly startSim: number;
  readonly delays: WorldDelays;
  /** VMs Azure removed by scale-in (their disappearance is expected, unlike an out-of-band deletion). */
  readonly scaledIn = new Set<string>();
  /**
   * Per scale set (while it exists): its VMs' providerIDs by member at the last pass, and since when each VM gone
   * since is gone (ms).
   */
  readonly vmsSeen = new WeakMap<ScaleSetRecord, { ids: Map<string, string>; gone: Map<string, number> }>();
  /** Events already recorded, so each occurrence is reported once. */
  readonly emitted = new Set<string>();
  /** A workload cluster's Nodes, read once per change of that cluster rather than once per pool. */
  readonly nodeIndex = new WeakMap<
    ClusterStore,
    { rv: string; all: KubeObject[]; byProviderId: Map<string, KubeObject> }
  >();
  /** A workload cluster's Nodes as CAPI reads them, once per change of that cluster. */
  readonly capiNodeIndex = new WeakMap<ClusterStore, { rv: string; nodes: CapiNode[] }>();
  /** The order CAPZ's informer cache lists AzureMachinePoolMachines in, made on first use. */
  cacheOrder: CacheOrder | null = null;

  constructor(
    readonly kube: KubeSimulator,
    readonly azure: SimAzureServer,
    readonly opts: WorldOptions,
  ) {
    this.startSim = Date.now();
    this.delays = { ...DEFAULT_DELAYS, ...opts.delays };
  }

  /** Simulated now (ms). */
  now(): number {
    return this.startSim + (Date.now() - this.startReal) * (this.opts.speed ?? 1);
  }

  iso(): string {
    return new Date(this.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
}

/** The key of a VM's plan. */
export function vmKey(vm: Rest): string {
  return String(vm.id).toLowerCase();
}
