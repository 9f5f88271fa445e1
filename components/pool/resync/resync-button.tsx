'use client';

import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { InfraKind, PoolRef, ResyncStatus } from '@/lib/api-types';
import { RESYNC_ACTIONS } from '@/lib/resync-actions';
import { resyncStatusOptions } from '@/components/data/queries';
import { ResyncDialog } from './resync-dialog';

/** Why the button is disabled for this caller, or null when they may resync. */
function disabledReason(
  past: boolean,
  gone: 'deleted' | 'unwatched' | null,
  status: ReturnType<typeof useQuery<ResyncStatus>>,
): string | null {
  if (gone === 'deleted') return 'The MachinePool is deleted: there is nothing to resync.';
  if (gone === 'unwatched') return "poolscope no longer watches this pool's context.";
  if (past) return 'Resync acts on the pool as it is now: go back to now to use it.';
  if (status.isPending) return 'Checking what you may do…';
  if (status.isError) return `poolscope could not check your rights: ${status.error.message}`;
  const s = status.data;
  if (!s.identity) return s.identityProblem ?? 'Not signed in.';
  if (!s.modes.reconcile.permitted && !s.modes['sync-provider-ids'].permitted)
    return s.modes['sync-provider-ids'].reason ?? s.modes.reconcile.reason;
  if (s.running)
    return `A ${RESYNC_ACTIONS[s.running.mode].name} started by ${s.running.user} is running on this pool.`;
  return null;
}

/** The Resync button, disabled with the reason when the caller may not; hidden when poolscope is read-only. */
export function ResyncButton({
  poolRef,
  past,
  gone = null,
  infraKind,
}: {
  poolRef: PoolRef;
  past: boolean;
  gone?: 'deleted' | 'unwatched' | null;
  /** The pool's infra kind, which the dialog names. */
  infraKind?: InfraKind;
}) {
  const status = useQuery({ ...resyncStatusOptions(poolRef), enabled: !past && !gone });
  const [open, setOpen] = useState(false);
  if (status.data?.readOnly)
    return (
      <p className="text-sm text-slate-600 dark:text-slate-300" data-testid="resync-readonly">
        poolscope is read-only here: it makes no changes to clusters.
      </p>
    );
  const why = disabledReason(past, gone, status);
  // Primary only when the verdict recommends a resync; on a pool that needs none it is a secondary action.
  const recommended = !past && !gone && (status.data?.verdict?.recommended ?? null) !== null;
  return (
    <div className="flex flex-wrap items-center gap-3">
      <button
        type="button"
        data-testid="resync-button"
        disabled={why !== null}
        aria-describedby="resync-why"
        onClick={() => setOpen(true)}
        data-emphasis={recommended ? 'primary' : 'secondary'}
        className={
          recommended
            ? 'rounded bg-sky-700 px-3 py-1.5 font-medium text-white hover:bg-sky-800 disabled:cursor-not-allowed disabled:bg-slate-400 dark:disabled:bg-slate-600'
            : 'rounded border border-slate-400 bg-white px-3 py-1.5 font-medium text-slate-800 hover:bg-slate-100 disabled:cursor-not-allowed disabled:text-slate-500 dark:border-slate-600 dark:bg-slate-900 dark:text-slate-100 dark:hover:bg-slate-800 dark:disabled:text-slate-400'
        }
      >
        Resync…
      </button>
      <p id="resync-why" className="text-sm text-slate-600 dark:text-slate-300">
        {why ?? `Signed in as ${status.data?.identity?.user} (${status.data?.identity?.via}).`}
      </p>
      {open ? <ResyncDialog poolRef={poolRef} infraKind={infraKind} onClose={() => setOpen(false)} /> : null}
    </div>
  );
}
