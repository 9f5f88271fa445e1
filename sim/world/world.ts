// The living world: emulated controllers that make the simulated fleet move — Azure scaling scale sets,
// VMs provisioning (or failing), Nodes joining, CAPZ reconciling AzureMachinePools and their machines, and
// CAPI's MachinePool controller with its readiness gate (docs/domain.md, "CAPI's MachinePool controller" and
// "CAPZ's AzureMachinePool"). Every change goes through the simulated APIs, so resourceVersions, watches and
// clients see it like any controller's write.

import { providerIdFromArmId } from '../../lib/provider-id';
import type { KubeObject } from '../../lib/unstructured';
import type { Rest, ScaleSetRecord } from '../azure/state';
import type { SimAzureServer } from '../azure/server';
import { findByKind, type ResourceDef } from '../kube/resources';
import type { KubeSimulator } from '../kube/simulator';
import type { ClusterStore } from '../kube/store';
import {
  capzAmpmLabels,
  capzProvisioningState,
  capzReadySummary,
  capzReplicasAndProviderIds,
  seededRandom,
  shuffledOrder,
  type CacheOrder,
  type CapzBehaviour,
  type CapzCondition,
  type CapzPoolRef,
} from './capz-behaviour';
import {
  capiNode,
  machinePoolMachineConditions,
  nodesByProviderId,
  reconcileNormal,
  reconcilePhase,
  retiredNodes,
  setReplicas,
  type CapiNode,
  type InfraMachinePool,
  type MachineCondition,
  type MachinePoolState,
  type MachineView,
  type NodePatch,
  type ReplicaCounters,
} from './capi-behaviour';

const R = {
  mp: findByKind('cluster.x-k8s.io/v1beta2', 'MachinePool') as ResourceDef,
  machine: findByKind('cluster.x-k8s.io/v1beta2', 'Machine') as ResourceDef,
  cluster: findByKind('cluster.x-k8s.io/v1beta2', 'Cluster') as ResourceDef,
  amp: findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureMachinePool') as ResourceDef,
  ampm: findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureMachinePoolMachine') as ResourceDef,
  node: findByKind('v1', 'Node') as ResourceDef,
  event: findByKind('v1', 'Event') as ResourceDef,
};

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
}

export interface WorldDelays {
  provision: number;
  delete: number;
  join: number;
  ready: number;
  /** CAPZ's requeue: an AzureMachinePool is reconciled this often, and at once when spec.replicas changes. */
  capzRequeue: number;
  /**
   * How long a Node outlives its VM: its kubelet gone, the node lifecycle controller marks it Ready=Unknown
   * after its grace period (~40 s), and cloud-provider-azure's cloud node lifecycle controller, which checks
   * NotReady Nodes every 5 s, deletes the Node whose instance no longer exists.
   */
  nodeGone: number;
}

/** Real milliseconds of controller work in one go, at least one step (the loop then rests twice as long). */
const SLICE_MS = 20;

const DEFAULT_DELAYS: WorldDelays = { provision: 20, delete: 10, join: 15, ready: 10, capzRequeue: 30, nodeGone: 45 };

/** The cloud node lifecycle controller's period: a Node is Ready=Unknown this long before it is deleted. */
const NODE_MONITOR_MS = 5_000;

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

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function setCond(
  conds: Record<string, unknown>[],
  c: { type: string; status: string; reason?: string; severity?: string },
  now: string,
): Record<string, unknown>[] {
  const prev = conds.find((x) => x.type === c.type);
  const keepTime = prev && prev.status === c.status && prev.reason === c.reason;
  const next: Record<string, unknown> = {
    type: c.type,
    status: c.status,
    lastTransitionTime: keepTime ? prev.lastTransitionTime : now,
  };
  if (c.reason) next.reason = c.reason;
  if (c.status === 'False' && c.severity) next.severity = c.severity;
  return [...conds.filter((x) => x.type !== c.type), next].sort((a, b) => String(a.type).localeCompare(String(b.type)));
}

/** These objects as stored now (not copies: the world only reads them), those deleted meanwhile left out. */
function current(store: ClusterStore, r: ResourceDef, ns: string, objs: readonly KubeObject[]): KubeObject[] {
  const out: KubeObject[] = [];
  for (const o of objs) {
    const now = store.peekOne(r, ns, String(o.metadata?.name));
    if (now) out.push(now);
  }
  return out;
}

export class World {
  private readonly plans = new Map<string, VmPlan>();
  private readonly pendingFailures = new Map<string, PendingFailure>();
  /** When CAPZ last reconciled each pool, and at which spec.replicas. */
  private readonly lastCapz = new Map<string, { at: number; replicas: unknown }>();
  private readonly lastCapi = new Map<string, { at: number; sig: string }>();
  /** Workload clusters whose API the management controllers cannot reach (a world event). */
  readonly unreachable = new Set<string>();
  /** Scale sets whose new VMs never get a Node (a world event). */
  readonly noJoin = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private readonly startReal = Date.now();
  private readonly startSim: number;
  private readonly delays: WorldDelays;
  private running = false;
  /** VMs Azure removed by scale-in (their disappearance is expected, unlike an out-of-band deletion). */
  private readonly scaledIn = new Set<string>();
  /**
   * Per scale set (while it exists): its VMs' providerIDs by member at the last pass, and since when each VM gone
   * since is gone (ms).
   */
  private readonly vmsSeen = new WeakMap<ScaleSetRecord, { ids: Map<string, string>; gone: Map<string, number> }>();
  /** Events already recorded, so each occurrence is reported once. */
  private readonly emitted = new Set<string>();
  /** Errors a controller pass hit (kept, never thrown out of the loop). */
  readonly errors: string[] = [];

  constructor(
    private readonly kube: KubeSimulator,
    private readonly azure: SimAzureServer,
    private readonly opts: WorldOptions,
  ) {
    this.startSim = Date.now();
    this.delays = { ...DEFAULT_DELAYS, ...opts.delays };
  }

  /** Simulated now (ms). */
  now(): number {
    return this.startSim + (Date.now() - this.startReal) * (this.opts.speed ?? 1);
  }

  private iso(): string {
    return new Date(this.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }

  start(): void {
    if (this.timer) return;
    let pass: Generator<void> | null = null;
    let passMs = 0;
    const loop = () => {
      let took = 0;
      if (!this.running) {
        this.running = true;
        const t0 = performance.now();
        try {
          pass ??= this.pass();
          // A slice of the pass at a time: its writes reach the watchers spread over the pass, as a real
          // controller's work queue spreads them (one big synchronous pass would send them as one burst).
          do {
            if (pass.next().done) pass = null;
          } while (pass && performance.now() - t0 < SLICE_MS);
        } catch (e) {
          pass = null;
          this.errors.push((e as Error).message);
          if (this.errors.length > 100) this.errors.shift();
        } finally {
          this.running = false;
          took = performance.now() - t0;
          passMs += took;
          if (!pass) {
            this.lastTickMs = passMs;
            passMs = 0;
          }
        }
      }
      // A pass over a large fleet (100,000 VMs) takes seconds of work: after each slice the loop rests twice as
      // long as the slice took, so the API servers in this process keep answering (controllers then react in
      // seconds, as real ones do); between passes at least `tickMs`.
      this.timer = setTimeout(loop, pass ? 2 * took : Math.max(this.opts.tickMs ?? 200, 2 * took));
    };
    loop();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** The next `count` VMs created in this scale set fail to provision with `errorCode`. */
  failNextInstances(scaleSetId: string, count: number, errorCode: string): void {
    this.pendingFailures.set(scaleSetId.toLowerCase(), { count, errorCode });
  }

  /** The work of the last whole controller pass (ms, its slices summed; the rests between them left out). */
  lastTickMs = 0;

  /**
   * One controller pass (Azure, Nodes, CAPZ, CAPI), a step at a time (a scale set's Azure work, or one pool's
   * Nodes, CAPZ and CAPI): the loop runs it in slices, so anything may change between two steps, and each step
   * reads what it works on afresh.
   */
  *pass(): Generator<void> {
    for (const [key, rec] of [...this.azure.state.scaleSets]) {
      if (this.azure.state.scaleSets.get(key) !== rec) continue; // deleted (or replaced) meanwhile
      this.azureScaleSet(rec);
      yield;
    }
    for (const name of this.managementClusters()) {
      const store = this.kube.cluster(name).store;
      // One list per cluster and pass, grouped by pool, instead of one per pool.
      const ampmsByAmp = new Map<string, KubeObject[]>();
      for (const a of store.peek(R.ampm)) {
        const k = `${a.metadata?.namespace}/${a.metadata?.labels?.['azuremachinepool.infrastructure.cluster.x-k8s.io/machine-pool']}`;
        const list = ampmsByAmp.get(k) ?? [];
        list.push(a);
        ampmsByAmp.set(k, list);
      }
      for (const listed of store.peek(R.mp)) {
        const ns = String(listed.metadata?.namespace);
        const mpName = String(listed.metadata?.name);
        const mp = store.peekOne(R.mp, ns, mpName);
        if (!mp) continue;
        if (mp.metadata?.deletionTimestamp) {
          this.deleteMachinePool(store, mp, ampmsByAmp);
          yield;
          continue;
        }
        const pool = this.resolve(store, mp, ampmsByAmp);
        if (!pool) continue;
        this.nodes(pool);
        if (!pool.capzPaused && this.capzDue(name, pool)) {
          this.capz(pool, typeof this.opts.capz === 'string' ? this.opts.capz : (this.opts.capz[name] ?? 'main'));
          this.capzDone(name, pool);
        }
        if (!pool.capiPaused && this.capiDue(name, pool)) this.capi(pool);
        yield;
      }
    }
  }

  private managementClusters(): string[] {
    return [...this.kube.clusters.keys()].filter(
      (n) => this.kube.cluster(n).store.peek(R.cluster).length > 0 || this.kube.cluster(n).store.peek(R.mp).length > 0,
    );
  }

  // ---------------- Azure ----------------

  private vmKey(vm: Rest): string {
    return String(vm.id).toLowerCase();
  }

  private azureScaleSet(rec: ScaleSetRecord): void {
    const state = this.azure.state;
    const now = this.now();
    const vms = [...rec.vms.values()];
    const stateOf = (vm: Rest) => String((vm.properties as Record<string, unknown>).provisioningState);
    const active = vms.filter((v) => stateOf(v) !== 'Deleting');
    const capacity = state.capacity(rec);
    const ssKey = String(rec.body.id).toLowerCase();
    for (let i = active.length; i < capacity; i++) {
      const vm = state.addVm(rec, { provisioningState: 'Creating', powerState: 'starting', createdAt: this.iso() });
      const pending = this.pendingFailures.get(ssKey);
      let failWith: string | undefined;
      if (pending && pending.count > 0) {
        failWith = pending.errorCode;
        if (--pending.count === 0) this.pendingFailures.delete(ssKey);
      }
      this.plans.set(this.vmKey(vm), {
        dueAt: now + this.delays.provision * 1000,
        failWith,
        joins: !this.noJoin.has(ssKey),
      });
    }
    if (active.length > capacity) {
      // Azure scales in the highest instance ids first (default scale-in policy).
      const victims = [...active]
        .sort((a, b) => Number(b.instanceId ?? 0) - Number(a.instanceId ?? 0))
        .slice(0, active.length - capacity);
      for (const vm of victims) {
        this.scaledIn.add(providerIdFromArmId(String(vm.virtualMachineResourceId ?? vm.id)));
        state.setVmState(vm, 'Deleting', 'stopping');
        this.plans.set(this.vmKey(vm), { dueAt: now + this.delays.delete * 1000, joins: false });
      }
    }
    for (const vm of [...rec.vms.values()]) {
      const plan = this.plans.get(this.vmKey(vm));
      if (!plan || plan.dueAt > now) continue;
      const s = stateOf(vm);
      if (s === 'Creating') {
        if (plan.failWith)
          state.setVmState(vm, 'Failed', 'running', {
            code: plan.failWith,
            message: `Provisioning failed: ${plan.failWith}.`,
          });
        else state.setVmState(vm, 'Succeeded', 'running');
        plan.dueAt = now + this.delays.join * 1000;
      } else if (s === 'Deleting') {
        state.deleteVm(rec, String(vm.instanceId ?? vm.name));
        this.plans.delete(this.vmKey(vm));
      }
    }
    const states = [...rec.vms.values()].map(stateOf);
    const target = states.some((s) => s === 'Creating' || s === 'Deleting')
      ? 'Updating'
      : states.some((s) => s === 'Failed')
        ? 'Failed'
        : 'Succeeded';
    const current = String((rec.body.properties as Record<string, unknown>).provisioningState);
    if (current !== target && !(current === 'Updating' && rec.vms.size !== capacity))
      state.setProvisioningState(rec, target);
    if (target !== 'Updating') {
      for (const op of state.operations.values()) {
        if (
          op.scaleSetKey === `${rec.subscriptionId}/${rec.resourceGroup}/${rec.name}`.toLowerCase() &&
          op.status === 'InProgress'
        ) {
          op.status = target === 'Failed' ? 'Failed' : 'Succeeded';
          op.endTime = new Date().toISOString();
        }
      }
    }
  }

  // ---------------- resolving a pool ----------------

  private resolve(store: ClusterStore, mp: KubeObject, ampmsByAmp: Map<string, KubeObject[]>): Pool | null {
    const ns = mp.metadata?.namespace as string;
    const infra = (mp.spec?.template as { spec?: { infrastructureRef?: { name?: string; kind?: string } } } | undefined)
      ?.spec?.infrastructureRef;
    // The world only reads what it resolves (its writes go through update): the stored objects, not copies.
    const amp = infra?.kind === 'AzureMachinePool' && infra.name ? store.peekOne(R.amp, ns, infra.name) : undefined;
    if (!amp) return null;
    const clusterName = String(mp.spec?.clusterName ?? '');
    const cluster = store.peekOne(R.cluster, ns, clusterName) ?? null;
    const vmssId = String(amp.spec?.providerID ?? '').replace(/^azure:\/\//, '');
    const m =
      /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Compute\/virtualMachineScaleSets\/([^/]+)$/i.exec(
        vmssId,
      );
    const rec = m ? (this.azure.state.get(m[1] as string, m[2] as string, m[3] as string) ?? null) : null;
    const clusterPaused =
      cluster?.spec?.paused === true || cluster?.metadata?.annotations?.['cluster.x-k8s.io/paused'] !== undefined;
    const workload = this.kube.clusters.get(clusterName)?.store ?? null;
    return {
      store,
      ns,
      mp,
      amp,
      rec,
      clusterName,
      workload: workload && !this.unreachable.has(clusterName) ? workload : null,
      capiPaused: clusterPaused || mp.metadata?.annotations?.['cluster.x-k8s.io/paused'] !== undefined,
      capzPaused: clusterPaused || amp.metadata?.annotations?.['cluster.x-k8s.io/paused'] !== undefined,
      // As they are now (the list was taken when the pass reached this cluster; AMPMs deleted since are gone).
      ampms: current(store, R.ampm, ns, ampmsByAmp.get(`${ns}/${amp.metadata?.name}`) ?? []),
    };
  }

  private capzDue(cluster: string, pool: Pool): boolean {
    const key = `${cluster}/${pool.ns}/${pool.amp.metadata?.name}`;
    const last = this.lastCapz.get(key);
    const now = this.now();
    // Changes to the AzureMachinePool itself (e.g. a resync annotation) also trigger a reconcile.
    const replicas = `${String(pool.mp.spec?.replicas)}|${pool.amp.metadata?.resourceVersion}`;
    if (last && last.replicas === replicas && now - last.at < this.delays.capzRequeue * 1000) return false;
    this.lastCapz.set(key, { at: now, replicas: undefined });
    return true;
  }

  /**
   * CAPI reconciles a pool when its MachinePool, AzureMachinePool, AMPMs or workload Nodes changed, and at
   * least every 10 simulated seconds (a stand-in for its watches and resync).
   */
  private capiDue(cluster: string, pool: Pool): boolean {
    const key = `${cluster}/${pool.ns}/${pool.mp.metadata?.name}`;
    const sig = [
      pool.mp.metadata?.resourceVersion,
      pool.store.peekOne(R.amp, pool.ns, String(pool.amp.metadata?.name))?.metadata?.resourceVersion ?? '',
      pool.ampms.map((a) => a.metadata?.resourceVersion).join(','),
      pool.workload?.resourceVersion ?? 'unreachable',
    ].join('|');
    const last = this.lastCapi.get(key);
    const now = this.now();
    if (last && last.sig === sig && now - last.at < 10_000) return false;
    this.lastCapi.set(key, { at: now, sig });
    return true;
  }

  /** Records what CAPZ saw after its pass, so its own writes do not retrigger it. */
  private capzDone(cluster: string, pool: Pool): void {
    const key = `${cluster}/${pool.ns}/${pool.amp.metadata?.name}`;
    const amp = pool.store.get(R.amp, pool.ns, String(pool.amp.metadata?.name));
    const entry = this.lastCapz.get(key);
    if (entry) entry.replicas = `${String(pool.mp.spec?.replicas)}|${amp.metadata?.resourceVersion}`;
  }

  /** A workload cluster's Nodes, read once per change of that cluster rather than once per pool. */
  private readonly nodeIndex = new WeakMap<
    ClusterStore,
    { rv: string; all: KubeObject[]; byProviderId: Map<string, KubeObject> }
  >();

  private nodesOf(workload: ClusterStore): { all: KubeObject[]; byProviderId: Map<string, KubeObject> } {
    const hit = this.nodeIndex.get(workload);
    if (hit && hit.rv === workload.resourceVersion) return hit;
    const all = workload.peek(R.node);
    const entry = {
      rv: workload.resourceVersion,
      all,
      byProviderId: new Map(all.map((n) => [String(n.spec?.providerID), n])),
    };
    this.nodeIndex.set(workload, entry);
    return entry;
  }

  // ---------------- Nodes join ----------------

  private nodes(pool: Pool): void {
    const workload = this.kube.clusters.get(pool.clusterName)?.store;
    if (!workload || !pool.rec) return;
    const now = this.now();
    this.nodesGone(pool.rec, workload, now);
    for (const vm of pool.rec.vms.values()) {
      const p = vm.properties as Record<string, unknown>;
      const plan = this.plans.get(this.vmKey(vm));
      if (!plan || !plan.joins || p.provisioningState !== 'Succeeded' || plan.dueAt > now) continue;
      const name = String((p.osProfile as { computerName?: string } | undefined)?.computerName ?? vm.name);
      const providerID = providerIdFromArmId(String(vm.virtualMachineResourceId ?? vm.id));
      if (!workload.has(R.node, undefined, name)) {
        workload.create(R.node, undefined, {
          apiVersion: 'v1',
          kind: 'Node',
          metadata: {
            name,
            labels: {
              'kubernetes.io/hostname': name,
              'kubernetes.io/os': 'linux',
              'topology.kubernetes.io/region': pool.rec.location,
            },
          },
          spec: { providerID, taints: [{ key: 'node.cluster.x-k8s.io/uninitialized', effect: 'NoSchedule' }] },
        });
        const node = workload.get(R.node, undefined, name);
        // A kubelet reports the pressure conditions with Ready from its first status (CAPI's NodeHealthy reads them).
        const pressure = [
          ['MemoryPressure', 'KubeletHasSufficientMemory'],
          ['DiskPressure', 'KubeletHasNoDiskPressure'],
          ['PIDPressure', 'KubeletHasSufficientPID'],
        ].map(([type, reason]) => ({
          type,
          status: 'False',
          reason,
          message: '',
          lastHeartbeatTime: this.iso(),
          lastTransitionTime: this.iso(),
        }));
        workload.update(
          R.node,
          undefined,
          name,
          {
            ...node,
            status: {
              conditions: [
                ...pressure,
                {
                  type: 'Ready',
                  status: 'False',
                  reason: 'KubeletNotReady',
                  message: 'container runtime network not ready',
                  lastHeartbeatTime: this.iso(),
                  lastTransitionTime: this.iso(),
                },
              ],
              nodeInfo: { kubeletVersion: 'v1.33.4' },
            },
          },
          { subresource: 'status' },
        );
        plan.dueAt = now + this.delays.ready * 1000;
      } else {
        const node = workload.get(R.node, undefined, name);
        const conditions = (node.status?.conditions as { type: string; status: string }[] | undefined) ?? [];
        const ready = conditions.find((c) => c.type === 'Ready');
        if (ready?.status !== 'True') {
          const others = conditions.filter((c) => c.type !== 'Ready');
          workload.update(
            R.node,
            undefined,
            name,
            {
              ...node,
              status: {
                ...node.status,
                conditions: [
                  ...others,
                  {
                    type: 'Ready',
                    status: 'True',
                    reason: 'KubeletReady',
                    message: 'kubelet is posting ready status',
                    lastHeartbeatTime: this.iso(),
                    lastTransitionTime: this.iso(),
                  },
                ],
              },
            },
            { subresource: 'status' },
          );
        }
        plan.joins = false; // done
      }
    }
  }

  /**
   * The Nodes of a scale set's VMs that are gone (deleted out of band, by a scale-in or with their Machine):
   * Ready=Unknown once the grace period is over, deleted by the cloud node lifecycle controller
   * {@link NODE_MONITOR_MS} later. Only VMs seen to go are followed: a scenario's Node that has no VM from the
   * start stays (a cluster whose cloud node lifecycle controller does not run).
   */
  private nodesGone(rec: ScaleSetRecord, workload: ClusterStore, now: number): void {
    let seen = this.vmsSeen.get(rec);
    if (!seen) this.vmsSeen.set(rec, (seen = { ids: new Map(), gone: new Map() }));
    // A VM's providerID is worked out once, when it is first seen (a pass goes over every pool's VMs).
    for (const [member, vm] of rec.vms) {
      if (seen.ids.has(member)) continue;
      const id = providerIdFromArmId(String(vm.virtualMachineResourceId ?? vm.id));
      seen.ids.set(member, id);
      seen.gone.delete(id);
    }
    for (const [member, id] of seen.ids) {
      if (rec.vms.has(member)) continue;
      seen.ids.delete(member);
      seen.gone.set(id, now);
    }
    if (!seen.gone.size) return;
    const { byProviderId } = this.nodesOf(workload);
    for (const [id, since] of seen.gone) {
      const node = byProviderId.get(id);
      const name = String(node?.metadata?.name);
      if (!node || !workload.has(R.node, undefined, name)) {
        seen.gone.delete(id);
        continue;
      }
      if (now < since + this.delays.nodeGone * 1000 - NODE_MONITOR_MS) continue;
      const live = workload.get(R.node, undefined, name);
      const conditions = (live.status?.conditions as { type: string; status: string }[] | undefined) ?? [];
      // Deleted only once seen Unknown, however coarse the passes (at a high speed one pass may span both).
      if (conditions.find((c) => c.type === 'Ready')?.status !== 'Unknown') {
        const unknown = {
          type: 'Ready',
          status: 'Unknown',
          reason: 'NodeStatusUnknown',
          message: 'Kubelet stopped posting node status.',
          lastHeartbeatTime: this.iso(),
          lastTransitionTime: this.iso(),
        };
        workload.update(
          R.node,
          undefined,
          name,
          {
            ...live,
            status: { ...live.status, conditions: [...conditions.filter((c) => c.type !== 'Ready'), unknown] },
          },
          { subresource: 'status' },
        );
      } else if (now >= since + this.delays.nodeGone * 1000) {
        this.remove(workload, R.node, undefined, name);
        seen.gone.delete(id);
      }
    }
  }

  // ---------------- CAPZ ----------------

  private cacheOrder: CacheOrder | null = null;

  /**
   * The order CAPZ's informer cache lists a pool's AzureMachinePoolMachines in: a Go map's, so a fresh shuffle
   * for each list, from one generator per world (seeded by `opts.seed`).
   */
  private capzCacheOrder(): CacheOrder {
    return (this.cacheOrder ??= shuffledOrder(seededRandom(this.opts.seed ?? Date.now())));
  }

  private capz(pool: Pool, behaviour: CapzBehaviour): void {
    const { store, ns, mp, amp, rec } = pool;
    if (!rec) return;
    const state = this.azure.state;
    const replicas = typeof mp.spec?.replicas === 'number' ? mp.spec.replicas : null;
    const managed = mp.metadata?.annotations?.['cluster.x-k8s.io/replicas-managed-by'];
    // Scale the VMSS to spec.replicas (unless an external autoscaler manages it).
    if (
      replicas !== null &&
      (!managed || managed === 'false') &&
      state.capacity(rec) !== replicas &&
      (rec.body.properties as Record<string, unknown>).provisioningState !== 'Updating'
    ) {
      state.setCapacity(rec, replicas);
    }
    const vmsById = new Map(
      [...rec.vms.values()].map((vm) => [providerIdFromArmId(String(vm.virtualMachineResourceId ?? vm.id)), vm]),
    );
    const byProviderId = new Map(pool.ampms.map((a) => [String(a.spec?.providerID), a]));
    const created: KubeObject[] = [];
    const ref: CapzPoolRef = {
      namespace: ns,
      clusterName: pool.clusterName,
      ampName: String(amp.metadata?.name),
      mpName: String(mp.metadata?.name),
    };
    const workload = pool.workload;
    const nodeByPid = workload ? this.nodesOf(workload).byProviderId : new Map<string, KubeObject>();
    const now = this.iso();
    // Create an AMPM for every instance that has none (skipping Deleting).
    for (const [pid, vm] of vmsById) {
      const p = vm.properties as Record<string, unknown>;
      if (byProviderId.has(pid) || p.provisioningState === 'Deleting') continue;
      const member = String(vm.instanceId ?? vm.name);
      const name = `${amp.metadata?.name}-${member.replace(/_/g, '-')}`.toLowerCase();
      if (store.has(R.ampm, ns, name)) continue;
      store.create(R.ampm, ns, {
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
        kind: 'AzureMachinePoolMachine',
        metadata: {
          name,
          labels: capzAmpmLabels(ref),
          finalizers: ['azuremachinepoolmachine.infrastructure.cluster.x-k8s.io'],
          ownerReferences: [
            {
              apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
              kind: 'AzureMachinePool',
              name: String(amp.metadata?.name),
              uid: String(amp.metadata?.uid),
            },
          ],
        },
        spec: { providerID: pid, instanceID: member },
      });
      byProviderId.set(pid, store.get(R.ampm, ns, name));
      created.push(store.get(R.ampm, ns, name));
    }
    // AMPMs whose instance is gone: delete the owner Machine and the AMPM (drain is instant here).
    for (const [pid, ampm] of byProviderId) {
      if (vmsById.has(pid)) continue;
      const name = String(ampm.metadata?.name);
      if (!this.scaledIn.delete(pid)) {
        this.event(
          store,
          amp,
          'UnexpectedVMDeletion',
          `VM ${String(ampm.spec?.instanceID ?? name)} (${pid}) was deleted outside of CAPZ`,
          'azuremachinepool-reconciler',
          `deleted:${pid}`,
        );
      }
      const machine = ampm.metadata?.ownerReferences?.find((o) => o.kind === 'Machine')?.name;
      if (machine && store.has(R.machine, ns, machine)) this.remove(store, R.machine, ns, machine);
      this.remove(store, R.ampm, ns, name);
      byProviderId.delete(pid);
    }
    // AMPM status: ready = the Node found by exact providerID is Ready and the VM Succeeded.
    for (const [pid, a] of byProviderId) {
      const vm = vmsById.get(pid);
      const vmState = String((vm?.properties as Record<string, unknown> | undefined)?.provisioningState ?? 'Deleted');
      const node = nodeByPid.get(pid);
      const nodeReady =
        (node?.status?.conditions as { type: string; status: string }[] | undefined)?.some(
          (c) => c.type === 'Ready' && c.status === 'True',
        ) ?? false;
      const isReady = nodeReady && vmState === 'Succeeded';
      if (vmState === 'Failed') {
        const code =
          /ProvisioningState\/failed\/(.+)/.exec(
            String(
              ((vm?.properties as { instanceView?: { statuses?: { code?: string }[] } } | undefined)?.instanceView
                ?.statuses ?? [])[0]?.code ?? '',
            ),
          )?.[1] ?? 'unknown';
        this.event(
          store,
          a,
          'FailedVMState',
          `VM is in a failed state: ProvisioningState/failed/${code}`,
          'azuremachinepoolmachine-reconciler',
          `failed:${pid}`,
        );
      }
      const conds = (a.status?.conditions as Record<string, unknown>[] | undefined) ?? [];
      const reason = isReady ? undefined : node ? 'NodeConditionsFailed' : 'NodeProvisioning';
      const status = {
        ...a.status,
        ready: isReady,
        provisioningState: vmState,
        latestModelApplied:
          (vm?.properties as { latestModelApplied?: boolean } | undefined)?.latestModelApplied ?? true,
        version: 'v1.33.4',
        ...(node && isReady ? { nodeRef: { apiVersion: 'v1', kind: 'Node', name: node.metadata?.name } } : {}),
        conditions: setCond(
          setCond(
            conds,
            { type: 'MachineNodeHealthy', status: isReady ? 'True' : 'False', reason, severity: 'Info' },
            now,
          ),
          { type: 'Ready', status: isReady ? 'True' : 'False', reason, severity: 'Info' },
          now,
        ),
      };
      if (!same(status, a.status))
        store.update(R.ampm, ns, String(a.metadata?.name), { ...a, status }, { subresource: 'status', force: true });
    }
    // setProvisioningStateAndConditions (with the previous status.replicas), then updateReplicasAndProviderIDs.
    const vmssState = String((rec.body.properties as Record<string, unknown>).provisioningState);
    const prevReplicas = typeof amp.status?.replicas === 'number' ? amp.status.replicas : 0;
    const prevConds = (amp.status?.conditions as CapzCondition[] | undefined) ?? [];
    // An unset spec.replicas (CAPI's webhook never leaves one) counts as 0 here.
    const s = capzProvisioningState(behaviour, {
      vmssState,
      specReplicas: replicas ?? 0,
      statusReplicas: prevReplicas,
      ready: amp.status?.ready === true,
      conditions: prevConds,
    });
    // Only what CAPZ marked is set (a condition it left alone comes back as the same object), then the summary.
    let conds = prevConds as unknown as Record<string, unknown>[];
    for (const c of s.conditions) if (!prevConds.includes(c)) conds = setCond(conds, c, now);
    const summary = capzReadySummary(conds as unknown as CapzCondition[]);
    if (summary) conds = setCond(conds, summary, now);
    // updateReplicasAndProviderIDs, over the machines as they are now, as CAPZ's cache lists them.
    const listed = capzReplicasAndProviderIds(
      behaviour,
      ref,
      current(store, R.ampm, ns, [...pool.ampms, ...created]),
      this.capzCacheOrder(),
    );
    const ampStatus = {
      ...amp.status,
      ready: s.ready,
      provisioningState: s.provisioningState,
      replicas: listed.replicas,
      infrastructureMachineKind: 'AzureMachinePoolMachine',
      conditions: conds,
    };
    const list = listed.providerIDList;
    if (!same(ampStatus, amp.status))
      store.update(
        R.amp,
        ns,
        String(amp.metadata?.name),
        { ...amp, status: ampStatus },
        { subresource: 'status', force: true },
      );
    if (!same(list, amp.spec?.providerIDList ?? [])) {
      const cur = store.get(R.amp, ns, String(amp.metadata?.name));
      store.update(
        R.amp,
        ns,
        String(amp.metadata?.name),
        { ...cur, spec: { ...cur.spec, providerIDList: list } },
        { force: true },
      );
    }
  }

  /** Records a Kubernetes Event about an object, as CAPZ's recorder does (once per occurrence key). */
  private event(
    store: ClusterStore,
    obj: KubeObject,
    reason: string,
    message: string,
    component: string,
    once: string,
  ): void {
    if (this.emitted.has(once)) return;
    this.emitted.add(once);
    const ns = String(obj.metadata?.namespace ?? 'default');
    const now = this.iso();
    store.create(R.event, ns, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {
        name: `${obj.metadata?.name}.${Date.now().toString(16)}${Math.random().toString(16).slice(2, 6)}`,
        namespace: ns,
      },
      involvedObject: {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        name: obj.metadata?.name,
        namespace: ns,
        uid: obj.metadata?.uid,
        resourceVersion: obj.metadata?.resourceVersion,
      },
      reason,
      message,
      type: 'Warning',
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component },
      reportingComponent: component,
      reportingInstance: `${component}-0`,
    } as KubeObject);
  }

  private remove(store: ClusterStore, r: ResourceDef, ns: string | undefined, name: string): void {
    const o = store.get(r, ns, name);
    if ((o.metadata?.finalizers ?? []).length)
      store.update(r, ns, name, { ...o, metadata: { ...o.metadata, finalizers: [] } }, { force: true });
    if (store.has(r, ns, name)) store.delete(r, ns, name);
  }

  /**
   * A MachinePool being deleted (its finalizer holds it), over two passes; each shows phase Deleting
   * (reconcilePhase runs after every deletion reconcile). CAPI deletes its AzureMachinePool; CAPZ deletes the
   * scale set (with its VMs) and the AMPMs, then lets the AzureMachinePool go. On the next pass CAPI deletes the
   * Nodes in nodeRefs whose providerID is not in the list (reconcileDeleteNodes: it needs the workload cluster,
   * else the pool waits) and removes its finalizer; the pool's Machines go with it, the Machine controller
   * deleting each one's Node. Paused (Cluster or annotation), nothing moves.
   */
  private deleteMachinePool(store: ClusterStore, mp: KubeObject, ampmsByAmp: Map<string, KubeObject[]>): void {
    const ns = String(mp.metadata?.namespace);
    const mpName = String(mp.metadata?.name);
    const clusterName = String(mp.spec?.clusterName ?? '');
    const cluster = store.peekOne(R.cluster, ns, clusterName);
    if (
      cluster?.spec?.paused === true ||
      cluster?.metadata?.annotations?.['cluster.x-k8s.io/paused'] !== undefined ||
      mp.metadata?.annotations?.['cluster.x-k8s.io/paused'] !== undefined
    )
      return;
    const phase = reconcilePhase(machinePoolState(mp));
    if (mp.status?.phase !== phase)
      store.update(
        R.mp,
        ns,
        mpName,
        { ...mp, status: { ...mp.status, phase } },
        { subresource: 'status', force: true },
      );
    const ampName = (mp.spec?.template as { spec?: { infrastructureRef?: { name?: string } } } | undefined)?.spec
      ?.infrastructureRef?.name;
    const amp = ampName ? store.peekOne(R.amp, ns, ampName) : undefined;
    if (amp && ampName) {
      const m =
        /^azure:\/\/\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Compute\/virtualMachineScaleSets\/([^/]+)$/i.exec(
          String(amp.spec?.providerID ?? ''),
        );
      if (m) this.azure.state.deleteScaleSet(m[1] as string, m[2] as string, m[3] as string);
      for (const a of current(store, R.ampm, ns, ampmsByAmp.get(`${ns}/${ampName}`) ?? []))
        this.remove(store, R.ampm, ns, String(a.metadata?.name));
      this.remove(store, R.amp, ns, ampName);
      return;
    }
    const workload = this.unreachable.has(clusterName) ? null : (this.kube.clusters.get(clusterName)?.store ?? null);
    const state = machinePoolState(mp);
    if (state.nodeRefs.length && !workload) return;
    if (workload)
      this.applyNodeChanges(
        workload,
        retiredNodes(state.nodeRefs, state.providerIDList, this.capiNodesOf(workload)),
        [],
      );
    for (const machine of store.peek(R.machine)) {
      if (machine.metadata?.namespace !== ns || machine.metadata?.labels?.['cluster.x-k8s.io/pool-name'] !== mpName)
        continue;
      const node = (machine.status?.nodeRef as { name?: string } | undefined)?.name;
      if (workload && node) this.applyNodeChanges(workload, [node], []);
      this.remove(store, R.machine, ns, String(machine.metadata?.name));
    }
    this.remove(store, R.mp, ns, mpName);
  }

  // ---------------- CAPI ----------------

  /**
   * CAPI's MachinePool controller on one pool (capi-behaviour.ts): the Machines for its AMPMs, then bootstrap,
   * infrastructure (the readiness gate) and node references, then the status a reconcile writes (phase, v1beta2
   * counters, v1beta1 conditions).
   */
  private capi(pool: Pool): void {
    const { store, ns } = pool;
    const mpName = String(pool.mp.metadata?.name);
    const amp = store.get(R.amp, ns, String(pool.amp.metadata?.name));
    const nodes = pool.workload ? this.capiNodesOf(pool.workload) : null;
    const machines = this.capiMachines(pool, nodes);
    const mp = store.get(R.mp, ns, mpName);
    const before = machinePoolState(mp);
    const ampStatus = (amp.status ?? {}) as {
      ready?: unknown;
      replicas?: unknown;
      infrastructureMachineKind?: unknown;
    };
    const infra: InfraMachinePool = {
      ready: ampStatus.ready === true,
      providerIDList: Array.isArray(amp.spec?.providerIDList) ? (amp.spec.providerIDList as string[]) : undefined,
      replicas: typeof ampStatus.replicas === 'number' ? ampStatus.replicas : undefined,
      deleting: Boolean(amp.metadata?.deletionTimestamp),
    };
    // Bootstrap data is given directly (spec.template.spec.bootstrap.dataSecretName): always created.
    const r = reconcileNormal({ mp: before, bootstrapDataSecretCreated: true, infra, nodes, now: this.now() });
    if (pool.workload) this.applyNodeChanges(pool.workload, r.deleteNodes, r.patchNodes);
    const counters = setReplicas(
      r.mp,
      typeof ampStatus.infrastructureMachineKind === 'string' && ampStatus.infrastructureMachineKind !== '',
      machines,
      nodes,
    );
    const list = omitEmpty(r.mp.providerIDList);
    if (!same(list, omitEmpty(mp.spec?.providerIDList as string[] | undefined))) {
      const { providerIDList: _old, ...spec } = (mp.spec ?? {}) as Record<string, unknown>;
      store.update(
        R.mp,
        ns,
        mpName,
        { ...mp, spec: { ...spec, ...(list ? { providerIDList: list } : {}) } },
        { force: true },
      );
    }
    const latest = store.get(R.mp, ns, mpName);
    const st = this.capiStatus(latest, before, r.mp, counters, amp);
    if (!same(st, latest.status))
      store.update(R.mp, ns, mpName, { ...latest, status: st }, { subresource: 'status', force: true });
  }

  /** The MachinePool status after a reconcile: the fields of `after` written over what the object holds. */
  private capiStatus(
    mp: KubeObject,
    before: MachinePoolState,
    after: MachinePoolState,
    counters: ReplicaCounters,
    amp: KubeObject,
  ): Record<string, unknown> {
    const now = this.iso();
    const st = structuredClone(mp.status ?? {}) as Record<string, unknown>;
    st.initialization = {
      bootstrapDataSecretCreated: after.bootstrapDataSecretCreated,
      infrastructureProvisioned: after.infrastructureProvisioned,
    };
    if (after.statusReplicas !== undefined) st.replicas = after.statusReplicas;
    if (after.nodeRefs !== before.nodeRefs) {
      if (after.nodeRefs.length)
        st.nodeRefs = after.nodeRefs.map((r) => ({
          apiVersion: 'v1',
          kind: 'Node',
          name: r.name,
          ...(r.uid ? { uid: r.uid } : {}),
        }));
      else delete st.nodeRefs;
    }
    for (const k of ['readyReplicas', 'availableReplicas', 'upToDateReplicas', 'versions'] as const) {
      if (counters[k] === undefined) delete st[k];
      else st[k] = counters[k];
    }
    st.phase = reconcilePhase(after);
    const dep = (isObj(st.deprecated) && isObj(st.deprecated.v1beta1) ? st.deprecated.v1beta1 : {}) as Record<
      string,
      unknown
    >;
    Object.assign(dep, after.v1beta1);
    let conds = (dep.conditions as Record<string, unknown>[] | undefined) ?? [];
    // InfrastructureReady mirrors the infra object's Ready condition, else falls back on status.ready.
    const infraReady = (
      amp.status?.conditions as
        { type: string; status: string; reason?: string; severity?: string; message?: string }[] | undefined
    )?.find((c) => c.type === 'Ready');
    conds = setCond(
      conds,
      infraReady
        ? {
            type: 'InfrastructureReady',
            status: infraReady.status,
            reason: infraReady.reason,
            severity: infraReady.severity,
          }
        : {
            type: 'InfrastructureReady',
            status: after.infrastructureProvisioned ? 'True' : 'False',
            reason: after.infrastructureProvisioned ? undefined : 'WaitingForInfrastructure',
            severity: 'Info',
          },
      now,
    );
    conds = setCond(conds, { type: 'BootstrapReady', status: 'True' }, now);
    if (after.replicasReady)
      conds = setCond(
        conds,
        {
          type: 'ReplicasReady',
          status: after.replicasReady,
          reason: after.replicasReady === 'False' ? 'WaitingForReplicasReady' : undefined,
          severity: 'Info',
        },
        now,
      );
    const notReady = conds.find((c) => c.type !== 'Ready' && c.status === 'False');
    conds = setCond(
      conds,
      notReady
        ? {
            type: 'Ready',
            status: 'False',
            reason: String(notReady.reason ?? ''),
            severity: String(notReady.severity ?? 'Info'),
          }
        : { type: 'Ready', status: 'True' },
      now,
    );
    dep.conditions = conds;
    st.deprecated = { ...(isObj(st.deprecated) ? st.deprecated : {}), v1beta1: dep };
    return st;
  }

  /**
   * The pool's Machines, one per AMPM: created and kept (spec.version from the Node's kubelet) by the MachinePool
   * controller while the workload cluster answers, their status and conditions set as CAPI's Machine
   * controller would. Returns them as the v1beta2 counters read them.
   */
  private capiMachines(pool: Pool, nodes: readonly CapiNode[] | null): MachineView[] {
    const { store, ns } = pool;
    const byId = nodes ? nodesByProviderId(nodes) : null;
    const at = { ms: this.now(), iso: this.iso() };
    const out: MachineView[] = [];
    for (const a of current(store, R.ampm, ns, pool.ampms)) {
      const name = String(a.metadata?.name);
      const node = byId ? (byId.get(String(a.spec?.providerID ?? '')) ?? null) : undefined;
      if (byId) this.capiMachineSpec(pool, a, node ?? null);
      const m = store.peekOne(R.machine, ns, name);
      if (!m) continue;
      const { conditions, status } = this.capiMachineStatus(m, a, node, at);
      if (status) store.update(R.machine, ns, name, { ...m, status }, { subresource: 'status', force: true });
      out.push({
        name,
        creationTimestamp: m.metadata?.creationTimestamp,
        version: typeof m.spec?.version === 'string' ? m.spec.version : undefined,
        kubeletVersion: (m.status?.nodeInfo as { kubeletVersion?: string } | undefined)?.kubeletVersion,
        conditions,
      });
    }
    return out;
  }

  /** createOrUpdateMachines for one AMPM: the Machine named after it, owned by the pool; spec.version the Node's kubelet. */
  private capiMachineSpec(pool: Pool, a: KubeObject, node: CapiNode | null): void {
    const { store, ns } = pool;
    const name = String(a.metadata?.name);
    const mpName = String(pool.mp.metadata?.name);
    const version = node?.kubeletVersion ? { version: node.kubeletVersion } : {};
    const existing = store.peekOne(R.machine, ns, name);
    if (existing) {
      // A version once set stays when the Node goes (the field may be another manager's).
      if (node?.kubeletVersion && existing.spec?.version !== node.kubeletVersion)
        store.update(R.machine, ns, name, { ...existing, spec: { ...existing.spec, ...version } }, { force: true });
      return;
    }
    store.create(R.machine, ns, {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Machine',
      metadata: {
        name,
        labels: { 'cluster.x-k8s.io/cluster-name': pool.clusterName, 'cluster.x-k8s.io/pool-name': mpName },
        finalizers: ['machine.cluster.x-k8s.io'],
        ownerReferences: [
          {
            apiVersion: 'cluster.x-k8s.io/v1beta2',
            kind: 'MachinePool',
            name: mpName,
            uid: String(pool.mp.metadata?.uid),
            controller: true,
          },
        ],
      },
      spec: {
        clusterName: pool.clusterName,
        bootstrap: { dataSecretName: `${mpName}-bootstrap` },
        infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'AzureMachinePoolMachine', name },
        providerID: a.spec?.providerID,
        ...version,
      },
    });
    const cur = store.get(R.ampm, ns, name);
    store.update(
      R.ampm,
      ns,
      name,
      {
        ...cur,
        metadata: {
          ...cur.metadata,
          ownerReferences: [
            ...(cur.metadata?.ownerReferences ?? []),
            {
              apiVersion: 'cluster.x-k8s.io/v1beta2',
              kind: 'Machine',
              name,
              uid: String(store.get(R.machine, ns, name).metadata?.uid),
              controller: true,
            },
          ],
        },
      },
      { force: true },
    );
  }

  /**
   * A Machine's status as the Machine controller keeps it: phase, nodeRef (from the AMPM) and v1beta2 conditions;
   * `status` is null when nothing changed (compared field by field: a pass goes over every Machine).
   */
  private capiMachineStatus(
    m: KubeObject,
    a: KubeObject,
    node: CapiNode | null | undefined,
    at: { ms: number; iso: string },
  ): { conditions: MachineCondition[]; status: Record<string, unknown> | null } {
    const nodeRef = (a.status?.nodeRef as { name?: string } | undefined)?.name;
    const previous = (m.status?.conditions as (MachineCondition & { lastTransitionTime?: string })[] | undefined) ?? [];
    const infraReady = (
      a.status?.conditions as { type: string; status: string; reason?: string; message?: string }[] | undefined
    )?.find((c) => c.type === 'Ready');
    const next = machinePoolMachineConditions({
      deleting: Boolean(m.metadata?.deletionTimestamp),
      infraReady,
      infrastructureProvisioned: true,
      infraKind: 'AzureMachinePoolMachine',
      node,
      hadNodeRef: Boolean(m.status?.nodeRef),
      providerID: String(m.spec?.providerID ?? ''),
      previous,
      minReadySeconds: typeof m.spec?.minReadySeconds === 'number' ? m.spec.minReadySeconds : 0,
      now: at.ms,
    });
    const phase = nodeRef ? 'Running' : 'Provisioned';
    const init = m.status?.initialization as Record<string, unknown> | undefined;
    const unchanged =
      m.status?.phase === phase &&
      (!nodeRef || (m.status?.nodeRef as { name?: string } | undefined)?.name === nodeRef) &&
      init?.bootstrapDataSecretCreated === true &&
      init.infrastructureProvisioned === true &&
      previous.length === next.length &&
      next.every(
        (c, i) =>
          previous[i]?.type === c.type &&
          previous[i]?.status === c.status &&
          previous[i]?.reason === c.reason &&
          previous[i]?.message === c.message,
      );
    if (unchanged) return { conditions: next, status: null };
    const conditions = next.map((c) => {
      const prev = previous.find((p) => p.type === c.type);
      return {
        ...c,
        lastTransitionTime:
          prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : at.iso,
      };
    });
    return {
      conditions: next,
      status: {
        ...m.status,
        phase,
        ...(nodeRef ? { nodeRef: { name: nodeRef } } : {}),
        initialization: { bootstrapDataSecretCreated: true, infrastructureProvisioned: true },
        conditions,
      },
    };
  }

  /** Deletes and patches workload Nodes for CAPI (Nodes already gone are skipped). */
  private applyNodeChanges(workload: ClusterStore, remove: readonly string[], patches: readonly NodePatch[]): void {
    for (const name of remove)
      if (workload.has(R.node, undefined, name)) this.remove(workload, R.node, undefined, name);
    for (const p of patches) {
      const n = workload.peekOne(R.node, undefined, p.name);
      if (!n) continue;
      const { taints: _old, ...spec } = (n.spec ?? {}) as Record<string, unknown>;
      workload.update(R.node, undefined, p.name, {
        ...n,
        metadata: { ...n.metadata, annotations: p.annotations },
        spec: { ...spec, ...(p.taints.length ? { taints: p.taints } : {}) },
      });
    }
  }

  /** A workload cluster's Nodes as CAPI reads them, once per change of that cluster. */
  private readonly capiNodeIndex = new WeakMap<ClusterStore, { rv: string; nodes: CapiNode[] }>();

  private capiNodesOf(workload: ClusterStore): CapiNode[] {
    const hit = this.capiNodeIndex.get(workload);
    if (hit && hit.rv === workload.resourceVersion) return hit.nodes;
    const nodes = this.nodesOf(workload).all.map(capiNode);
    this.capiNodeIndex.set(workload, { rv: workload.resourceVersion, nodes });
    return nodes;
  }
}

/** A stored list as CAPI writes it (omitempty): an empty list is not written. */
const omitEmpty = (list: readonly string[] | undefined) => (list && list.length ? list : undefined);

/** A MachinePool object as CAPI's MachinePool controller reads it. */
function machinePoolState(mp: KubeObject): MachinePoolState {
  const spec = (mp.spec ?? {}) as {
    clusterName?: string;
    replicas?: unknown;
    providerIDList?: unknown;
    template?: { spec?: { minReadySeconds?: unknown } };
  };
  const st = (mp.status ?? {}) as {
    phase?: string;
    replicas?: unknown;
    nodeRefs?: { name?: string; uid?: string }[];
    initialization?: Record<string, unknown>;
    deprecated?: { v1beta1?: Record<string, unknown> };
  };
  const dep = st.deprecated?.v1beta1 ?? {};
  const count = (v: unknown) => (typeof v === 'number' ? v : 0);
  const replicasReady = (dep.conditions as { type: string; status: string }[] | undefined)?.find(
    (c) => c.type === 'ReplicasReady',
  )?.status;
  const minReady = spec.template?.spec?.minReadySeconds;
  return {
    name: String(mp.metadata?.name ?? ''),
    namespace: String(mp.metadata?.namespace ?? ''),
    clusterName: String(spec.clusterName ?? ''),
    specReplicas: typeof spec.replicas === 'number' ? spec.replicas : null,
    providerIDList: Array.isArray(spec.providerIDList) ? (spec.providerIDList as string[]) : undefined,
    minReadySeconds: typeof minReady === 'number' ? minReady : 0,
    replicasManagedBy: mp.metadata?.annotations?.['cluster.x-k8s.io/replicas-managed-by'],
    deleting: Boolean(mp.metadata?.deletionTimestamp),
    phase: st.phase ?? '',
    bootstrapDataSecretCreated: st.initialization?.bootstrapDataSecretCreated === true,
    infrastructureProvisioned: st.initialization?.infrastructureProvisioned === true,
    statusReplicas: typeof st.replicas === 'number' ? st.replicas : undefined,
    nodeRefs: (st.nodeRefs ?? []).map((r) => ({ name: String(r.name ?? ''), ...(r.uid ? { uid: r.uid } : {}) })),
    v1beta1: {
      readyReplicas: count(dep.readyReplicas),
      availableReplicas: count(dep.availableReplicas),
      unavailableReplicas: count(dep.unavailableReplicas),
    },
    ...(replicasReady === 'True' || replicasReady === 'False' ? { replicasReady } : {}),
  };
}

interface Pool {
  store: ClusterStore;
  ns: string;
  mp: KubeObject;
  amp: KubeObject;
  rec: ScaleSetRecord | null;
  clusterName: string;
  /** The workload cluster's store, or null while it is unreachable. */
  workload: ClusterStore | null;
  capiPaused: boolean;
  capzPaused: boolean;
  ampms: KubeObject[];
}
