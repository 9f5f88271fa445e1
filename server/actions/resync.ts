import 'server-only';
// One-click resync (docs/domain.md, "Triggering a reconcile from outside" and "What a resync can and cannot do"):
// trigger a CAPZ + CAPI reconcile with a nonce annotation, or copy the AzureMachinePool providerIDList into the
// MachinePool while CAPI's readiness gate keeps it frozen. Every decision is re-made on fresh reads; every write is
// guarded (identity, the cluster's RBAC, cross-site checks, one at a time per pool, rate limits, idempotency keys,
// optimistic concurrency) and leaves an audit trail.

import os from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import { analyzePool } from '@/lib/analyze';
import {
  poolKey,
  type PoolDetail,
  type PoolRef,
  type ResyncMode,
  type ResyncObjectResult,
  type ResyncObservation,
  type ResyncRequest,
  type ResyncResult,
  type ResyncRunning,
  type ResyncStatus,
  type TimelineEntry,
} from '@/lib/api-types';
import { idDiff } from '@/lib/diagnosis';
import { plural } from '@/lib/format';
import { UNINITIALIZED_TAINT, type PoolInput } from '@/lib/pool-model';
import type { KubeObject } from '@/lib/unstructured';
import { azureInput, scaleSetRefOf, type AzureRead, type ScaleSetRef } from '../azure/reader';
import { resyncBody } from '../http/api-schemas';
import { HttpError, readJsonBody, rejectLargeBody } from '../http/route';
import type { TimelineStore } from '../store/store';
import { IdempotencyCache, PoolLocks, RateLimiter, checkSameOrigin } from './guards';
import type { Access, AccessCheck } from './identity';
import { KubeCallError, PoolObjects, listOf, rvOf, type FreshPool } from './pool-objects';

export const RESYNC_ANNOTATION = 'poolscope.dev/resync-requested-at';

export interface ResyncDeps {
  contexts: readonly string[];
  kubeconfigFor(context: string): KubeConfig;
  access: Access;
  store: TimelineStore;
  readAzure(ref: ScaleSetRef): Promise<AzureRead>;
  /** Tells this process's live viewers that a pool's timeline changed. */
  publish(change: { poolKey: string; at: string; fields: string[] }): void;
  readOnly: boolean;
  timeoutMs: number;
  waitSeconds: number;
  log?: (line: Record<string, unknown>) => void;
  /** Limits: per user (any request) and per pool (writes), each per minute. */
  userPerMinute?: number;
  poolPerMinute?: number;
}

/** Whether two lists hold the same IDs (order and repeats aside). */
const sameIds = (a: readonly string[], b: readonly string[]) => {
  const d = idDiff(a, b);
  return d.add.length === 0 && d.remove.length === 0;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** RFC 3339 with nanoseconds, as Kubernetes prints metav1.MicroTime-like stamps; unique per call. */
function nonce(): string {
  const ns = process.hrtime.bigint() % 1_000_000n;
  return new Date().toISOString().replace(/\.(\d{3})Z$/, (_, ms: string) => `.${ms}${ns.toString().padStart(6, '0')}Z`);
}

/** The workload cluster's Nodes as the collector last saw them (the resync does not read workload clusters). */
function workloadFromDetail(d: PoolDetail | null): NonNullable<PoolInput['workload']> {
  if (!d) return { state: 'unknown', reason: 'poolscope has not read this workload cluster yet' };
  const w = d.sources.workload;
  if (w.state !== 'ok') return w;
  return {
    state: 'ok',
    nodes: d.instances.flatMap((r): KubeObject[] =>
      r.node && r.sources.node
        ? [
            {
              apiVersion: 'v1',
              kind: 'Node',
              metadata: { name: r.node.name },
              spec: {
                providerID: r.sources.node,
                ...(r.node.uninitializedTaint ? { taints: [{ key: UNINITIALIZED_TAINT, effect: 'NoSchedule' }] } : {}),
              },
              status: {
                conditions: r.node.ready === null ? [] : [{ type: 'Ready', status: r.node.ready ? 'True' : 'False' }],
              },
            },
          ]
        : [],
    ),
  };
}

function clusterError(e: unknown, done: string): never {
  if (e instanceof KubeCallError) {
    const f = e.failure;
    const code = f.status === 0 ? 'cluster-unreachable' : f.status === 403 ? 'cluster-forbidden' : 'cluster-error';
    throw new HttpError(
      502,
      code,
      `${done} ${e.what} failed: ${f.message}${f.status === 403 ? " (poolscope's own service account lacks this right; see the README on RBAC)" : ''}`,
    );
  }
  throw e;
}

export class ResyncService {
  private readonly locks = new PoolLocks<ResyncRunning>();
  private readonly idempotency = new IdempotencyCache<ResyncResult>();
  private readonly perUser: RateLimiter;
  private readonly perPool: RateLimiter;

  constructor(private readonly deps: ResyncDeps) {
    this.perUser = new RateLimiter(deps.userPerMinute ?? 30, 60_000);
    this.perPool = new RateLimiter(deps.poolPerMinute ?? 4, 60_000);
  }

  private objects(ref: PoolRef): PoolObjects {
    if (!this.deps.contexts.includes(ref.context)) {
      throw new HttpError(
        404,
        'unknown-context',
        `poolscope does not watch a context named "${ref.context}" (it watches ${this.deps.contexts.join(', ') || 'none'}).`,
      );
    }
    return new PoolObjects(this.deps.kubeconfigFor(ref.context), ref, this.deps.timeoutMs);
  }

  private checks(ref: PoolRef, mode: ResyncMode, ampName: string): AccessCheck[] {
    const mp: AccessCheck = {
      verb: 'patch',
      group: 'cluster.x-k8s.io',
      resource: 'machinepools',
      namespace: ref.namespace,
      name: ref.name,
    };
    return mode === 'reconcile'
      ? [
          {
            verb: 'patch',
            group: 'infrastructure.cluster.x-k8s.io',
            resource: 'azuremachinepools',
            namespace: ref.namespace,
            name: ampName,
          },
          mp,
        ]
      : [mp];
  }

  private async permitted(
    identity: NonNullable<ResyncStatus['identity']>,
    ref: PoolRef,
    mode: ResyncMode,
    ampName: string,
  ): Promise<{ permitted: boolean; reason: string | null }> {
    for (const c of this.checks(ref, mode, ampName)) {
      const d = await this.deps.access.may(identity, ref.context, c);
      if (!d.allowed) return { permitted: false, reason: d.reason };
    }
    return { permitted: true, reason: null };
  }

  /** What this caller may do to the pool, for the Resync button and dialog. */
  async status(ref: PoolRef, headers: Headers): Promise<ResyncStatus> {
    const objects = this.objects(ref);
    const detail = await this.deps.store.currentPool(poolKey(ref));
    // As the pool's own page: a pool poolscope has not recorded has no resync to offer.
    if (!detail)
      throw new HttpError(
        404,
        'pool-not-found',
        `poolscope knows no MachinePool ${ref.namespace}/${ref.name} in context ${ref.context}.`,
      );
    const running = this.locks.holder(poolKey(ref));
    const off = (reason: string) => ({
      reconcile: { permitted: false, reason },
      'sync-provider-ids': { permitted: false, reason },
    });
    if (this.deps.readOnly) {
      return {
        readOnly: true,
        identity: null,
        identityProblem: null,
        modes: off('poolscope is read-only here (POOLSCOPE_READ_ONLY=true).'),
        verdict: detail?.verdict ?? null,
        running,
      };
    }
    let who;
    try {
      who = await this.deps.access.identify(headers, ref.context);
    } catch (e) {
      return {
        readOnly: false,
        identity: null,
        identityProblem: (e as Error).message,
        modes: off((e as Error).message),
        verdict: detail?.verdict ?? null,
        running,
      };
    }
    if (!who.identity)
      return {
        readOnly: false,
        identity: null,
        identityProblem: who.problem,
        modes: off(who.problem),
        verdict: detail?.verdict ?? null,
        running,
      };
    let modes: ResyncStatus['modes'];
    try {
      const mp = await objects.machinePool();
      const ampName = mp ? PoolObjects.ampName(mp) : ref.name;
      modes = {
        reconcile: await this.permitted(who.identity, ref, 'reconcile', ampName),
        'sync-provider-ids': await this.permitted(who.identity, ref, 'sync-provider-ids', ampName),
      };
    } catch (e) {
      const msg =
        e instanceof KubeCallError
          ? `The cluster ${ref.context} could not be asked (${e.message}).`
          : (e as Error).message;
      modes = off(msg);
    }
    return {
      readOnly: false,
      identity: who.identity,
      identityProblem: null,
      modes,
      verdict: detail?.verdict ?? null,
      running,
    };
  }

  /** POST: checks everything, then does (or, dry run, previews) the resync once per Idempotency-Key. */
  async run(ref: PoolRef, request: Request): Promise<ResyncResult> {
    if (this.deps.readOnly)
      throw new HttpError(
        403,
        'read-only',
        'poolscope is read-only here (POOLSCOPE_READ_ONLY=true): it makes no changes to clusters.',
      );
    // Headers only until the caller is known and within their limit: cross-site checks, the body's declared
    // size, the pool's context, identity. Then the body is read, at most 64 KiB of it.
    checkSameOrigin(request);
    rejectLargeBody(request);
    const objects = this.objects(ref);
    let who;
    try {
      who = await this.deps.access.identify(request.headers, ref.context);
    } catch (e) {
      if (e instanceof HttpError) throw e;
      throw new HttpError(502, 'cluster-error', (e as Error).message);
    }
    if (!who.identity)
      throw new HttpError(
        401,
        'not-signed-in',
        `${who.problem} Resync needs to know who you are; reading needs nothing.`,
      );
    const identity = who.identity;
    const wait = this.perUser.take(identity.user);
    if (wait)
      throw new HttpError(
        429,
        'rate-limited',
        `Too many resync requests from ${identity.user}; try again in ${wait} s.`,
        { 'retry-after': String(wait) },
      );
    const body: ResyncRequest = await readJsonBody(request, resyncBody);
    const key = request.headers.get('idempotency-key');
    if (key !== null && (key.length === 0 || key.length > 200))
      throw new HttpError(400, 'invalid-idempotency-key', 'Idempotency-Key must be 1 to 200 characters.');
    const fingerprint = `${poolKey(ref)} ${body.mode}${body.dryRun ? ' (dry run)' : ''}`;
    const go = () => this.perform(objects, ref, body, identity);
    if (key === null) return go();
    const { result, replayed } = this.idempotency.run(identity.user, key, fingerprint, go);
    const r = await result;
    return replayed ? { ...r, replayed: true } : r;
  }

  private async perform(
    objects: PoolObjects,
    ref: PoolRef,
    body: ResyncRequest,
    identity: NonNullable<ResyncStatus['identity']>,
  ): Promise<ResyncResult> {
    const pool = poolKey(ref);
    const dryRun = body.dryRun === true;
    const startedAt = new Date().toISOString();
    let mp: KubeObject | null;
    try {
      mp = await objects.machinePool();
    } catch (e) {
      clusterError(e, 'Nothing was changed:');
    }
    if (!mp)
      throw new HttpError(
        404,
        'pool-not-found',
        `MachinePool ${ref.namespace}/${ref.name} does not exist on ${ref.context}.`,
      );
    const may = await this.permitted(identity, ref, body.mode, PoolObjects.ampName(mp)).catch((e: Error) => {
      throw new HttpError(502, 'cluster-error', e.message);
    });
    if (!may.permitted)
      throw new HttpError(403, 'forbidden', `${may.reason} The cluster's RBAC decides who may resync.`);

    const running: ResyncRunning = { mode: body.mode, user: identity.user, startedAt };
    const release = dryRun ? () => {} : this.locks.acquire(pool, running);
    if (!release) {
      const h = this.locks.holder(pool) as ResyncRunning;
      throw new HttpError(
        409,
        'resync-running',
        `A ${h.mode} started by ${h.user} at ${h.startedAt} is still running on this pool; wait for it to finish.`,
      );
    }
    try {
      if (!dryRun) {
        const wait = this.perPool.take(pool);
        if (wait)
          throw new HttpError(
            429,
            'rate-limited',
            `This pool was resynced several times in the last minute; try again in ${wait} s.`,
            { 'retry-after': String(wait) },
          );
      }
      let fresh: FreshPool;
      try {
        fresh = await objects.read(mp);
      } catch (e) {
        clusterError(e, 'Nothing was changed:');
      }
      const detail = await this.deps.store.currentPool(pool);
      const verdict = await this.verdict(ref, fresh, detail, body.mode);
      const option = body.mode === 'reconcile' ? verdict.reconcile : verdict.syncProviderIds;
      if (!option.allowed)
        throw new HttpError(
          409,
          'resync-refused',
          `poolscope will not ${body.mode === 'reconcile' ? 'trigger a reconcile' : 'copy the list'}: ${option.reason}`,
        );
      const result =
        body.mode === 'reconcile'
          ? await this.reconcile(
              objects,
              ref,
              fresh,
              dryRun,
              identity.user,
              startedAt,
              option.canHelp ? null : option.reason,
            )
          : await this.syncProviderIds(objects, ref, fresh, dryRun, identity.user, startedAt);
      await this.audit(objects, fresh.mp, result, identity);
      return result;
    } catch (e) {
      this.deps.log?.({
        level: 'warn',
        msg: 'resync refused or failed',
        pool,
        mode: body.mode,
        dryRun,
        user: identity.user,
        via: identity.via,
        error: e instanceof HttpError ? e.code : 'internal',
        message: (e as Error).message,
      });
      throw e;
    } finally {
      release();
    }
  }

  /** The verdict on fresh objects (and, to copy the list, a fresh read of the scale set). */
  private async verdict(ref: PoolRef, fresh: FreshPool, detail: PoolDetail | null, mode: ResyncMode) {
    let azure: NonNullable<PoolInput['azure']> = { state: 'unknown', reason: 'not read for a reconcile' };
    if (mode === 'sync-provider-ids') {
      const id = (fresh.amp?.spec as { providerID?: string } | undefined)?.providerID;
      const ss = scaleSetRefOf(id);
      azure = ss
        ? azureInput(await this.deps.readAzure(ss))
        : { state: 'unknown', reason: 'the AzureMachinePool names no scale set (spec.providerID)' };
    }
    const input: PoolInput = {
      context: ref.context,
      machinePool: fresh.mp,
      azureMachinePool: fresh.amp,
      azureMachinePoolMachines: fresh.ampms,
      machines: fresh.machines,
      cluster: fresh.cluster,
      workload: workloadFromDetail(detail),
      azure,
      capzVersion: detail?.summary.capzVersion ?? null,
    };
    return analyzePool(input, { now: new Date().toISOString() }).verdict;
  }

  private async reconcile(
    objects: PoolObjects,
    ref: PoolRef,
    fresh: FreshPool,
    dryRun: boolean,
    user: string,
    startedAt: string,
    cannotHelp: string | null,
  ): Promise<ResyncResult> {
    const value = nonce();
    const amp = fresh.amp as KubeObject;
    const ampName = String(amp.metadata?.name);
    const change = `annotation ${RESYNC_ANNOTATION}=${value}`;
    const results: ResyncObjectResult[] = [];
    let ampAfter: KubeObject;
    try {
      ampAfter = await objects.annotate('AzureMachinePool', ampName, RESYNC_ANNOTATION, value, dryRun);
    } catch (e) {
      clusterError(e, 'Nothing was changed:');
    }
    results.push({
      kind: 'AzureMachinePool',
      namespace: ref.namespace,
      name: ampName,
      action: dryRun ? 'dry-run' : 'patched',
      resourceVersionBefore: rvOf(amp),
      resourceVersionAfter: dryRun ? null : rvOf(ampAfter),
      change,
    });
    let mpAfter: KubeObject | null = null;
    try {
      mpAfter = await objects.annotate('MachinePool', ref.name, RESYNC_ANNOTATION, value, dryRun);
      results.push({
        kind: 'MachinePool',
        namespace: ref.namespace,
        name: ref.name,
        action: dryRun ? 'dry-run' : 'patched',
        resourceVersionBefore: rvOf(fresh.mp),
        resourceVersionAfter: dryRun ? null : rvOf(mpAfter),
        change,
      });
    } catch (e) {
      const msg = e instanceof KubeCallError ? e.message : (e as Error).message;
      results.push({
        kind: 'MachinePool',
        namespace: ref.namespace,
        name: ref.name,
        action: 'failed',
        resourceVersionBefore: rvOf(fresh.mp),
        resourceVersionAfter: null,
        change,
        error: msg,
      });
    }
    const base = {
      mode: 'reconcile' as const,
      dryRun,
      user,
      pool: ref,
      startedAt,
      objects: results,
      added: [],
      removed: [],
      audit: { event: null, marker: false, problems: [] },
      replayed: false,
    };
    if (dryRun) {
      return {
        ...base,
        outcome: 'dry-run',
        observed: null,
        finishedAt: new Date().toISOString(),
        message: `Dry run: the API server accepted the annotation on the AzureMachinePool${mpAfter ? ' and the MachinePool' : `, but not on the MachinePool (${results[1]?.error})`}. Nothing was written.`,
      };
    }
    if (!mpAfter) {
      return {
        ...base,
        outcome: 'partial',
        observed: null,
        finishedAt: new Date().toISOString(),
        message: `Partly done: the AzureMachinePool was annotated (so CAPZ, and through it CAPI, will reconcile), but the MachinePool was not: ${results[1]?.error}.`,
      };
    }
    const observed = await this.observe(objects, ampName, ampAfter, mpAfter);
    const expected =
      cannotHelp && !(observed.listsAgree && observed.ampReady === true) ? ` As poolscope expected: ${cannotHelp}` : '';
    return {
      ...base,
      outcome: 'done',
      observed,
      finishedAt: new Date().toISOString(),
      message: `Reconcile triggered on the AzureMachinePool and the MachinePool. ${observed.summary}${expected}`,
    };
  }

  /** Watches the two objects after a trigger until the controllers answer or the deadline passes. */
  private async observe(
    objects: PoolObjects,
    ampName: string,
    ampPatched: KubeObject,
    mpPatched: KubeObject,
  ): Promise<ResyncObservation> {
    const start = Date.now();
    const deadline = start + this.deps.waitSeconds * 1000;
    const ready = (o: KubeObject) => (o.status as { ready?: boolean } | undefined)?.ready ?? null;
    let amp = ampPatched;
    let mp = mpPatched;
    for (;;) {
      const listsAgree = sameIds(listOf(amp) ?? [], listOf(mp) ?? []);
      const ampMoved = rvOf(amp) !== rvOf(ampPatched);
      if ((listsAgree && ready(amp) === true) || (ampMoved && Date.now() - start > 1000) || Date.now() >= deadline)
        break;
      await sleep(500);
      try {
        amp = (await objects.azureMachinePool(ampName)) ?? amp;
        mp = (await objects.machinePool()) ?? mp;
      } catch {
        break;
      }
    }
    const waitedSeconds = Math.round((Date.now() - start) / 100) / 10;
    const capzReconciled = rvOf(amp) !== rvOf(ampPatched);
    const ampReady = ready(amp);
    const ampList = listOf(amp) ?? [];
    const mpList = listOf(mp) ?? [];
    const mpListChanged = !sameIds(mpList, listOf(mpPatched) ?? []);
    const listsAgree = sameIds(ampList, mpList);
    let summary: string;
    if (listsAgree && ampReady === true) {
      summary = mpListChanged
        ? `CAPI copied the list: the MachinePool now holds the same ${plural(mpList.length, 'ID')} as the AzureMachinePool.`
        : `Both lists hold the same ${plural(mpList.length, 'ID')} and the AzureMachinePool is ready; nothing was out of date.`;
    } else if (ampReady !== true) {
      summary = `${capzReconciled ? `CAPZ reconciled (AzureMachinePool resourceVersion ${rvOf(ampPatched)} → ${rvOf(amp)})` : `No controller wrote the AzureMachinePool within ${waitedSeconds} s (CAPZ may still be in its 10 s debounce)`}, but the AzureMachinePool is still not ready: CAPI's readiness gate stays closed, so the MachinePool list (${plural(mpList.length, 'ID')}; the AzureMachinePool lists ${ampList.length}) ${mpListChanged ? 'changed only through other writes' : 'did not change'}. A reconcile cannot get past the gate; copying the list can.`;
    } else {
      summary = `The AzureMachinePool is ready but CAPI had not copied its list within ${waitedSeconds} s (${plural(mpList.length, 'ID')} in the MachinePool, ${ampList.length} in the AzureMachinePool); it will on its next reconcile.`;
    }
    return {
      waitedSeconds,
      capzReconciled,
      ampReady,
      ampListLength: ampList.length,
      mpListLength: mpList.length,
      mpListChanged,
      listsAgree,
      summary,
    };
  }

  private async syncProviderIds(
    objects: PoolObjects,
    ref: PoolRef,
    fresh: FreshPool,
    dryRun: boolean,
    user: string,
    startedAt: string,
  ): Promise<ResyncResult> {
    const target = listOf(fresh.amp) ?? [];
    const before = listOf(fresh.mp) ?? [];
    let after: KubeObject;
    try {
      after = await objects.setProviderIdList(fresh.mp, target, dryRun);
    } catch (e) {
      if (
        e instanceof KubeCallError &&
        (e.failure.status === 409 || (e.failure.status === 422 && /test/i.test(e.failure.message)))
      ) {
        throw new HttpError(
          409,
          'concurrent-write',
          'The MachinePool changed while poolscope was writing its list (a controller wrote it first). Nothing was overwritten and nothing was written; look at the new state and try again if it is still needed.',
        );
      }
      clusterError(e, 'Nothing was changed:');
    }
    const written = listOf(after) ?? [];
    const { add: added, remove: removed } = idDiff(before, written);
    const change = `spec.providerIDList: ${plural(before.length, 'ID')} → ${plural(written.length, 'ID')} (+${added.length} −${removed.length})`;
    const object: ResyncObjectResult = {
      kind: 'MachinePool',
      namespace: ref.namespace,
      name: ref.name,
      action: dryRun ? 'dry-run' : 'patched',
      resourceVersionBefore: rvOf(fresh.mp),
      resourceVersionAfter: dryRun ? null : rvOf(after),
      change,
    };
    const counts = `${plural(added.length, 'ID')} added, ${removed.length} removed`;
    return {
      mode: 'sync-provider-ids',
      dryRun,
      user,
      pool: ref,
      startedAt,
      finishedAt: new Date().toISOString(),
      objects: [object],
      added,
      removed,
      observed: null,
      audit: { event: null, marker: false, problems: [] },
      replayed: false,
      outcome: dryRun ? 'dry-run' : 'done',
      message: dryRun
        ? `Dry run: the API server accepted the change; it would set the MachinePool list to the AzureMachinePool's ${plural(target.length, 'ID')} (${counts}). Nothing was written.`
        : `Copied the AzureMachinePool list into the MachinePool: ${counts} (resourceVersion ${object.resourceVersionBefore} → ${object.resourceVersionAfter}). The autoscaler sees the same instances as CAPZ now; CAPI keeps the list from its next reconcile past the gate.`,
    };
  }

  /** A Kubernetes Event, a timeline marker and a log line; a failed audit step is reported, never hidden. */
  private async audit(
    objects: PoolObjects,
    mp: KubeObject,
    r: ResyncResult,
    identity: NonNullable<ResyncStatus['identity']>,
  ): Promise<void> {
    const pool = poolKey(r.pool);
    const line = {
      level: 'info',
      msg: 'resync',
      pool,
      mode: r.mode,
      dryRun: r.dryRun,
      outcome: r.outcome,
      user: identity.user,
      via: identity.via,
      objects: r.objects.map((o) => ({
        kind: o.kind,
        name: o.name,
        action: o.action,
        rv: [o.resourceVersionBefore, o.resourceVersionAfter],
      })),
      added: r.added.length,
      removed: r.removed.length,
    };
    if (r.dryRun) {
      this.deps.log?.(line);
      return;
    }
    const text = `${identity.user} (${identity.via}) ran ${r.mode}: ${r.outcome}. ${r.message}`;
    try {
      r.audit.event = await objects.event(
        mp,
        r.outcome === 'done' ? 'Normal' : 'Warning',
        text.slice(0, 1000),
        `poolscope-${os.hostname()}`,
      );
    } catch (e) {
      r.audit.problems.push(`The Kubernetes Event could not be recorded: ${(e as Error).message}`);
    }
    const at = new Date().toISOString();
    const entry: TimelineEntry = {
      at,
      poolKey: pool,
      field: 'resync',
      from: null,
      to: `${r.mode} by ${identity.user}: ${r.outcome}`,
      detail: r.message,
    };
    try {
      await this.deps.store.appendEntries([entry]);
      r.audit.marker = true;
      this.deps.publish({ poolKey: pool, at, fields: ['resync'] });
    } catch (e) {
      r.audit.problems.push(`The timeline marker could not be stored: ${(e as Error).message}`);
    }
    this.deps.log?.({ ...line, event: r.audit.event, marker: r.audit.marker, problems: r.audit.problems });
  }
}
