// A long table kept to about a screenful: past that it scrolls inside its box, its header row staying in view,
// so the sections after it stay a scroll away (a 1,000-row table drawn whole pushed them 35,000 pixels down).
// The box is a named region and takes the focus, so a keyboard can scroll it too. It is positioned, so that the
// screen-reader text of rows scrolled out of it (absolutely placed) stays in it rather than lengthening the page.

import type { ReactNode } from 'react';

/** The sticky header row of a table inside a ScrollBox. */
export const STICKY_HEAD = 'sticky top-0 z-20';

export function ScrollBox({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div
      role="region"
      aria-label={label}
      tabIndex={0}
      data-scroll-box=""
      className="relative max-h-[60vh] overflow-auto rounded border border-slate-200 focus-visible:ring-2 focus-visible:ring-sky-600 focus-visible:outline-none dark:border-slate-800"
    >
      {children}
    </div>
  );
}
