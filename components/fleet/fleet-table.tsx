'use client';
// The fleet table: one row per pool, sortable by column (the sort is in the URL), each pool a link.

import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import type { PoolSummary } from '@/lib/api-types';
import { worstHeadline } from '@/lib/diagnosis';
import { fleetQuery, poolPath, type FleetFilters, type SortKey } from '@/lib/url-state';
import { Badge, StateBadge } from '@/components/ui/badge';
import { Breakable } from '@/components/ui/breakable';
import { LocalTime } from '@/components/ui/local-time';
import { useLiveNow } from '@/components/ui/use-live-now';
import { DriftBadges } from './drift-badges';

const COLUMNS: { key: SortKey | null; label: string }[] = [
  { key: 'context', label: 'Context' },
  { key: 'namespace', label: 'Namespace' },
  { key: 'cluster', label: 'Cluster' },
  { key: 'pool', label: 'Pool' },
  { key: null, label: 'Mode' },
  { key: 'desired', label: 'Replicas' },
  { key: 'state', label: 'Provisioning' },
  { key: null, label: 'Ready' },
  { key: null, label: 'Phase' },
  { key: 'drift', label: 'Drift' },
  { key: 'finding', label: 'Worst finding' },
  { key: 'lastChange', label: 'Last change' },
];

const n = (v: number | null) => (v === null ? '?' : String(v));

function Replicas({ r }: { r: PoolSummary['replicas'] }) {
  const title = `desired ${n(r.desired)} · VMSS capacity ${n(r.vmssCapacity)} · Azure instances ${n(r.azureInstances)} · CAPZ ${n(r.capz)} · CAPI ${n(r.capi)} · Ready Nodes ${n(r.readyNodes)}`;
  return (
    <span title={title} className="font-mono text-xs tabular-nums" aria-label={title}>
      {[r.desired, r.vmssCapacity, r.azureInstances, r.capz, r.capi, r.readyNodes].map(n).join('/')}
    </span>
  );
}

function SortHeader({ col, filters }: { col: (typeof COLUMNS)[number]; filters: FleetFilters }) {
  const router = useRouter();
  if (!col.key) return <th scope="col" className="px-1.5 py-2 text-left font-medium">{col.label}</th>;
  const active = filters.sort === col.key;
  const next: FleetFilters = { ...filters, sort: col.key, desc: active ? !filters.desc : false };
  return (
    <th scope="col" aria-sort={active ? (filters.desc ? 'descending' : 'ascending') : 'none'} className="px-1.5 py-2 text-left font-medium">
      <button type="button" className="inline-flex items-center gap-1 hover:underline" onClick={() => router.replace(`/?${fleetQuery(next)}`, { scroll: false })}>
        {col.label}
        <span aria-hidden="true" className="text-slate-400">{active ? (filters.desc ? '▼' : '▲') : '↕'}</span>
      </button>
    </th>
  );
}

/** A pool's worst finding; a frozen list's says for how long, counting on (only those cells tick). */
function WorstFinding({ finding, active, at }: { finding: NonNullable<PoolSummary['worstFinding']>; active: PoolSummary['activeFindings']; at: string }) {
  const now = useLiveNow(at, finding.code === 'readiness-gate-frozen');
  return <Breakable text={worstHeadline(finding, active, now)} />;
}

/** Rows rendered at first: the worst pools come first, and a fleet of a thousand stays fast to open. */
const FIRST_ROWS = 100;

/**
 * `at` is when the fleet was read: a frozen list's finding says for how long as of then on the first render (the
 * server's and the browser's agree), then as of the browser's clock, counting on between changes (useLiveNow).
 */
export function FleetTable({ pools, filters, at }: { pools: PoolSummary[]; filters: FleetFilters; at: string }) {
  const [limit, setLimit] = useState(FIRST_ROWS);
  return (
    <div className="space-y-2">
    <div className="overflow-x-auto rounded border border-slate-200 dark:border-slate-800">
      <table className="w-full text-sm">
        <caption className="sr-only">MachinePools. Replicas are desired / VMSS capacity / Azure instances / CAPZ / CAPI / Ready Nodes.</caption>
        <thead className="bg-slate-50 dark:bg-slate-900">
          <tr>{COLUMNS.map((c) => <SortHeader key={c.label} col={c} filters={filters} />)}</tr>
        </thead>
        <tbody>
          {pools.slice(0, limit).map((p) => (
            <tr key={p.key} data-pool={p.key} className="border-t border-slate-200 align-top hover:bg-slate-50 dark:border-slate-800 dark:hover:bg-slate-900">
              <td className="whitespace-nowrap px-1.5 py-2">{p.ref.context}</td>
              <td className="whitespace-nowrap px-1.5 py-2">{p.ref.namespace}</td>
              <td className="whitespace-nowrap px-1.5 py-2">{p.clusterName ?? '—'}</td>
              <td className="px-1.5 py-2 font-medium">
                <Link href={poolPath(p.ref)} className="text-sky-700 underline-offset-2 hover:underline dark:text-sky-300">{p.ref.name}</Link>
                {p.paused ? <> <Badge tone="warn">paused</Badge></> : null}
                {p.deletedAt ? <> <Badge tone="bad" title={`MachinePool deleted at ${p.deletedAt}`}>deleted</Badge></> : null}
                {p.unwatchedSince ? <> <Badge tone="bad" title={`Context not watched since ${p.unwatchedSince}`}>not watched</Badge></> : null}
              </td>
              <td className="px-1.5 py-2">{p.orchestrationMode ?? '—'}</td>
              <td className="whitespace-nowrap px-1.5 py-2"><Replicas r={p.replicas} /></td>
              <td className="px-1.5 py-2"><StateBadge value={p.provisioningState} /></td>
              <td className="px-1.5 py-2"><StateBadge value={p.ampReady} label={p.ampReady === null ? 'unknown' : p.ampReady ? 'ready' : 'not ready'} /></td>
              <td className="px-1.5 py-2">{p.phase ?? '—'}</td>
              <td className="px-1.5 py-2"><DriftBadges counts={p.driftCounts} /></td>
              <td className="min-w-[16rem] max-w-md px-1.5 py-2">
                {p.worstFinding ? (
                  <span className="flex items-start gap-1.5"><StateBadge value={p.worstFinding.severity} /><span className="wrap-anywhere"><WorstFinding finding={p.worstFinding} active={p.activeFindings} at={at} /></span></span>
                ) : '—'}
              </td>
              <td className="min-w-[7.5rem] px-1.5 py-2"><LocalTime iso={p.lastChange} /></td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
    {pools.length > limit ? (
      <button type="button" onClick={() => setLimit(pools.length)} className="rounded border border-slate-300 px-3 py-1 text-sm dark:border-slate-700">
        Show all {pools.length} pools ({pools.length - limit} more)
      </button>
    ) : null}
    </div>
  );
}
