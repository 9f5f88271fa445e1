// A wide table's first column, kept in view while the rest scrolls sideways (on a phone, the drift matrix and
// the instance table do): its cells are painted with the header's or the page's background, so that the other
// columns pass under them, and below the `sm` breakpoint have a line on their right edge (an inset shadow: a
// border scrolls away with a collapsed table's cells).

const EDGE = 'max-sm:shadow-[inset_-1px_0_0_rgb(226_232_240)] dark:max-sm:shadow-[inset_-1px_0_0_rgb(30_41_59)]';

/** The first column's header cell (on the tables' slate-50 header). */
export const STICKY_HEAD_CELL = `sticky left-0 z-10 bg-slate-50 dark:bg-slate-900 ${EDGE}`;

/** The first column's body cells (on the page's background). */
export const STICKY_ROW_CELL = `sticky left-0 z-10 bg-white dark:bg-slate-950 ${EDGE}`;
