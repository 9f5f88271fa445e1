'use client';

import { useLiveUpdates } from '@/components/data/use-live-updates';

const TEXT = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…' } as const;

/** Keeps the tab's data live (one change stream per tab) and says whether it is. */
export function LiveIndicator() {
  const status = useLiveUpdates();
  return (
    <span
      role="status"
      aria-live="polite"
      data-live={status}
      className="flex items-center gap-1.5 text-sm text-slate-600 dark:text-slate-300"
    >
      <span
        aria-hidden="true"
        className={`h-2 w-2 rounded-full ${status === 'live' ? 'bg-emerald-500' : 'bg-amber-500'}`}
      />
      {TEXT[status]}
    </span>
  );
}
