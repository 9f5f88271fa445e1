'use client';
// How fresh a pool's Azure figures are: its scale set is read every ~15 s while the pool moves and every ~2 min when
// it is steady, and a read that changes nothing stores no new state, so the state's own time does not say it.

import { formatDuration } from '@/lib/format';
import { formatInstant } from '@/components/ui/local-time';
import { useLiveNow } from '@/components/ui/use-live-now';

/** "Azure read 12 s ago", counting on between reads; Azure's time of the answer (UTC) on hover. */
export function AzureReadAge({ readAt, shownAt }: { readAt: string; shownAt: string }) {
  const now = useLiveNow(shownAt);
  return (
    <span data-testid="azure-read" title={`Azure answered at ${formatInstant(readAt, 'UTC')}`}>
      · Azure read {formatDuration(Date.parse(now) - Date.parse(readAt))} ago
    </span>
  );
}
