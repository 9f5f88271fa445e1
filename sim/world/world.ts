// The living world: emulated controllers that make the simulated fleet move — Azure scaling scale sets,
// VMs provisioning (or failing), Nodes joining, CAPZ reconciling AzureMachinePools and their machines, and
// CAPI's MachinePool controller with its readiness gate (docs/domain.md, "CAPI's MachinePool controller" and
// "CAPZ's AzureMachinePool"). Every change goes through the simulated APIs, so resourceVersions, watches and
// clients see it like any controller's write. This file holds the loop and the pass; each controller's work
// lives in a world-*.ts module, over the state in world-state.ts.

import type { KubeObject } from '../../lib/unstructured';
import type { SimAzureServer } from '../azure/server';
import type { KubeSimulator } from '../kube/simulator';
import { azureScaleSet } from './world-azure';
import { capi } from './world-capi';
import { capz } from './world-capz';
import { deleteMachinePool } from './world-deletion';
import { nodes } from './world-nodes';
import { R } from './world-objects';
import { asoAndAks, asoKey, capzAks, managedClusterIdOf } from './world-aks';
import { resolveAks } from './world-aks-pool';
import { aksCapzDone, aksCapzDue, capiDue, capzDone, capzDue, resolve, type Pool } from './world-pool';
import { WorldState, type WorldOptions } from './world-state';

export type { WorldOptions } from './world-state';

/** Real milliseconds of controller work in one go, at least one step (the loop then rests twice as long). */
const SLICE_MS = 20;

export class World {
  /** Workload clusters whose API the management controllers cannot reach (a world event). */
  readonly unreachable: Set<string>;
  /** Scale sets whose new VMs never get a Node (a world event). */
  readonly noJoin: Set<string>;
  private readonly w: WorldState;
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  /** Errors a controller pass hit (kept, never thrown out of the loop). */
  readonly errors: string[] = [];

  constructor(kube: KubeSimulator, azure: SimAzureServer, opts: WorldOptions) {
    this.w = new WorldState(kube, azure, opts);
    this.unreachable = this.w.unreachable;
    this.noJoin = this.w.noJoin;
  }

  /** Simulated now (ms). */
  now(): number {
    return this.w.now();
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
      this.timer = setTimeout(loop, pass ? 2 * took : Math.max(this.w.opts.tickMs ?? 200, 2 * took));
    };
    loop();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** The next `count` VMs created in this scale set fail to provision with `errorCode`. */
  failNextInstances(scaleSetId: string, count: number, errorCode: string): void {
    this.w.pendingFailures.set(scaleSetId.toLowerCase(), { count, errorCode });
  }

  /** The living AKS pool behind MachinePool `ns/name` of management cluster `cluster`; throws when there is none. */
  private aksPoolOf(cluster: string, ns: string, name: string): Pool & { aks: NonNullable<Pool['aks']> } {
    const store = this.w.kube.cluster(cluster).store;
    const pool = resolveAks(this.w, store, store.get(R.mp, ns, name));
    if (!pool?.aks) throw new Error(`MachinePool ${ns}/${name} is not a living AKS pool (aksControllers: true)`);
    return pool as Pool & { aks: NonNullable<Pool['aks']> };
  }

  /**
   * AKS's autoscaler sets the agent pool's count, outside CAPI and ASO (K2 and K3 of
   * docs/domain.md, "AKS operator scenarios").
   */
  aksAutoscale(cluster: string, ns: string, name: string, count: number): void {
    const pool = this.aksPoolOf(cluster, ns, name);
    const rec = pool.aks.agentPoolRec();
    if (!rec) throw new Error(`MachinePool ${ns}/${name} has no AKS agent pool yet`);
    (rec.body.properties as Record<string, unknown>).count = count;
    if (pool.rec) this.w.azure.state.setCapacity(pool.rec, count);
    this.w.azure.state.changed();
  }

  /** AKS runs an operation of its own on the pool (a node image upgrade, maintenance) for `seconds`. */
  aksBusy(cluster: string, ns: string, name: string, state: string, seconds: number): void {
    const rec = this.aksPoolOf(cluster, ns, name).aks.agentPoolRec();
    if (!rec) throw new Error(`MachinePool ${ns}/${name} has no AKS agent pool yet`);
    (rec.body.properties as Record<string, unknown>).provisioningState = state;
    this.w.aksBusyUntil.set(String(rec.body.id).toLowerCase(), this.w.now() + seconds * 1000);
    this.w.azure.state.changed();
  }

  /**
   * The control plane of the pool's AKS cluster upgrades to `version` and reaches it after `seconds`; ASO holds the
   * cluster's pools back meanwhile (K4 of docs/domain.md, "AKS operator scenarios").
   */
  aksControlPlane(cluster: string, ns: string, name: string, version: string, seconds: number): void {
    const rec = this.aksPoolOf(cluster, ns, name).aks.agentPoolRec();
    if (!rec) throw new Error(`MachinePool ${ns}/${name} has no AKS agent pool yet`);
    this.w.aksControlPlanes.set(managedClusterIdOf(rec), { version, at: this.w.now() + seconds * 1000 });
  }

  /** CAPZ writes the pool's ASO agent pool at every reconcile from now on (a perpetual diff, K7), or no longer. */
  aksPerpetualDiff(cluster: string, ns: string, name: string, enabled: boolean): void {
    const key = asoKey(this.aksPoolOf(cluster, ns, name));
    if (enabled) this.w.aksPerpetualDiff.add(key);
    else this.w.aksPerpetualDiff.delete(key);
  }

  /** AKS fails each write to the pool's agent pool with `failure` from now on, or (null) no longer. */
  aksFailWrites(cluster: string, ns: string, name: string, failure: { code: string; message: string } | null): void {
    const rec = this.aksPoolOf(cluster, ns, name).aks.agentPoolRec();
    if (!rec) throw new Error(`MachinePool ${ns}/${name} has no AKS agent pool yet`);
    const id = String(rec.body.id).toLowerCase();
    if (failure) this.w.aksFailures.set(id, failure);
    else this.w.aksFailures.delete(id);
  }

  /** The work of the last whole controller pass (ms, its slices summed; the rests between them left out). */
  lastTickMs = 0;

  /**
   * One controller pass (Azure, Nodes, CAPZ, CAPI), a step at a time (a scale set's Azure work, or one pool's
   * Nodes, CAPZ and CAPI): the loop runs it in slices, so anything may change between two steps, and each step
   * reads what it works on afresh.
   */
  *pass(): Generator<void> {
    const w = this.w;
    for (const [key, rec] of [...w.azure.state.scaleSets]) {
      if (w.azure.state.scaleSets.get(key) !== rec) continue; // deleted (or replaced) meanwhile
      azureScaleSet(w, rec);
      yield;
    }
    for (const name of this.managementClusters()) {
      const store = w.kube.cluster(name).store;
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
          deleteMachinePool(w, store, mp, ampmsByAmp);
          yield;
          continue;
        }
        const pool = resolve(w, store, mp, ampmsByAmp);
        if (!pool) continue;
        if (pool.aks) this.aksPool(name, pool);
        else {
          nodes(w, pool);
          if (!pool.capzPaused && capzDue(w, name, pool)) {
            capz(w, pool, typeof w.opts.capz === 'string' ? w.opts.capz : (w.opts.capz[name] ?? 'main'));
            capzDone(w, name, pool);
          }
        }
        if (!pool.capiPaused && capiDue(w, name, pool)) capi(w, pool);
        yield;
      }
    }
  }

  /** A living AKS pool's ASO and AKS, its Nodes, and CAPZ's AKS controller (world-aks.ts). */
  private aksPool(cluster: string, pool: Pool): void {
    const w = this.w;
    asoAndAks(w, pool);
    nodes(w, pool);
    if (!pool.capzPaused && aksCapzDue(w, cluster, pool)) {
      capzAks(w, pool);
      aksCapzDone(w, cluster, pool);
    }
  }

  private managementClusters(): string[] {
    const kube = this.w.kube;
    return [...kube.clusters.keys()].filter(
      (n) => kube.cluster(n).store.peek(R.cluster).length > 0 || kube.cluster(n).store.peek(R.mp).length > 0,
    );
  }
}
