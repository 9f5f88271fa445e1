'use client';

import { useQuery } from '@tanstack/react-query';
import { useCallback, useEffect, useRef, useState } from 'react';
import type { InfraKind, PoolRef } from '@/lib/api-types';
import { freshResyncStatusOptions } from '@/components/data/queries';
import { ResyncFlow } from './resync-flow';

/**
 * The Resync dialog. It acts only on a fresh verdict: opening it checks the pool afresh (cluster and Azure) and
 * shows "Checking…" until that answers, never options remembered from before; live updates check again whenever
 * the pool changes while it is open.
 */
export function ResyncDialog({
  poolRef,
  onClose,
  infraKind,
}: {
  poolRef: PoolRef;
  onClose: () => void;
  infraKind?: InfraKind;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const [openedAt] = useState(() => Date.now());
  const fresh = useQuery(freshResyncStatusOptions(poolRef));
  // Only an answer read since the dialog opened counts (a copy still cached from a moment ago does not).
  const status = fresh.data && fresh.dataUpdatedAt >= openedAt ? fresh.data : null;
  const { refetch } = fresh;
  const recheck = useCallback(() => void refetch({ cancelRefetch: false }), [refetch]);

  useEffect(() => {
    ref.current?.showModal();
  }, []);

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
          Resync MachinePool {poolRef.namespace}/{poolRef.name} in {poolRef.context}
        </h2>
        {status ? (
          <ResyncFlow
            poolRef={poolRef}
            infraKind={infraKind}
            status={status}
            checking={fresh.isFetching}
            checkProblem={fresh.isError ? fresh.error.message : null}
            recheck={recheck}
            close={() => ref.current?.close()}
          />
        ) : fresh.isError ? (
          <div role="alert" className="space-y-2 text-sm text-red-800 dark:text-red-200">
            <p>poolscope could not check the pool afresh: {fresh.error.message}</p>
            <button type="button" onClick={() => void fresh.refetch()} className="underline">
              Check again
            </button>
          </div>
        ) : (
          <p role="status" data-testid="resync-checking" className="text-sm">
            Checking the pool (its objects on {poolRef.context}, and Azure)…
          </p>
        )}
        {status ? null : (
          <div className="flex justify-end">
            <button
              type="button"
              onClick={() => ref.current?.close()}
              className="rounded border border-slate-300 px-3 py-1.5 dark:border-slate-700"
            >
              Cancel
            </button>
          </div>
        )}
      </div>
    </dialog>
  );
}
