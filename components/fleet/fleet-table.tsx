'use client';
// The fleet table: one row per pool, sortable by column (the sort is in the URL), each pool a link. Below the `sm`
// breakpoint (a phone) each pool is a block instead, its pool name first and each value on a line after its
// column's name, with a select for the sort (a 1,200-pixel table there scrolled sideways: the pool's name on one
// screen, what is wrong with it on another).

import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useId, useState } from 'react';
import type { PoolFlavour, PoolSummary } from '@/lib/api-types';
import { worstHeadline } from '@/lib/diagnosis';
import { formatDuration, plural } from '@/lib/format';
import { groupPools, type PoolGroup } from '@/lib/fleet-groups';
import { replicaLabel } from '@/lib/timeline';
import { toMs } from '@/lib/unstructured';
import {
  FLAVOUR_LABELS,
  flavourOf,
  fleetQuery,
  poolPath,
  SEVERITIES,
  type FleetFilters,
  type SortKey,
} from '@/lib/url-state';
import { Badge, StateBadge, toneOf } from '@/components/ui/badge';
import { Breakable } from '@/components/ui/breakable';
import { LocalTime } from '@/components/ui/local-time';
import { useLiveNow } from '@/components/ui/use-live-now';
import { DriftBadges } from './drift-badges';
import { useUrlFilters } from './use-url-filters';

/**
 * The columns; `wide`: shown only from 1,536 pixels (the orchestration mode, which no incident turns on: the pool's
 * page has it), so that the table fits a laptop's 1,280 whatever its drift badges and findings say.
 */
const COLUMNS: { key: SortKey | null; label: string; wide?: true }[] = [
  { key: 'context', label: 'Context' },
  { key: 'namespace', label: 'Namespace' },
  { key: 'cluster', label: 'Cluster' },
  { key: 'pool', label: 'Pool' },
  { key: null, label: 'Mode', wide: true },
  { key: 'desired', label: 'Replicas' },
  { key: 'state', label: 'Provisioning' },
  { key: null, label: 'Ready' },
  { key: null, label: 'Phase' },
  { key: 'drift', label: 'Drift' },
  { key: 'finding', label: 'Worst finding' },
  { key: 'lastChange', label: 'Last change' },
];

/**
 * A cell: a table cell, and on a phone's width a line of its pool's block, named by its `data-label`, as the
 * changes list does it (components/pool/changes-list).
 */
const CELL = 'fleet-cell';

const n = (v: number | null) => (v === null ? '?' : String(v));

/** The counts a fleet row shows, each under its name; one that differs from the desired count is marked. */
const REPLICA_CELLS: [keyof PoolSummary['replicas'], string, string][] = [
  ['desired', 'want', 'desired'],
  ['azureInstances', 'Azure', 'Azure instances'],
  ['capz', 'CAPZ', 'CAPZ'],
  ['capi', 'CAPI', 'CAPI'],
  ['readyNodes', 'Ready', 'Ready Nodes'],
];

function Replicas({ r, flavour }: { r: PoolSummary['replicas']; flavour: PoolFlavour }) {
  const title = `desired ${n(r.desired)} · ${replicaLabel('vmssCapacity', flavour)} ${n(r.vmssCapacity)} · Azure instances ${n(r.azureInstances)} · CAPZ ${n(r.capz)} · CAPI ${n(r.capi)} · Ready Nodes ${n(r.readyNodes)}`;
  // On a phone (no hover for the title) each count is named in a line.
  return (
    <span title={title}>
      <span className="sr-only">{title}</span>
      <span aria-hidden="true" className="inline-grid grid-cols-5 gap-x-1.5 text-center max-sm:hidden">
        {REPLICA_CELLS.map(([k, short]) => (
          <span key={k} className="text-[10px] leading-3 text-slate-500 dark:text-slate-400">
            {short}
          </span>
        ))}
        {REPLICA_CELLS.map(([k, , long]) => {
          const off = k !== 'desired' && r[k] !== r.desired;
          return (
            <span
              key={k}
              data-replica={k}
              {...(off ? { 'data-off': '', title: `${long} ${n(r[k])}, desired ${n(r.desired)}` } : {})}
              className={`font-mono text-xs tabular-nums ${k === 'desired' ? 'font-semibold' : ''} ${off ? 'rounded bg-amber-100 text-amber-900 dark:bg-amber-950 dark:text-amber-200' : ''}`}
            >
              {n(r[k])}
            </span>
          );
        })}
      </span>
      <span aria-hidden="true" className="sm:hidden">
        desired {n(r.desired)} · {flavour === 'self-managed' ? 'VMSS' : 'AKS'} {n(r.vmssCapacity)} · Azure{' '}
        {n(r.azureInstances)} · CAPZ {n(r.capz)} · CAPI {n(r.capi)} · Ready {n(r.readyNodes)}
      </span>
    </span>
  );
}

function SortHeader({ col, filters }: { col: (typeof COLUMNS)[number]; filters: FleetFilters }) {
  const router = useRouter();
  if (!col.key)
    return (
      <th scope="col" className={`px-1.5 py-2 text-left font-medium ${col.wide ? 'max-2xl:hidden' : ''}`}>
        {col.label}
      </th>
    );
  const active = filters.sort === col.key;
  const next: FleetFilters = { ...filters, sort: col.key, desc: active ? !filters.desc : false };
  // Sorting by finding puts the worst first: descending severity, though the URL calls it the plain order.
  const descending = col.key === 'finding' ? !filters.desc : filters.desc;
  return (
    <th
      scope="col"
      aria-sort={active ? (descending ? 'descending' : 'ascending') : 'none'}
      className="px-1.5 py-2 text-left font-medium"
    >
      <button
        type="button"
        className="inline-flex items-center gap-1 hover:underline"
        onClick={() => router.replace(`/?${fleetQuery(next)}`, { scroll: false })}
      >
        {col.label}
        <span aria-hidden="true" className="text-slate-400">
          {active ? (descending ? '▼' : '▲') : '↕'}
        </span>
      </button>
    </th>
  );
}

/** The sort as a select, for a phone's width, where the table's headers are not shown. */
function SortSelect({ filters: fromUrl }: { filters: FleetFilters }) {
  const id = useId();
  const [filters, go] = useUrlFilters(fromUrl);
  return (
    <div className="flex items-center gap-4 text-sm sm:hidden">
      <span className="flex items-center gap-2">
        {/* Named by its own label only: a label around it would take its options' text into its name. */}
        <label htmlFor={id}>Sort by</label>
        <select
          id={id}
          className="rounded border border-slate-300 bg-white px-2 py-1 dark:border-slate-700 dark:bg-slate-900"
          value={filters.sort}
          onChange={(e) => go({ ...filters, sort: e.target.value as SortKey, desc: false })}
        >
          {COLUMNS.flatMap((c) =>
            c.key
              ? [
                  <option key={c.key} value={c.key}>
                    {c.label}
                  </option>,
                ]
              : [],
          )}
        </select>
      </span>
      <label className="flex items-center gap-2">
        <input type="checkbox" checked={filters.desc} onChange={(e) => go({ ...filters, desc: e.target.checked })} />
        Reversed
      </label>
    </div>
  );
}

/** A pool's worst finding, and for how long it has held, counting on (a healthy pool's cell does not tick). */
function WorstFinding({
  finding,
  active,
  at,
}: {
  finding: NonNullable<PoolSummary['worstFinding']>;
  active: PoolSummary['activeFindings'];
  at: string;
}) {
  const now = useLiveNow(at, finding.code !== 'healthy');
  const text = worstHeadline(finding, active, now);
  const since = toMs(active?.find((f) => f.code === finding.code)?.since ?? null);
  // The frozen list's headline says it already ("frozen for 14 min").
  const age =
    since !== null && finding.code !== 'healthy' && finding.code !== 'readiness-gate-frozen'
      ? ` · for ${formatDuration((toMs(now) ?? since) - since)}`
      : '';
  // On a phone's width, four lines at most: the whole summary is on hover and on the pool's page.
  return (
    <span className="max-sm:line-clamp-4" title={text + age}>
      <Breakable text={text} />
      {age ? (
        <span data-testid="finding-age" className="text-slate-600 dark:text-slate-400">
          {age}
        </span>
      ) : null}
    </span>
  );
}

/** How long ago, counting on; under it the time of day in the viewer's zone (the whole instant in UTC on hover). */
function Ago({ iso, now }: { iso: string | null; now: number }) {
  const ms = toMs(iso);
  if (!iso || ms === null) return <span>—</span>;
  return (
    <span className="whitespace-nowrap">
      {formatDuration(Math.max(0, now - ms))} ago
      <LocalTime iso={iso} className="block text-xs text-slate-500 dark:text-slate-400" withDate={false} />
    </span>
  );
}

/** A pool's row: a table row, and on a phone's width a block (see CELL). */
function PoolRow({ p, at, now }: { p: PoolSummary; at: string; now: number }) {
  return (
    <tr
      data-pool={p.key}
      className="border-t border-slate-200 align-top hover:bg-slate-50 max-sm:flex max-sm:flex-col max-sm:px-3 max-sm:py-2 max-sm:first:border-t-0 dark:border-slate-800 dark:hover:bg-slate-900"
    >
      <td data-label="Context" className={`${CELL} whitespace-nowrap max-sm:hidden`}>
        {p.ref.context}
      </td>
      <td data-label="Namespace" className={`${CELL} whitespace-nowrap max-sm:hidden`}>
        {p.ref.namespace}
      </td>
      <td data-label="Cluster" className={`${CELL} whitespace-nowrap max-sm:hidden`}>
        {p.clusterName ?? '—'}
      </td>
      <td className="px-1.5 py-2 font-medium max-sm:order-first max-sm:px-0 max-sm:pt-0 max-sm:pb-1 max-sm:text-base">
        {/*
          The link and its badges as flex items, each a block of its own: text beside the link in one block (the line
          below, a badge) would need it told apart by more than its colour.
        */}
        <div className="flex flex-wrap items-center gap-x-1 gap-y-0.5">
          <Link href={poolPath(p.ref)} className="text-sky-700 underline-offset-2 hover:underline dark:text-sky-300">
            {p.ref.name}
          </Link>
          {flavourOf(p) !== 'self-managed' ? (
            <Badge tone="neutral" title={`An AKS pool: its infra object is an ${FLAVOUR_LABELS[flavourOf(p)].kind}`}>
              {FLAVOUR_LABELS[flavourOf(p)].short}
            </Badge>
          ) : null}
          {p.paused ? <Badge tone="warn">paused</Badge> : null}
          {p.deletedAt ? (
            <Badge tone="bad" title={`MachinePool deleted at ${p.deletedAt}`}>
              deleted
            </Badge>
          ) : null}
          {p.unwatchedSince ? (
            <Badge tone="bad" title={`Context not watched since ${p.unwatchedSince}`}>
              not watched
            </Badge>
          ) : null}
        </div>
        <div className="text-xs font-normal text-slate-600 sm:hidden dark:text-slate-300">
          {p.ref.context} / {p.ref.namespace} · cluster {p.clusterName ?? '—'}
        </div>
      </td>
      <td data-label="Mode" className={`${CELL} max-2xl:hidden max-sm:hidden`}>
        {p.orchestrationMode ?? '—'}
      </td>
      <td data-label="Replicas" className={`${CELL} whitespace-nowrap max-sm:whitespace-normal`}>
        <Replicas r={p.replicas} flavour={flavourOf(p)} />
      </td>
      <td data-label="Provisioning" className={CELL}>
        <StateBadge value={p.provisioningState} />
      </td>
      <td data-label="Ready" className={CELL}>
        <StateBadge value={p.ampReady} label={p.ampReady === null ? 'unknown' : p.ampReady ? 'ready' : 'not ready'} />
      </td>
      <td data-label="Phase" className={CELL}>
        {p.phase ?? '—'}
      </td>
      <td data-label="Drift" className={CELL}>
        <DriftBadges counts={p.driftCounts} flavour={flavourOf(p)} />
      </td>
      <td data-label="Finding" className={`${CELL} max-w-md min-w-[16rem] max-sm:max-w-none max-sm:min-w-0`}>
        {p.worstFinding ? (
          <span className="flex items-start gap-1.5">
            <StateBadge value={p.worstFinding.severity} />
            <span className="wrap-anywhere">
              <WorstFinding finding={p.worstFinding} active={p.activeFindings} at={at} />
            </span>
          </span>
        ) : (
          '—'
        )}
      </td>
      <td data-label="Last change" className={`${CELL} min-w-[6rem] max-sm:min-w-0`}>
        <Ago iso={p.lastChange} now={now} />
      </td>
    </tr>
  );
}

/** A group's header row: what the group is, how many pools, and how many of them have a finding of each severity. */
function GroupHeader({ group }: { group: PoolGroup }) {
  const counts = SEVERITIES.filter((s) => group.counts[s] > 0);
  return (
    <tr className="border-t-2 border-slate-300 bg-slate-100 max-sm:block dark:border-slate-700 dark:bg-slate-900">
      <th
        scope="rowgroup"
        colSpan={COLUMNS.length}
        className="px-1.5 py-1.5 text-left font-normal max-sm:block max-sm:px-3"
      >
        <span className="font-semibold">{group.title}</span>
        {group.where ? <span className="text-slate-600 dark:text-slate-300"> in {group.where}</span> : null}
        <span className="text-slate-600 dark:text-slate-300"> · {plural(group.pools.length, 'pool')}</span>
        {counts.map((s) => (
          <span key={s}>
            {' '}
            <Badge tone={toneOf(s)}>
              {group.counts[s]} {s}
            </Badge>
          </span>
        ))}
      </th>
    </tr>
  );
}

/** Rows rendered at first: the worst pools come first, and a fleet of a thousand stays fast to open. */
const FIRST_ROWS = 100;

/**
 * `at` is when the fleet was read: a frozen list's finding says for how long as of then on the first render (the
 * server's and the browser's agree), then as of the browser's clock, counting on between changes (useLiveNow).
 */
export function FleetTable({ pools, filters, at }: { pools: PoolSummary[]; filters: FleetFilters; at: string }) {
  const [limit, setLimit] = useState(FIRST_ROWS);
  const now = toMs(useLiveNow(at, true)) ?? 0;
  const row = (p: PoolSummary) => <PoolRow key={p.key} p={p} at={at} now={now} />;
  // Grouped, each group's header counts all its pools, though only the first `limit` rows in all are drawn.
  let left = limit;
  const body = filters.group ? (
    groupPools(pools, filters.group).map((g) => {
      const drawn = g.pools.slice(0, Math.max(0, left));
      left -= drawn.length;
      return drawn.length > 0 ? (
        <tbody key={g.key} data-group={g.key} className="max-sm:block">
          <GroupHeader group={g} />
          {drawn.map(row)}
        </tbody>
      ) : null;
    })
  ) : (
    <tbody className="max-sm:block">{pools.slice(0, limit).map(row)}</tbody>
  );
  return (
    <div className="space-y-2">
      <SortSelect filters={filters} />
      <div id="pools" tabIndex={-1} className="overflow-x-auto rounded border border-slate-200 dark:border-slate-800">
        <table className="w-full text-sm max-sm:block">
          <caption className="sr-only">
            MachinePools. Replicas: desired, Azure instances, CAPZ, CAPI and Ready Nodes; a count that differs from the
            desired one is marked.
          </caption>
          <thead className="bg-slate-50 max-sm:hidden dark:bg-slate-900">
            <tr>
              {COLUMNS.map((c) => (
                <SortHeader key={c.label} col={c} filters={filters} />
              ))}
            </tr>
          </thead>
          {body}
        </table>
      </div>
      {pools.length > limit ? (
        <button
          type="button"
          onClick={() => setLimit(pools.length)}
          className="rounded border border-slate-300 px-3 py-1 text-sm dark:border-slate-700"
        >
          Show all {pools.length} pools ({pools.length - limit} more)
        </button>
      ) : null}
    </div>
  );
}
