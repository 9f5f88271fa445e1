import { firstRows } from '@/lib/first-rows';
import type { InstanceRow } from '@/lib/api-types';
import { useState } from 'react';

/**
 * A large pool's table rows: the first ones (see lib/first-rows.ts) until asked for all. `heldBack` counts rows
 * the page has not read yet (its first paint's copy of the pool); asked for all meanwhile, it says they are coming.
 */
export function useFirstRows(rows: readonly InstanceRow[], heldBack: number) {
  const [all, setAll] = useState(false);
  const total = rows.length + heldBack;
  const shown = firstRows(rows, all, total);
  const note =
    shown.length < total ? (
      <p className="flex flex-wrap items-center gap-3 text-sm text-slate-600 dark:text-slate-300">
        {all ? (
          <span role="status">Reading the other {heldBack}…</span>
        ) : (
          <>
            <span>
              {shown.length} of {total} shown: those with something to look at first.
            </span>
            <button type="button" className="underline" onClick={() => setAll(true)}>
              Show all {total}
            </button>
          </>
        )}
      </p>
    ) : null;
  return { shown, total, note };
}
