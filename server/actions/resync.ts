import 'server-only';
// One-click resync (docs/domain.md, "Triggering a reconcile from outside" and "What a resync can and cannot do"):
// trigger a CAPZ + CAPI reconcile with a nonce annotation, or copy the AzureMachinePool providerIDList into the
// MachinePool while CAPI's readiness gate keeps it frozen. Every decision is re-made on fresh reads; every write is
// guarded (identity, the cluster's RBAC, cross-site checks, one at a time per pool, rate limits, idempotency keys,
// optimistic concurrency) and leaves an audit trail.
//
// This module holds the service and the order of its guards; the guards themselves are in resync-checks.ts, the
// decision on fresh reads in resync-decision.ts, the writes in resync-writes.ts and the audit in resync-audit.ts.

import {
  poolKey,
  type PoolDetail,
  type PoolRef,
  type ResyncIdentity,
  type ResyncRequest,
  type ResyncResult,
  type ResyncRunning,
  type ResyncStatus,
} from '@/lib/api-types';
import type { KubeObject } from '@/lib/unstructured';
import { resyncBody } from '../http/api-schemas';
import { HttpError, readJsonBody, rejectLargeBody } from '../http/route';
import { IdempotencyCache, PoolLocks, RateLimiter, checkSameOrigin } from './guards';
import { PoolObjects, type FreshPool } from './pool-objects';
import { audit, logRefused } from './resync-audit';
import {
  existingMachinePool,
  fingerprint,
  idempotencyKey,
  limit,
  mustBePermitted,
  permittedModes,
  signedIn,
  stillRunning,
} from './resync-checks';
import type { ResyncDeps } from './resync-deps';
import { decide, freshVerdict } from './resync-decision';
import { clusterError, reconcile, syncProviderIds } from './resync-writes';
import { verdictDigest } from './verdict-digest';

export { RESYNC_ANNOTATION } from './resync-writes';
export type { ResyncDeps } from './resync-deps';

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
    const { modes, mp } = await permittedModes(this.deps.access, objects, ref, who.identity);
    const may = modes.reconcile.permitted || modes['sync-provider-ids'].permitted;
    const verdict =
      opts.fresh && may && mp ? await this.freshVerdict(objects, ref, mp, detail, who.identity.user) : collected;
    return answer({ readOnly: false, identity: who.identity, identityProblem: null, modes }, verdict);
  }

  /** The verdict on fresh reads of the cluster and Azure, as a POST would decide now; limited per user. */
  private async freshVerdict(objects: PoolObjects, ref: PoolRef, mp: KubeObject, detail: PoolDetail, user: string) {
    limit(this.freshPerUser, user, (wait) => `Too many fresh checks of pools by ${user}; try again in ${wait} s.`);
    let fresh: FreshPool;
    try {
      fresh = await objects.read(mp);
    } catch (e) {
      clusterError(e, 'The pool could not be checked afresh:');
    }
    const verdict = await freshVerdict(this.deps, ref, fresh, detail);
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
    const identity = await signedIn(this.deps.access, request.headers, ref.context);
    limit(
      this.perUser,
      identity.user,
      (wait) => `Too many resync requests from ${identity.user}; try again in ${wait} s.`,
    );
    const body: ResyncRequest = await readJsonBody(request, resyncBody);
    const key = idempotencyKey(request);
    const go = () => this.perform(objects, ref, body, identity);
    if (key === null) return go();
    const { result, replayed } = this.idempotency.run(identity.user, key, fingerprint(ref, body), go);
    const r = await result;
    return replayed ? { ...r, replayed: true } : r;
  }

  private async perform(
    objects: PoolObjects,
    ref: PoolRef,
    body: ResyncRequest,
    identity: ResyncIdentity,
  ): Promise<ResyncResult> {
    const pool = poolKey(ref);
    const dryRun = body.dryRun === true;
    const startedAt = new Date().toISOString();
    const mp = await existingMachinePool(objects, ref);
    await mustBePermitted(this.deps.access, identity, ref, body.mode, PoolObjects.infraOf(mp));

    // The running resync carries its steps: GET …/resync shows them while this request waits.
    const running: ResyncRunning = { mode: body.mode, user: identity.user, startedAt, steps: [] };
    const release = dryRun ? () => {} : this.locks.acquire(pool, running);
    if (!release) throw stillRunning(this.locks.holder(pool) as ResyncRunning);
    try {
      if (!dryRun)
        limit(
          this.perPool,
          pool,
          (wait) => `This pool was resynced several times in the last minute; try again in ${wait} s.`,
        );
      const { run, option } = await decide(this.deps, {
        objects,
        ref,
        mp,
        body,
        user: identity.user,
        startedAt,
        running,
      });
      const result =
        body.mode === 'reconcile'
          ? await reconcile(run, this.deps.waitSeconds, option.canHelp ? null : option.reason)
          : await syncProviderIds(run);
      await audit(this.deps, objects, run.fresh.mp, result, identity);
      return result;
    } catch (e) {
      logRefused(this.deps, { pool, mode: body.mode, dryRun, identity, error: e });
      throw e;
    } finally {
      release();
    }
  }
}
