'use client';
// How many of the pools the other filters match have each severity as their worst finding: each count a toggle
// that shows only those pools (`severity=` in the URL), so "12 critical" in a fleet of 1,000 is one click away.

import type { Severity } from '@/lib/api-types';
import { SEVERITIES, type FleetFilters } from '@/lib/url-state';
import { TONES, toneOf } from '@/components/ui/badge';
import { useUrlFilters } from './use-url-filters';

/** The dot beside each severity: its badge's colour, so that the tally reads as the table's badges do. */
const DOT: Record<ReturnType<typeof toneOf>, string> = {
  bad: 'bg-red-600 dark:bg-red-400',
  warn: 'bg-amber-500 dark:bg-amber-400',
  info: 'bg-sky-600 dark:bg-sky-400',
  good: 'bg-emerald-600',
  neutral: 'bg-slate-400',
};

export function SeverityTally({
  filters: fromUrl,
  counts,
}: {
  filters: FleetFilters;
  counts: Record<Severity | 'none' | 'healthy', number>;
}) {
  const [filters, go] = useUrlFilters(fromUrl);
  const toggle = (s: Severity) => {
    const { severity: _old, ...rest } = filters;
    go(filters.severity === s ? rest : { ...rest, severity: s });
  };
  return (
    <div role="group" aria-label="Pools by worst finding" className="flex flex-wrap items-center gap-2 text-sm">
      <span className="text-slate-600 dark:text-slate-300">Worst finding:</span>
      {SEVERITIES.map((s) => {
        const pressed = filters.severity === s;
        return (
          <button
            key={s}
            type="button"
            aria-pressed={pressed}
            // A severity no pool has cannot be shown; the one shown can always be cleared.
            disabled={counts[s] === 0 && !pressed}
            title={pressed ? 'Show every severity again' : `Show only the pools whose worst finding is ${s}`}
            data-testid={`severity-${s}`}
            onClick={() => toggle(s)}
            className={`inline-flex items-center gap-1.5 rounded px-2 py-0.5 ring-1 ring-inset disabled:cursor-not-allowed disabled:opacity-50 ${pressed ? `font-medium ${TONES[toneOf(s)]}` : 'ring-slate-300 hover:bg-slate-100 dark:ring-slate-700 dark:hover:bg-slate-800'}`}
          >
            <span aria-hidden="true" className={`inline-block size-2 rounded-full ${DOT[toneOf(s)]}`} />
            {s === 'info' && counts.healthy > 0 ? (
              // Healthy pools are info too (the filter shows both): counted apart, they do not read as findings.
              <span>
                <span className="tabular-nums">{counts.healthy}</span> healthy ·{' '}
                <span className="tabular-nums">{counts.info - counts.healthy}</span> info
              </span>
            ) : (
              <>
                <span className="tabular-nums">{counts[s]}</span> {s}
              </>
            )}
          </button>
        );
      })}
      {counts.none > 0 ? (
        <span className="text-slate-600 dark:text-slate-300">
          {counts.none} without a finding (Azure or the workload cluster not read)
        </span>
      ) : null}
    </div>
  );
}
