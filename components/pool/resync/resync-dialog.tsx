'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useRef, useState } from 'react';
import { poolKey, type PoolRef, type ResyncMode, type ResyncStatus } from '@/lib/api-types';
import { postResync } from '@/components/data/queries';
import { IdChanges, ResyncResultView } from './resync-result';
import { ResyncModes, blockedReason } from './resync-modes';

/** A random idempotency key (getRandomValues works outside secure contexts too, unlike randomUUID). */
function newKey(): string {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

function firstMode(status: ResyncStatus): ResyncMode | null {
  const rec = status.verdict?.recommended ?? null;
  if (rec && blockedReason(status, rec) === null) return rec;
  return (['sync-provider-ids', 'reconcile'] as const).find((m) => blockedReason(status, m) === null) ?? null;
}

/** Choose a mode, see the server's dry-run preview, confirm, watch progress, read the result. */
export function ResyncDialog({
  poolRef,
  status: live,
  onClose,
}: {
  poolRef: PoolRef;
  status: ResyncStatus;
  onClose: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  // The choices as they were when the dialog opened: a result must not be shown beside options that changed
  // because of it (the server re-checks everything on confirm anyway).
  const [status] = useState(live);
  const qc = useQueryClient();
  const [mode, setMode] = useState<ResyncMode | null>(() => firstMode(status));
  // One key per chosen mode: a double click, or a retry after a lost answer, patches once.
  const key = useMemo(() => (mode ? newKey() : ''), [mode]);
  const preview = useMutation({
    mutationFn: (m: ResyncMode) => postResync(poolRef, { mode: m, dryRun: true }, newKey()),
  });
  const apply = useMutation({
    mutationFn: (m: ResyncMode) => postResync(poolRef, { mode: m }, key),
    onSettled: () => {
      const k = poolKey(poolRef);
      for (const root of ['pool', 'timeline', 'resync']) void qc.invalidateQueries({ queryKey: [root, k] });
    },
  });
  const runPreview = preview.mutate;
  const resetApply = apply.reset;

  useEffect(() => {
    ref.current?.showModal();
  }, []);
  useEffect(() => {
    resetApply();
    if (mode) runPreview(mode);
  }, [mode, runPreview, resetApply]);

  const done = apply.isSuccess;
  return (
    <dialog
      ref={ref}
      onClose={onClose}
      aria-labelledby="resync-title"
      data-testid="resync-dialog"
      className="m-auto max-h-[90vh] w-[min(44rem,95vw)] overflow-y-auto rounded-lg border border-slate-300 bg-white p-0 text-slate-900 backdrop:bg-slate-900/50 dark:border-slate-700 dark:bg-slate-900 dark:text-slate-100"
    >
      <div className="space-y-4 p-5">
        <h2 id="resync-title" className="text-lg font-semibold">
          Resync {poolRef.namespace}/{poolRef.name}
        </h2>
        <ResyncModes status={status} mode={mode} onChange={setMode} disabled={apply.isPending || done} />
        {mode === null ? <p role="alert">Neither mode is possible for this pool now; the reasons are above.</p> : null}
        {mode && !done ? (
          <section aria-labelledby="preview-h" className="space-y-1">
            <h3 id="preview-h" className="font-medium">
              Preview (server-side dry run)
            </h3>
            {preview.isPending ? <p className="text-sm">Asking the API server what would change…</p> : null}
            {preview.isError ? (
              <p role="alert" className="text-sm text-red-800 dark:text-red-200">
                {preview.error.message}
              </p>
            ) : null}
            {preview.data ? (
              <div data-testid="resync-preview" className="space-y-1 text-sm">
                <p>{preview.data.message}</p>
                {preview.data.mode === 'sync-provider-ids' ? (
                  <IdChanges added={preview.data.added} removed={preview.data.removed} />
                ) : null}
              </div>
            ) : null}
          </section>
        ) : null}
        {apply.isPending ? (
          <p role="status" className="text-sm">
            Working…{' '}
            {mode === 'reconcile'
              ? 'poolscope waits for CAPZ and CAPI to answer the trigger.'
              : 'Writing the MachinePool list.'}
          </p>
        ) : null}
        {apply.isError ? (
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
            onClick={() => ref.current?.close()}
            className="rounded border border-slate-300 px-3 py-1.5 dark:border-slate-700"
          >
            {done ? 'Close' : 'Cancel'}
          </button>
          {!done ? (
            <button
              type="button"
              data-testid="resync-confirm"
              disabled={mode === null || apply.isPending || preview.isError}
              onClick={() => mode && apply.mutate(mode)}
              className="rounded bg-sky-700 px-3 py-1.5 font-medium text-white hover:bg-sky-800 disabled:cursor-not-allowed disabled:bg-slate-400"
            >
              {mode === 'reconcile' ? 'Trigger reconcile' : 'Copy the list'}
            </button>
          ) : null}
        </div>
      </div>
    </dialog>
  );
}
