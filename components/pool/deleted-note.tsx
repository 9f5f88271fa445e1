// Says, on the page of a pool that left poolscope's view, why and since when: its MachinePool was deleted, or its
// context is no longer watched. What is shown is its last state, kept with its history until retention passes that.

import type { PoolSummary } from '@/lib/api-types';
import { LocalTime } from '@/components/ui/local-time';

export function DeletedNote({ summary }: { summary: Pick<PoolSummary, 'deletedAt' | 'unwatchedSince' | 'ref'> }) {
  const kept = (
    <>
      poolscope keeps it until its retention (<code>POOLSCOPE_RETENTION_DAYS</code>) has passed that time.
    </>
  );
  const box =
    'rounded border border-red-300 bg-red-50 p-3 text-red-950 dark:border-red-800 dark:bg-red-950 dark:text-red-100';
  if (summary.deletedAt) {
    return (
      <p role="note" data-testid="deleted" className={box}>
        This MachinePool was deleted at <LocalTime iso={summary.deletedAt} />. What follows is how poolscope last saw
        it; its timeline shows it before that. {kept}
      </p>
    );
  }
  if (summary.unwatchedSince) {
    return (
      <p role="note" data-testid="unwatched" className={box}>
        poolscope stopped watching context <strong>{summary.ref.context}</strong> at{' '}
        <LocalTime iso={summary.unwatchedSince} /> (it is no longer in <code>POOLSCOPE_CONTEXTS</code> or the
        kubeconfig). What follows is how poolscope last saw this pool. {kept} Watch the context again to follow it.
      </p>
    );
  }
  return null;
}
