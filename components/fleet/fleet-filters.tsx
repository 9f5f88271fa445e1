'use client';
// Filters that live in the URL: every change replaces the query string, so the view is a shareable link.

import { useEffect, useState } from 'react';
import { FLAVOURS, FLAVOUR_LABELS, FLEET_GROUPS, type FleetFilters as Filters } from '@/lib/url-state';
import { useUrlFilters } from './use-url-filters';

const input = 'rounded border border-slate-300 bg-white px-2 py-1 dark:border-slate-700 dark:bg-slate-900';

export function FleetFilters({
  filters: fromUrl,
  contexts,
  namespaces,
  deleted,
  mixedKinds,
}: {
  filters: Filters;
  contexts: string[];
  namespaces: string[];
  deleted: number;
  /** Whether the fleet has AKS pools: the kind filter is offered then (or while it is set). */
  mixedKinds: boolean;
}) {
  const [text, setText] = useState(fromUrl.q ?? '');
  const [filters, go] = useUrlFilters(fromUrl, (f) => {
    if ((f.q ?? '') !== text.trim()) setText(f.q ?? '');
  });
  // Typing updates the URL after a pause, not on every key.
  useEffect(() => {
    if (text.trim() === (filters.q ?? '')) return;
    const t = setTimeout(() => {
      const { q: _old, ...rest } = filters;
      go(text.trim() ? { ...rest, q: text.trim() } : rest);
    }, 250);
    return () => clearTimeout(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [text]);

  const select = (name: 'context' | 'namespace', options: string[]) => (
    <label className="flex items-center gap-2">
      <span>{name === 'context' ? 'Context' : 'Namespace'}</span>
      <select
        className={input}
        value={filters[name] ?? ''}
        onChange={(e) => {
          const { [name]: _old, ...rest } = filters;
          go(e.target.value ? { ...rest, [name]: e.target.value } : rest);
        }}
      >
        <option value="">All</option>
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </label>
  );

  return (
    <form
      role="search"
      aria-label="Filter pools"
      className="flex flex-wrap items-center gap-x-5 gap-y-2 text-sm"
      onSubmit={(e) => e.preventDefault()}
    >
      {select('context', contexts)}
      {select('namespace', namespaces)}
      {mixedKinds || filters.kind ? (
        <label className="flex items-center gap-2">
          <span>Kind</span>
          <select
            className={input}
            value={filters.kind ?? ''}
            onChange={(e) => {
              const { kind: _old, ...rest } = filters;
              const kind = FLAVOURS.find((k) => k === e.target.value);
              go(kind ? { ...rest, kind } : rest);
            }}
          >
            <option value="">All</option>
            {FLAVOURS.map((k) => (
              <option key={k} value={k} title={FLAVOUR_LABELS[k].kind}>
                {FLAVOUR_LABELS[k].short}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      <label className="flex items-center gap-2">
        <input
          type="checkbox"
          checked={filters.drifting}
          onChange={(e) => go({ ...filters, drifting: e.target.checked })}
        />
        Drifting only
      </label>
      <label className="flex items-center gap-2">
        <input
          type="checkbox"
          checked={filters.notReady}
          onChange={(e) => go({ ...filters, notReady: e.target.checked })}
        />
        Not ready only
      </label>
      {deleted > 0 || filters.deleted ? (
        <label className="flex items-center gap-2">
          <input
            type="checkbox"
            checked={filters.deleted}
            onChange={(e) => go({ ...filters, deleted: e.target.checked })}
          />
          Show deleted or not watched ({deleted})
        </label>
      ) : null}
      <label className="flex items-center gap-2">
        <span>Group by</span>
        <select
          className={input}
          value={filters.group ?? ''}
          onChange={(e) => {
            const { group: _old, ...rest } = filters;
            const group = FLEET_GROUPS.find((g) => g === e.target.value);
            go(group ? { ...rest, group } : rest);
          }}
        >
          <option value="">Nothing</option>
          <option value="context">Management cluster</option>
          <option value="cluster">Workload cluster</option>
        </select>
      </label>
      <label className="flex items-center gap-2">
        <span>Search</span>
        <input
          type="search"
          className={input}
          value={text}
          onChange={(e) => setText(e.target.value)}
          placeholder="pool, cluster, finding…"
        />
      </label>
    </form>
  );
}
