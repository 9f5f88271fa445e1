import 'server-only';
// The two writes a resync makes, once it is decided (server/actions/resync.ts): a reconcile trigger on the
// MachinePool and its infra object (an AzureMachinePool, or an AKS pool's), watched until CAPZ and CAPI answer, and
// a copy of the AzureMachinePool providerIDList. Each records its steps as they happen,
// so the pool's status shows a reconcile's progress while its POST waits.

import type {
  InfraKind,
  PoolRef,
  ResyncObjectResult,
  ResyncObservation,
  ResyncResult,
  ResyncStep,
  ResyncStepCode,
} from '@/lib/api-types';
import { idDiff } from '@/lib/pool-lists';
import { plural } from '@/lib/format';
import type { KubeObject } from '@/lib/unstructured';
import { RESYNC_ANNOTATION } from '@/lib/resync-actions';
import { HttpError } from '../http/route';
import { KubeCallError, listOf, rvOf, type FreshPool, type PoolObjects } from './pool-objects';

export { RESYNC_ANNOTATION };

/** What one decided resync acts on, and where its steps go. */
export interface Run {
  objects: PoolObjects;
  ref: PoolRef;
  fresh: FreshPool;
  dryRun: boolean;
  user: string;
  startedAt: string;
  /** The verdict it was decided on (lib/api-types ResyncResult.verdictDigest). */
  digest: string;
  steps: ResyncStep[];
}

export function note(steps: ResyncStep[], code: ResyncStepCode, text: string): void {
  steps.push({ at: new Date().toISOString(), code, text });
}

/** Whether two lists hold the same IDs (order and repeats aside). */
const sameIds = (a: readonly string[], b: readonly string[]) => {
  const d = idDiff(a, b);
  return d.add.length === 0 && d.remove.length === 0;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ready = (o: KubeObject) => (o.status as { ready?: boolean } | undefined)?.ready ?? null;

/** RFC 3339 with nanoseconds, as Kubernetes prints metav1.MicroTime-like stamps; unique per call. */
function nonce(): string {
  const ns = process.hrtime.bigint() % 1_000_000n;
  return new Date().toISOString().replace(/\.(\d{3})Z$/, (_, ms: string) => `.${ms}${ns.toString().padStart(6, '0')}Z`);
}

export function clusterError(e: unknown, done: string): never {
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

/** The fields every result of a run shares. */
function resultBase(run: Run) {
  return {
    dryRun: run.dryRun,
    user: run.user,
    pool: run.ref,
    startedAt: run.startedAt,
    audit: { event: null, marker: false, problems: [] },
    replayed: false,
    verdictDigest: run.digest,
    steps: run.dryRun ? [] : run.steps,
  };
}

/** Annotates the infra object, then the MachinePool (a failed second write is a `partial` result). */
async function annotateBoth(
  run: Run,
  value: string,
): Promise<{ results: ResyncObjectResult[]; ampAfter: KubeObject; mpAfter: KubeObject | null }> {
  const { objects, ref, fresh, dryRun } = run;
  const kind = fresh.infraKind;
  const amp = fresh.infra as KubeObject;
  const ampName = String(amp.metadata?.name);
  const change = `annotation ${RESYNC_ANNOTATION}=${value}`;
  const row = (kind: ResyncObjectResult['kind'], name: string, before: KubeObject, after: KubeObject | null) => ({
    kind,
    namespace: ref.namespace,
    name,
    action: dryRun ? ('dry-run' as const) : ('patched' as const),
    resourceVersionBefore: rvOf(before),
    resourceVersionAfter: dryRun || !after ? null : rvOf(after),
    change,
  });
  let ampAfter: KubeObject;
  try {
    ampAfter = await objects.annotate(kind, ampName, RESYNC_ANNOTATION, value, dryRun);
  } catch (e) {
    clusterError(e, 'Nothing was changed:');
  }
  const results: ResyncObjectResult[] = [row(kind, ampName, amp, ampAfter)];
  note(
    run.steps,
    'amp-annotated',
    `Annotated ${kind} ${ref.namespace}/${ampName} (resourceVersion ${rvOf(amp)} → ${rvOf(ampAfter)}): CAPZ reconciles it.`,
  );
  try {
    const mpAfter = await objects.annotate('MachinePool', ref.name, RESYNC_ANNOTATION, value, dryRun);
    results.push(row('MachinePool', ref.name, fresh.mp, mpAfter));
    note(
      run.steps,
      'mp-annotated',
      `Annotated MachinePool ${ref.namespace}/${ref.name} (resourceVersion ${rvOf(fresh.mp)} → ${rvOf(mpAfter)}): CAPI reconciles it.`,
    );
    return { results, ampAfter, mpAfter };
  } catch (e) {
    const error = e instanceof KubeCallError ? e.message : (e as Error).message;
    results.push({ ...row('MachinePool', ref.name, fresh.mp, null), action: 'failed', error });
    note(run.steps, 'mp-annotate-failed', `The MachinePool could not be annotated: ${error}`);
    return { results, ampAfter, mpAfter: null };
  }
}

/**
 * Triggers a reconcile (or, dry run, has the API server check the annotations) and watches for the controllers'
 * answer for up to `waitSeconds`. `cannotHelp` is the verdict's reason when it expected no change.
 */
export async function reconcile(run: Run, waitSeconds: number, cannotHelp: string | null): Promise<ResyncResult> {
  const { results, ampAfter, mpAfter } = await annotateBoth(run, nonce());
  const kind = run.fresh.infraKind;
  const base = { ...resultBase(run), mode: 'reconcile' as const, objects: results, added: [], removed: [] };
  const finishedAt = () => new Date().toISOString();
  if (run.dryRun) {
    return {
      ...base,
      outcome: 'dry-run',
      observed: null,
      finishedAt: finishedAt(),
      message: `Dry run: the API server accepted the annotation on the ${kind}${mpAfter ? ' and the MachinePool' : `, but not on the MachinePool (${results[1]?.error})`}. Nothing was written.`,
    };
  }
  if (!mpAfter) {
    return {
      ...base,
      outcome: 'partial',
      observed: null,
      finishedAt: finishedAt(),
      message: `Partly done: the ${kind} was annotated (so CAPZ, and through it CAPI, will reconcile), but the MachinePool was not: ${results[1]?.error}.`,
    };
  }
  const observed = await observe(run, waitSeconds, ampAfter, mpAfter);
  // 'finished' is the answer's step only: while the audit is written the pool's status still shows the watch.
  const steps = [...run.steps];
  note(steps, 'finished', `Finished after ${observed.waitedSeconds} s. ${observed.summary}`);
  const expected =
    cannotHelp && !(observed.listsAgree && observed.ampReady === true) ? ` As poolscope expected: ${cannotHelp}` : '';
  return {
    ...base,
    steps,
    outcome: 'done',
    observed,
    finishedAt: finishedAt(),
    message: `Reconcile triggered on the ${kind} and the MachinePool. ${observed.summary}${expected}`,
  };
}

/** Notes each answer of the controllers once, as it is seen: CAPZ writing the infra object, the gate, the list. */
function tracker(run: Run, ampPatched: KubeObject, mpPatched: KubeObject) {
  const kind = run.fresh.infraKind;
  const seen = new Set<ResyncStepCode>();
  const once = (code: ResyncStepCode, text: string) => {
    if (seen.has(code)) return;
    seen.add(code);
    note(run.steps, code, text);
  };
  return (amp: KubeObject, mp: KubeObject) => {
    if (rvOf(amp) !== rvOf(ampPatched))
      once(
        'capz-reconciled',
        `CAPZ reconciled the ${kind} (resourceVersion ${rvOf(ampPatched)} → ${rvOf(amp)}); it is ${ready(amp) === true ? 'ready' : 'not ready'}.`,
      );
    if (ready(amp) === true && ready(ampPatched) !== true)
      once('amp-ready', `The ${kind} is ready: CAPI's readiness gate is open.`);
    const mpList = listOf(mp) ?? [];
    if (!sameIds(mpList, listOf(mpPatched) ?? []))
      once(
        'mp-list-changed',
        `The MachinePool list changed: it holds ${plural(mpList.length, 'ID')}${sameIds(mpList, listOf(amp) ?? []) ? `, the same as the ${kind} list` : ''}.`,
      );
  };
}

/** Watches the two objects after a trigger until the controllers answer or the deadline passes. */
async function observe(
  run: Run,
  waitSeconds: number,
  ampPatched: KubeObject,
  mpPatched: KubeObject,
): Promise<ResyncObservation> {
  const start = Date.now();
  const deadline = start + waitSeconds * 1000;
  const ampName = String(ampPatched.metadata?.name);
  const track = tracker(run, ampPatched, mpPatched);
  note(
    run.steps,
    'watching',
    `Watching for CAPZ and CAPI to answer (up to ${waitSeconds} s; CAPZ may wait out a 10 s debounce).`,
  );
  let amp = ampPatched;
  let mp = mpPatched;
  for (;;) {
    const listsAgree = sameIds(listOf(amp) ?? [], listOf(mp) ?? []);
    const ampMoved = rvOf(amp) !== rvOf(ampPatched);
    if ((listsAgree && ready(amp) === true) || (ampMoved && Date.now() - start > 1000) || Date.now() >= deadline) break;
    await sleep(500);
    try {
      amp = (await run.objects.infraObject(run.fresh.infraKind, ampName)) ?? amp;
      mp = (await run.objects.machinePool()) ?? mp;
    } catch {
      // A failed re-read ends the watch early; the summary says what was seen until then.
      break;
    }
    track(amp, mp);
  }
  const waited = Math.round((Date.now() - start) / 100) / 10;
  const observed = observation(waited, run.fresh.infraKind, { ampPatched, mpPatched, amp, mp });
  return observed;
}

/** What the controllers did, in numbers and in words. */
function observation(
  waitedSeconds: number,
  kind: InfraKind,
  o: { ampPatched: KubeObject; mpPatched: KubeObject; amp: KubeObject; mp: KubeObject },
): ResyncObservation {
  const { ampPatched, mpPatched, amp, mp } = o;
  const capzReconciled = rvOf(amp) !== rvOf(ampPatched);
  const ampReady = ready(amp);
  const ampList = listOf(amp) ?? [];
  const mpList = listOf(mp) ?? [];
  const mpListChanged = !sameIds(mpList, listOf(mpPatched) ?? []);
  const listsAgree = sameIds(ampList, mpList);
  // An AKS pool's list freezes with the MachinePool's: no copy helps, only the end of what keeps it not ready.
  const past =
    kind === 'AzureMachinePool'
      ? 'A reconcile cannot get past the gate; Copy providerIDs can.'
      : 'A reconcile cannot get past the gate: it opens when CAPZ finds the agent pool done (ASO Ready).';
  let summary: string;
  if (listsAgree && ampReady === true) {
    summary = mpListChanged
      ? `CAPI copied the list: the MachinePool now holds the same ${plural(mpList.length, 'ID')} as the ${kind}.`
      : `Both lists hold the same ${plural(mpList.length, 'ID')} and the ${kind} is ready; nothing was out of date.`;
  } else if (ampReady !== true) {
    summary = `${capzReconciled ? `CAPZ reconciled (${kind} resourceVersion ${rvOf(ampPatched)} → ${rvOf(amp)})` : `No controller wrote the ${kind} within ${waitedSeconds} s (CAPZ may still be in its 10 s debounce)`}, but the ${kind} is still not ready: CAPI's readiness gate stays closed, so the MachinePool list (${plural(mpList.length, 'ID')}; the ${kind} lists ${ampList.length}) ${mpListChanged ? 'changed only through other writes' : 'did not change'}. ${past}`;
  } else {
    summary = `The ${kind} is ready but CAPI had not copied its list within ${waitedSeconds} s (${plural(mpList.length, 'ID')} in the MachinePool, ${ampList.length} in the ${kind}); it will on its next reconcile.`;
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

/** Sets the MachinePool list to the AzureMachinePool's, pinned to the list it replaces (a JSON patch `test`). */
export async function syncProviderIds(run: Run): Promise<ResyncResult> {
  const { objects, ref, fresh, dryRun } = run;
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
  note(
    run.steps,
    'list-written',
    `Wrote MachinePool ${ref.namespace}/${ref.name} ${change} (resourceVersion ${object.resourceVersionBefore} → ${rvOf(after)}).`,
  );
  const counts = `${plural(added.length, 'ID')} added, ${removed.length} removed`;
  return {
    ...resultBase(run),
    mode: 'sync-provider-ids',
    finishedAt: new Date().toISOString(),
    objects: [object],
    added,
    removed,
    observed: null,
    outcome: dryRun ? 'dry-run' : 'done',
    message: dryRun
      ? `Dry run: the API server accepted the change; it would set the MachinePool list to the AzureMachinePool's ${plural(target.length, 'ID')} (${counts}). Nothing was written.`
      : `Copied the AzureMachinePool list into the MachinePool: ${counts} (resourceVersion ${object.resourceVersionBefore} → ${object.resourceVersionAfter}). The autoscaler sees the same instances as CAPZ now; CAPI keeps the list from its next reconcile past the gate.`,
  };
}
