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
  type ResyncOption,
  type ResyncRequest,
  type ResyncResult,
  type ResyncRunning,
  type ResyncStatus,
  type ResyncVerdict,
  type TimelineEntry,
} from '@/lib/api-types';
import { RESYNC_ACTIONS, actionLabel } from '@/lib/resync-actions';
import { UNINITIALIZED_TAINT } from '@/lib/capi-model';
import type { PoolInput } from '@/lib/pool-model';
import type { KubeObject } from '@/lib/unstructured';
import { azureInput, scaleSetRefOf, type AzureRead, type ScaleSetRef } from '../azure/reader';
import { resyncBody } from '../http/api-schemas';
import { HttpError, readJsonBody, rejectLargeBody } from '../http/route';
import type { TimelineStore } from '../store/store';
import { IdempotencyCache, PoolLocks, RateLimiter, checkSameOrigin } from './guards';
import type { Access, AccessCheck } from './identity';
import { KubeCallError, PoolObjects, type FreshPool } from './pool-objects';
import { clusterError, note, reconcile, syncProviderIds, type Run } from './resync-writes';
import { verdictDigest } from './verdict-digest';

export { RESYNC_ANNOTATION } from './resync-writes';

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

export class ResyncService {
  private readonly locks = new PoolLocks<ResyncRunning>();
  private readonly idempotency = new IdempotencyCache<ResyncResult>();
  private readonly perUser: RateLimiter;
  private readonly perPool: RateLimiter;
  /** Fresh checks (GET …/resync?fresh=1) read the cluster and Azure: a dialog's worth a minute, per user. */
  private readonly freshPerUser = new RateLimiter(60, 60_000);

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

  /**
   * What this caller may do to the pool, for the Resync button and dialog. With `fresh`, for a caller the cluster
   * permits a mode, the verdict comes from fresh reads (what a POST would decide on now) with its digest.
   */
  async status(ref: PoolRef, headers: Headers, opts: { fresh?: boolean } = {}): Promise<ResyncStatus> {
    const objects = this.objects(ref);
    const key = poolKey(ref);
    const detail = await this.deps.store.currentPool(key);
    // As the pool's own page: a pool poolscope has not recorded has no resync to offer.
    if (!detail)
      throw new HttpError(
        404,
        'pool-not-found',
        `poolscope knows no MachinePool ${ref.namespace}/${ref.name} in context ${ref.context}.`,
      );
    const collected: Pick<ResyncStatus, 'verdict' | 'verdictSource' | 'verdictDigest'> = {
      verdict: detail.verdict,
      verdictSource: 'collected',
      verdictDigest: null,
    };
    const answer = (a: Pick<ResyncStatus, 'readOnly' | 'identity' | 'identityProblem' | 'modes'>, v = collected) => ({
      ...a,
      ...v,
      running: this.locks.holder(key),
    });
    const off = (reason: string) => ({
      reconcile: { permitted: false, reason },
      'sync-provider-ids': { permitted: false, reason },
    });
    const none = { identity: null, identityProblem: null };
    if (this.deps.readOnly)
      return answer({ readOnly: true, ...none, modes: off('poolscope is read-only here (POOLSCOPE_READ_ONLY=true).') });
    let who;
    try {
      who = await this.deps.access.identify(headers, ref.context);
    } catch (e) {
      const problem = (e as Error).message;
      return answer({ readOnly: false, ...none, identityProblem: problem, modes: off(problem) });
    }
    if (!who.identity)
      return answer({ readOnly: false, ...none, identityProblem: who.problem, modes: off(who.problem) });
    const { modes, mp } = await this.modes(objects, ref, who.identity);
    const may = modes.reconcile.permitted || modes['sync-provider-ids'].permitted;
    const verdict =
      opts.fresh && may && mp ? await this.freshVerdict(objects, ref, mp, detail, who.identity.user) : collected;
    return answer({ readOnly: false, identity: who.identity, identityProblem: null, modes }, verdict);
  }

  /** The cluster's RBAC answer per mode (and the MachinePool it was asked about). */
  private async modes(
    objects: PoolObjects,
    ref: PoolRef,
    identity: NonNullable<ResyncStatus['identity']>,
  ): Promise<{ modes: ResyncStatus['modes']; mp: KubeObject | null }> {
    try {
      const mp = await objects.machinePool();
      const ampName = mp ? PoolObjects.ampName(mp) : ref.name;
      return {
        mp,
        modes: {
          reconcile: await this.permitted(identity, ref, 'reconcile', ampName),
          'sync-provider-ids': await this.permitted(identity, ref, 'sync-provider-ids', ampName),
        },
      };
    } catch (e) {
      const reason =
        e instanceof KubeCallError
          ? `The cluster ${ref.context} could not be asked (${e.message}).`
          : (e as Error).message;
      return {
        mp: null,
        modes: { reconcile: { permitted: false, reason }, 'sync-provider-ids': { permitted: false, reason } },
      };
    }
  }

  /** The verdict on fresh reads of the cluster and Azure, as a POST would decide now; limited per user. */
  private async freshVerdict(objects: PoolObjects, ref: PoolRef, mp: KubeObject, detail: PoolDetail, user: string) {
    const wait = this.freshPerUser.take(user);
    if (wait)
      throw new HttpError(429, 'rate-limited', `Too many fresh checks of pools by ${user}; try again in ${wait} s.`, {
        'retry-after': String(wait),
      });
    let fresh: FreshPool;
    try {
      fresh = await objects.read(mp);
    } catch (e) {
      clusterError(e, 'The pool could not be checked afresh:');
    }
    const verdict = await this.verdict(ref, fresh, detail);
    return { verdict, verdictSource: 'fresh' as const, verdictDigest: verdictDigest(verdict) };
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
    const fingerprint = `${poolKey(ref)} ${body.mode}${body.dryRun ? ' (dry run)' : ''}${body.verdictDigest ? ` confirming ${body.verdictDigest}` : ''}`;
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

    // The running resync carries its steps: GET …/resync shows them while this request waits.
    const running: ResyncRunning = { mode: body.mode, user: identity.user, startedAt, steps: [] };
    const release = dryRun ? () => {} : this.locks.acquire(pool, running);
    if (!release) {
      const h = this.locks.holder(pool) as ResyncRunning;
      throw new HttpError(
        409,
        'resync-running',
        `A ${actionLabel(h.mode)} started by ${h.user} at ${h.startedAt} is still running on this pool; wait for it to finish.`,
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
      const { run, option } = await this.decide({ objects, ref, mp, body, user: identity.user, startedAt, running });
      const result =
        body.mode === 'reconcile'
          ? await reconcile(run, this.deps.waitSeconds, option.canHelp ? null : option.reason)
          : await syncProviderIds(run);
      await this.audit(objects, run.fresh.mp, result, identity);
      return result;
    } catch (e) {
      this.deps.log?.({
        level: 'warn',
        msg: 'resync refused or failed',
        pool,
        mode: body.mode,
        action: RESYNC_ACTIONS[body.mode].name,
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

  /**
   * Reads the pool afresh and decides on it: refused (409 `resync-refused`), changed since the preview the request
   * confirms (409 `verdict-changed`, with the new preview; nothing is written), or go.
   */
  private async decide(a: {
    objects: PoolObjects;
    ref: PoolRef;
    mp: KubeObject;
    body: ResyncRequest;
    user: string;
    startedAt: string;
    running: ResyncRunning;
  }): Promise<{ run: Run; option: ResyncOption }> {
    let fresh: FreshPool;
    try {
      fresh = await a.objects.read(a.mp);
    } catch (e) {
      clusterError(e, 'Nothing was changed:');
    }
    const verdict = await this.verdict(a.ref, fresh, await this.deps.store.currentPool(poolKey(a.ref)));
    const run: Run = {
      objects: a.objects,
      ref: a.ref,
      fresh,
      dryRun: a.body.dryRun === true,
      user: a.user,
      startedAt: a.startedAt,
      digest: verdictDigest(verdict),
      steps: a.running.steps,
    };
    const { mode } = a.body;
    const option = mode === 'reconcile' ? verdict.reconcile : verdict.syncProviderIds;
    if (a.body.verdictDigest !== undefined && a.body.verdictDigest !== run.digest)
      throw await this.verdictChanged(run, mode, verdict, option);
    if (!option.allowed)
      throw new HttpError(409, 'resync-refused', `poolscope refuses ${RESYNC_ACTIONS[mode].name}: ${option.reason}`);
    note(
      run.steps,
      'checked',
      `Read the pool afresh${a.body.verdictDigest ? ': the verdict is the one previewed' : ''}. ${option.reason}`,
    );
    return { run, option };
  }

  /** 409 `verdict-changed`, carrying the verdict now and the dry run of the same mode on it, to confirm again. */
  private async verdictChanged(
    run: Run,
    mode: ResyncMode,
    verdict: ResyncVerdict,
    option: ResyncOption,
  ): Promise<HttpError> {
    const name = RESYNC_ACTIONS[mode].name;
    // A dry run that fails leaves the preview's dryRun null; the dialog's own preview then shows the failure.
    const preview = { ...run, dryRun: true, steps: [] };
    const dryRun = option.allowed
      ? await (mode === 'reconcile' ? reconcile(preview, 0, null) : syncProviderIds(preview)).catch(() => null)
      : null;
    const now = option.allowed
      ? `${name} is still allowed: ${option.reason}`
      : `poolscope now refuses ${name}: ${option.reason}`;
    const recommends = verdict.recommended
      ? `poolscope now recommends ${RESYNC_ACTIONS[verdict.recommended].name}.`
      : 'poolscope now recommends no resync.';
    return new HttpError(
      409,
      'verdict-changed',
      `The pool changed since the preview you confirmed, so nothing was done. ${now} ${recommends} Look at the new preview and confirm again.`,
      {},
      { preview: { verdict, verdictDigest: run.digest, dryRun } },
    );
  }

  /**
   * The verdict on fresh objects and a fresh read of the scale set, whatever the mode: the same verdict for a
   * preview of either mode and for its confirm, so their digests compare.
   */
  private async verdict(ref: PoolRef, fresh: FreshPool, detail: PoolDetail | null): Promise<ResyncVerdict> {
    const id = (fresh.amp?.spec as { providerID?: string } | undefined)?.providerID;
    const ss = scaleSetRefOf(id);
    const azure: NonNullable<PoolInput['azure']> = ss
      ? azureInput(await this.deps.readAzure(ss))
      : { state: 'unknown', reason: 'the AzureMachinePool names no scale set (spec.providerID)' };
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
      action: RESYNC_ACTIONS[r.mode].name,
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
    const text = `${identity.user} (${identity.via}) ran ${actionLabel(r.mode)}: ${r.outcome}. ${r.message}`;
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
      to: `${RESYNC_ACTIONS[r.mode].name} by ${identity.user}: ${r.outcome}`,
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
