'use client';

import { useState } from 'react';
import { DRIFT_KINDS, driftKindLabel, type PoolFlavour, type TimelineEntry } from '@/lib/api-types';
import type { ChangesPage } from '@/lib/timeline';
import { fetchJson } from '@/components/data/fetch-json';
import { CHANGE_KINDS, changeKind, changeValue, changeWhat, type ChangeKind } from '@/lib/change-words';
import { driftKeyText } from '@/lib/format';
import { Breakable } from '@/components/ui/breakable';
import { LocalTime } from '@/components/ui/local-time';
import { ScrollBox, STICKY_HEAD } from '@/components/ui/scroll-box';

/**
 * A cell: a table cell, and on a phone's width a line of its change's block, named by its `data-label` (a table
 * there scrolled sideways with rows hundreds of pixels tall).
 */
const CELL =
  'px-2 py-1 max-sm:block max-sm:max-w-none max-sm:py-0.5 max-sm:before:mr-2 max-sm:before:inline-block max-sm:before:w-12 max-sm:before:text-xs max-sm:before:text-slate-600 max-sm:before:content-[attr(data-label)] max-sm:before:font-sans dark:max-sm:before:text-slate-300';

/**
 * The changes of a page of older ones (newest first) that the list does not show yet. The page was asked for up to
 * the oldest change shown, that instant included; the list shows the last of that instant's changes (in the order
 * they were stored), which a page newest first gives first: those are left out.
 */
export function olderThanShown(shown: readonly TimelineEntry[], page: readonly TimelineEntry[]): TimelineEntry[] {
  const oldest = shown[0];
  if (!oldest) return [...page];
  let skip = shown.filter((e) => e.at === oldest.at).length;
  return page.filter((e) => !(e.at === oldest.at && skip-- > 0));
}

/** Where the list reads older changes from: the pool and the window. */
export interface OlderSource {
  apiPath: string;
  from: string;
  to: string;
}

/**
 * Older changes, read a page at a time from `GET …/changes` once the newest are all shown. They follow the oldest
 * change shown: when live updates move it (a busy window's newest 1,000 move on), they are read again from there.
 */
function useOlder(source: OlderSource | undefined, shown: readonly TimelineEntry[]) {
  const anchor = `${shown[0]?.at ?? ''} ${shown[0]?.field ?? ''} ${source?.from ?? ''}`;
  const [read, setRead] = useState<{ anchor: string; entries: TimelineEntry[]; next: string | null } | null>(null);
  const [state, setState] = useState<{ loading: boolean; error: string | null }>({ loading: false, error: null });
  const older = read?.anchor === anchor ? read : null;
  const load = async () => {
    if (!source || state.loading) return;
    setState({ loading: true, error: null });
    try {
      const q = new URLSearchParams({ from: source.from, to: older ? source.to : (shown[0]?.at ?? source.to) });
      q.set('limit', '500');
      if (older?.next) q.set('before', older.next);
      const page = await fetchJson<ChangesPage>(`${source.apiPath}/changes?${q}`);
      const got = older ? page.entries : olderThanShown(shown, page.entries);
      setRead({ anchor, entries: [...(older?.entries ?? []), ...got], next: page.next });
      setState({ loading: false, error: null });
    } catch (e) {
      setState({ loading: false, error: (e as Error).message });
    }
  };
  return { older, load, ...state };
}

/**
 * Every stored change in the window as text, newest first: the timeline for keyboards and screen readers. A table;
 * below the `sm` breakpoint one block per change, each value on its own line after its column's name. The timeline
 * brings the newest 1,000; with `source`, older ones are read a page at a time.
 */
export function ChangesList({
  entries,
  total,
  source,
  flavour = 'self-managed',
}: {
  entries: TimelineEntry[];
  total: number;
  source?: OlderSource;
  /** The pool's flavour: its infra object's changes are named after its kind. */
  flavour?: PoolFlavour;
}) {
  const [limit, setLimit] = useState(50);
  const driftLabels = Object.fromEntries(DRIFT_KINDS.map((k) => [k, driftKindLabel(k, flavour)]));
  const [hidden, setHidden] = useState<ReadonlySet<ChangeKind>>(new Set());
  const more = useOlder(source, entries);
  const all = [...entries].reverse().concat(more.older?.entries ?? []);
  const newest = hidden.size ? all.filter((e) => !hidden.has(changeKind(e.field))) : all;
  const olderLeft = source !== undefined && (more.older ? more.older.next !== null : total > entries.length);
  return (
    <section aria-labelledby="changes-h" className="space-y-2">
      <h2 id="changes-h" className="text-lg font-semibold">
        Changes in this window ({total})
      </h2>
      {total > newest.length ? (
        <p className="text-sm text-slate-600 dark:text-slate-300">
          The newest {newest.length} are listed
          {source ? '; older ones can be loaded below.' : '; choose a shorter range to list the others.'}
        </p>
      ) : null}
      {entries.length ? <KindFilter entries={all} hidden={hidden} onChange={setHidden} /> : null}
      {entries.length === 0 ? (
        <p className="text-sm text-slate-600 dark:text-slate-300">Nothing changed in this window.</p>
      ) : (
        <ScrollBox label="Changes">
          <table className="w-full text-sm max-sm:block">
            <thead className={`${STICKY_HEAD} bg-slate-50 max-sm:hidden dark:bg-slate-900`}>
              <tr>
                {['Time', 'What', 'From', 'To', 'Detail'].map((h) => (
                  <th key={h} scope="col" className="px-2 py-2 text-left font-medium">
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody className="max-sm:block">
              {newest.slice(0, limit).map((e, i, rows) => {
                // Changes of one instant are one group: its time once, on its first row.
                const same = i > 0 && rows[i - 1]?.at === e.at;
                return (
                  <tr
                    key={`${e.at}-${e.field}-${i}`}
                    data-kind={changeKind(e.field)}
                    {...(same ? { 'data-same-instant': '' } : {})}
                    className={`${same ? 'border-t border-dotted' : 'border-t'} border-slate-200 align-top max-sm:block max-sm:py-1 max-sm:first:border-t-0 dark:border-slate-800`}
                  >
                    <td data-label="Time" className={`${CELL} whitespace-nowrap ${same ? 'max-sm:hidden' : ''}`}>
                      {same ? <span className="sr-only">same instant</span> : <LocalTime iso={e.at} />}
                    </td>
                    <td data-label="What" className={`${CELL} max-sm:wrap-anywhere`} title={e.field}>
                      {changeWhat(e.field, flavour)}
                    </td>
                    <Value entry={e} value={e.from} label="From" driftLabels={driftLabels} />
                    <Value
                      entry={e}
                      value={e.to}
                      label="To"
                      same={e.from !== null && e.from === e.to}
                      driftLabels={driftLabels}
                    />
                    <td
                      data-label="Detail"
                      className={`${CELL} max-w-md wrap-break-word text-slate-700 dark:text-slate-300 ${e.detail ? '' : 'max-sm:hidden'}`}
                    >
                      {e.detail ? <Breakable text={e.detail} /> : null}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </ScrollBox>
      )}
      {newest.length > limit ? (
        <button
          type="button"
          className="rounded border border-slate-300 px-3 py-1 text-sm dark:border-slate-700"
          onClick={() => setLimit(limit + 200)}
        >
          Show more
        </button>
      ) : olderLeft ? (
        <button
          type="button"
          className="rounded border border-slate-300 px-3 py-1 text-sm disabled:opacity-60 dark:border-slate-700"
          disabled={more.loading}
          onClick={() => {
            setLimit(newest.length + 500);
            void more.load();
          }}
        >
          {more.loading ? 'Loading older changes…' : 'Load older changes'}
        </button>
      ) : null}
      {more.error ? (
        <p role="alert" className="text-sm text-red-700 dark:text-red-300">
          Older changes could not be read: {more.error}
        </p>
      ) : null}
    </section>
  );
}

/**
 * A value of a change, breaking after `/` and `=` rather than mid-word; a drift item's key (a kind and a full
 * providerID) in a few words, in full on hover. `same`: the value is the one it replaces, and only what it says
 * changed (a condition's message, a finding's summary).
 */
function Value({
  entry,
  value,
  label,
  same = false,
  driftLabels,
}: {
  entry: TimelineEntry;
  value: string | null;
  label: string;
  same?: boolean;
  /** Each drift kind's badge for the pool's flavour. */
  driftLabels: Readonly<Record<string, string>>;
}) {
  if (value === null)
    return (
      <td data-label={label} className={`${CELL} max-w-xs`}>
        —
      </td>
    );
  if (entry.field === 'drift')
    return (
      <td data-label={label} className={`${CELL} max-w-xs wrap-break-word`} title={value} data-drift-key={value}>
        <Breakable text={driftKeyText(value, driftLabels)} />
      </td>
    );
  return (
    <td data-label={label} className={`${CELL} max-w-xs wrap-break-word`} title={value}>
      <Breakable text={changeValue(entry.field, value, label === 'To' ? entry.from : undefined)} />
      {same ? <span className="ml-1 text-slate-600 dark:text-slate-300">({sameValueNote(entry.field)})</span> : null}
    </td>
  );
}

/** Toggles for each kind of change present, with how many there are; all shown at first. */
function KindFilter({
  entries,
  hidden,
  onChange,
}: {
  entries: readonly TimelineEntry[];
  hidden: ReadonlySet<ChangeKind>;
  onChange: (h: ReadonlySet<ChangeKind>) => void;
}) {
  const counts = new Map<ChangeKind, number>();
  for (const e of entries) counts.set(changeKind(e.field), (counts.get(changeKind(e.field)) ?? 0) + 1);
  const toggle = (k: ChangeKind) => {
    const next = new Set(hidden);
    if (!next.delete(k)) next.add(k);
    onChange(next);
  };
  return (
    <div role="group" aria-label="Show changes of kind" className="flex flex-wrap gap-2 text-sm">
      {CHANGE_KINDS.filter((k) => counts.has(k.kind)).map((k) => (
        <button
          key={k.kind}
          type="button"
          aria-pressed={!hidden.has(k.kind)}
          onClick={() => toggle(k.kind)}
          className="rounded border border-slate-300 px-2 py-0.5 aria-pressed:bg-slate-800 aria-pressed:text-white dark:border-slate-700 dark:aria-pressed:bg-slate-200 dark:aria-pressed:text-slate-900"
        >
          {k.label} ({counts.get(k.kind)})
        </button>
      ))}
    </div>
  );
}

/** What changed when a change's value did not: what its detail is. */
function sameValueNote(field: string): string {
  if (field.startsWith('condition.')) return 'new message';
  if (field.startsWith('finding.')) return 'new summary';
  return 'new detail';
}
