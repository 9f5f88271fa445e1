'use client';

import { useState } from 'react';
import { DRIFT_KIND_LABELS, type TimelineEntry } from '@/lib/api-types';
import { driftKeyText } from '@/lib/format';
import { Breakable } from '@/components/ui/breakable';
import { LocalTime } from '@/components/ui/local-time';

/** Every stored change in the window as text, newest first: the timeline for keyboards and screen readers. */
export function ChangesList({ entries, total }: { entries: TimelineEntry[]; total: number }) {
  const [limit, setLimit] = useState(50);
  const newest = [...entries].reverse();
  return (
    <section aria-labelledby="changes-h" className="space-y-2">
      <h2 id="changes-h" className="text-lg font-semibold">Changes in this window ({total})</h2>
      {total > entries.length ? <p className="text-sm text-slate-600 dark:text-slate-300">The newest {entries.length} are listed; choose a shorter range to list the others.</p> : null}
      {entries.length === 0 ? <p className="text-sm text-slate-600 dark:text-slate-300">Nothing changed in this window.</p> : (
        <div className="overflow-x-auto rounded border border-slate-200 dark:border-slate-800">
          <table className="w-full text-sm">
            <thead className="bg-slate-50 dark:bg-slate-900">
              <tr>{['Time', 'What', 'From', 'To', 'Detail'].map((h) => <th key={h} scope="col" className="px-2 py-2 text-left font-medium">{h}</th>)}</tr>
            </thead>
            <tbody>
              {newest.slice(0, limit).map((e, i) => (
                <tr key={`${e.at}-${e.field}-${i}`} className="border-t border-slate-200 align-top dark:border-slate-800">
                  <td className="whitespace-nowrap px-2 py-1"><LocalTime iso={e.at} /></td>
                  <td className="px-2 py-1 font-mono text-xs">{e.field}</td>
                  <Value entry={e} value={e.from} />
                  <Value entry={e} value={e.to} same={e.from !== null && e.from === e.to} />
                  <td className="max-w-md px-2 py-1 wrap-break-word text-slate-700 dark:text-slate-300"><Breakable text={e.detail ?? ''} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {newest.length > limit ? <button type="button" className="rounded border border-slate-300 px-3 py-1 text-sm dark:border-slate-700" onClick={() => setLimit(limit + 200)}>Show more</button> : null}
    </section>
  );
}

/**
 * A value of a change, breaking after `/` and `=` rather than mid-word; a drift item's key (a kind and a full
 * providerID) in a few words, in full on hover. `same`: the value is the one it replaces, and only what it says
 * changed (a condition's message, a finding's summary).
 */
function Value({ entry, value, same = false }: { entry: TimelineEntry; value: string | null; same?: boolean }) {
  if (value === null) return <td className="max-w-xs px-2 py-1">—</td>;
  if (entry.field === 'drift') return <td className="max-w-xs px-2 py-1 wrap-break-word" title={value} data-drift-key={value}><Breakable text={driftKeyText(value, DRIFT_KIND_LABELS)} /></td>;
  return <td className="max-w-xs px-2 py-1 wrap-break-word"><Breakable text={value} />{same ? <span className="ml-1 text-slate-600 dark:text-slate-300">({sameValueNote(entry.field)})</span> : null}</td>;
}

/** What changed when a change's value did not: what its detail is. */
function sameValueNote(field: string): string {
  if (field.startsWith('condition.')) return 'new message';
  if (field.startsWith('finding.')) return 'new summary';
  return 'new detail';
}
