// Says, on a deleted pool's page, that its MachinePool is gone: what is shown is its last state, kept with its
// history until retention passes the deletion.

import type { PoolSummary } from '@/lib/api-types';
import { LocalTime } from '@/components/ui/local-time';

export function DeletedNote({ summary }: { summary: Pick<PoolSummary, 'deletedAt'> }) {
  if (!summary.deletedAt) return null;
  return (
    <p role="note" data-testid="deleted" className="rounded border border-red-300 bg-red-50 p-3 text-red-950 dark:border-red-800 dark:bg-red-950 dark:text-red-100">
      This MachinePool was deleted at <LocalTime iso={summary.deletedAt} />. What follows is how poolscope last saw it;
      its timeline shows it before that. poolscope keeps it until its retention (<code>POOLSCOPE_RETENTION_DAYS</code>)
      has passed the deletion.
    </p>
  );
}
