// The rows a large pool's tables draw first, and the copy of a pool's answer a page embeds.
//
// A 1,000-instance pool's answer is ~1.9 MB of JSON. Drawn whole and embedded in the page for hydration, it
// delays the page's first paint (serialising it is most of the time to the first byte), while the page shows
// only the first ROWS_AT_FIRST rows until asked for all. So the page embeds those rows and the count of the
// others, and reads the whole answer itself as soon as it is shown.

import type { InstanceRow, PoolResponse } from './api-types';

/**
 * A pool's answer as the page holds it: the API's, or the copy a page embeds for its first paint, where
 * `heldBack` counts the instance rows left out (those its tables do not draw first). Never in an API answer.
 */
export type PagePool = PoolResponse & { heldBack?: number };

/** How many rows a large pool's tables show until asked for all: a 1,000-row table is slow to draw and to read. */
export const ROWS_AT_FIRST = 100;

/** Whether a row has anything to look at: drift, Azure not Succeeded or not read yet, a part missing or not ready. */
export function needsLook(r: InstanceRow): boolean {
  return (
    r.driftKinds.length > 0 ||
    r.awaitingAzureRead === true ||
    !r.azure ||
    r.azure.provisioningState !== 'Succeeded' ||
    !r.ampm?.ready ||
    !r.machine ||
    !r.node?.ready ||
    r.node.uninitializedTaint === true ||
    !r.autoscaler.visible
  );
}

/**
 * The rows shown: all of them, or for a large pool (`total` rows, of which `rows` may be the first view's) those
 * that need a look (every one of them, in their order), then the others in theirs, up to ROWS_AT_FIRST in all.
 */
export function firstRows(rows: readonly InstanceRow[], all: boolean, total = rows.length): readonly InstanceRow[] {
  if (all || total <= ROWS_AT_FIRST) return rows;
  const look = rows.filter(needsLook);
  return [...look, ...rows.filter((r) => !needsLook(r))].slice(0, Math.max(ROWS_AT_FIRST, look.length));
}

/**
 * The answer a page embeds: the same, with only the rows its tables draw first (in the answer's order, so that
 * firstRows picks them all again) and `heldBack` counting the others. Small pools are embedded whole.
 */
export function firstView(answer: PoolResponse): PagePool {
  const rows = answer.pool.instances;
  const shown = firstRows(rows, false);
  if (shown.length === rows.length) return answer;
  const keep = new Set(shown);
  return {
    ...answer,
    pool: { ...answer.pool, instances: rows.filter((r) => keep.has(r)) },
    heldBack: rows.length - shown.length,
  };
}
