'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useState } from 'react';
import {
  poolKey,
  type InfraKind,
  type PoolRef,
  type ResyncMode,
  type ResyncStatus,
  type ResyncVerdictChanged,
} from '@/lib/api-types';
import { RESYNC_ACTIONS } from '@/lib/resync-actions';
import { ApiRequestError } from '@/components/data/fetch-json';
import {
  newIdempotencyKey,
  postResync,
  queryKeys,
  resyncPreviewOptions,
  resyncStatusOptions,
} from '@/components/data/queries';
import { ResyncModes, blockedReason } from './resync-modes';
import { ResyncPreview } from './resync-preview';
import { ResyncResultView } from './resync-result';
import { ResyncSteps } from './resync-steps';

/** The recommended mode when it may be chosen, else the first that may; from the status as it is now. */
function firstMode(status: ResyncStatus): ResyncMode | null {
  const rec = status.verdict?.recommended ?? null;
  if (rec && blockedReason(status, rec) === null) return rec;
  return (['sync-provider-ids', 'reconcile'] as const).find((m) => blockedReason(status, m) === null) ?? null;
}

/** The new verdict a 409 `verdict-changed` carries, or null for any other failure. */
function changedPreview(e: unknown): ResyncVerdictChanged['preview'] | null {
  if (!(e instanceof ApiRequestError) || e.code !== 'verdict-changed') return null;
  return (e.body as Partial<ResyncVerdictChanged> | null)?.preview ?? null;
}

/** Choose a mode, see the server's dry run, confirm, watch the steps, read the result. */
export function ResyncFlow({
  poolRef,
  status: live,
  checking,
  checkProblem,
  recheck,
  close,
  infraKind,
}: {
  poolRef: PoolRef;
  infraKind?: InfraKind;
  status: ResyncStatus;
  checking: boolean;
  checkProblem: string | null;
  recheck: () => void;
  close: () => void;
}) {
  const qc = useQueryClient();
  // Once confirmed, the options stay as they were: a result is not shown beside options that changed because of it.
  const [confirmed, setConfirmed] = useState<ResyncStatus | null>(null);
  const status = confirmed ?? live;
  const [chosen, setChosen] = useState<ResyncMode | null>(null);
  const mode = chosen && blockedReason(status, chosen) === null ? chosen : firstMode(status);
  const preview = useQuery({
    ...resyncPreviewOptions(poolRef, mode ?? 'reconcile', status.verdictDigest),
    enabled: mode !== null && confirmed === null,
  });
  // One key per mode and verdict: a double click, or a retry after a lost answer, patches once.
  const digest = status.verdictDigest;
  const key = useMemo(() => `${mode}-${digest}-${newIdempotencyKey()}`, [mode, digest]);
  const apply = useMutation({
    mutationFn: (a: { mode: ResyncMode; verdictDigest: string }) =>
      postResync(poolRef, { mode: a.mode, verdictDigest: a.verdictDigest }, key),
    onError: (e) => {
      const next = changedPreview(e);
      if (!next) return;
      // The pool changed under the preview: show the new one, and ask again.
      qc.setQueryData(queryKeys.freshResync(poolRef), {
        ...live,
        verdict: next.verdict,
        verdictDigest: next.verdictDigest,
      });
      if (next.dryRun && mode)
        qc.setQueryData(resyncPreviewOptions(poolRef, mode, next.verdictDigest).queryKey, next.dryRun);
      setConfirmed(null);
    },
    onSettled: () => {
      const k = poolKey(poolRef);
      for (const root of ['pool', 'timeline']) void qc.invalidateQueries({ queryKey: [root, k] });
      void qc.invalidateQueries({ queryKey: queryKeys.resync(poolRef), exact: true });
    },
  });
  // While a resync runs, its steps come from the pool's status, read every second.
  const progress = useQuery({ ...resyncStatusOptions(poolRef), refetchInterval: apply.isPending ? 1000 : false });
  const running = progress.data?.running;
  const mine = apply.isPending && running && running.user === status.identity?.user ? running : null;

  // A preview read on a newer state than the options, or refused on it: check the options again.
  const previewDigest = preview.data?.verdictDigest;
  useEffect(() => {
    if (previewDigest && digest && previewDigest !== digest && !confirmed) recheck();
  }, [previewDigest, digest, confirmed, recheck]);
  const refusedAt =
    preview.error instanceof ApiRequestError && preview.error.code === 'resync-refused' ? preview.errorUpdatedAt : 0;
  useEffect(() => {
    if (refusedAt) recheck();
  }, [refusedAt, recheck]);

  const changed = changedPreview(apply.error);
  const done = apply.isSuccess;
  const canConfirm = mode !== null && preview.isSuccess && !checking && !apply.isPending && !done;
  return (
    <>
      <ResyncModes
        status={status}
        mode={mode}
        onChange={setChosen}
        disabled={apply.isPending || done}
        infraKind={infraKind}
      />
      {mode === null ? <p role="alert">Neither mode is possible for this pool now; the reasons are above.</p> : null}
      {checking && !confirmed ? (
        <p role="status" className="text-sm">
          The pool changed: checking it again…
        </p>
      ) : null}
      {checkProblem ? (
        <p role="alert" className="text-sm text-red-800 dark:text-red-200">
          The last check of the pool failed: {checkProblem}
        </p>
      ) : null}
      {changed ? (
        <p role="alert" data-testid="resync-changed" className="rounded border border-amber-400 p-3 text-sm">
          {apply.error?.message}
        </p>
      ) : null}
      {mode && !done ? <ResyncPreview preview={preview} /> : null}
      {apply.isPending ? <ResyncSteps steps={mine?.steps ?? []} running /> : null}
      {apply.isError && !changed ? (
        <p
          role="alert"
          data-testid="resync-error"
          className="rounded border border-red-300 bg-red-50 p-3 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100"
        >
          {apply.error.message}
        </p>
      ) : null}
      {apply.data ? <ResyncResultView result={apply.data} /> : null}
      <div className="flex justify-end gap-2">
        <button
          type="button"
          onClick={close}
          className="rounded border border-slate-300 px-3 py-1.5 dark:border-slate-700"
        >
          {done ? 'Close' : 'Cancel'}
        </button>
        {!done ? (
          <button
            type="button"
            data-testid="resync-confirm"
            disabled={!canConfirm}
            onClick={() => {
              if (!mode || !preview.data) return;
              setConfirmed(status);
              apply.mutate({ mode, verdictDigest: preview.data.verdictDigest });
            }}
            className="rounded bg-sky-700 px-3 py-1.5 font-medium text-white hover:bg-sky-800 disabled:cursor-not-allowed disabled:bg-slate-400"
          >
            {mode ? RESYNC_ACTIONS[mode].name : 'Confirm'}
          </button>
        ) : null}
      </div>
    </>
  );
}
