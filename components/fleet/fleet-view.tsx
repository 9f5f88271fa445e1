'use client';

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useSearchParams } from 'next/navigation';
import { SOURCES_REFRESH_MS, fleetOptions } from '@/components/data/queries';
import { StaleBanner, useStaleness } from '@/components/ui/stale-banner';
import { useHydratedView } from '@/components/data/use-live-updates';
import { ErrorPanel } from '@/components/ui/error-panel';
import { plural } from '@/lib/format';
import { flavourOf, hasSeverity, parseFleetParams, severityCounts } from '@/lib/url-state';
import { FleetFilters } from './fleet-filters';
import { FleetSkeleton } from './fleet-skeleton';
import { FleetTable } from './fleet-table';
import { SeverityTally } from './severity-tally';
import { SourceBar } from './source-bar';

export function FleetView() {
  const params = useSearchParams();
  const filters = parseFleetParams(params);
  const q = useQuery({ ...fleetOptions(filters), placeholderData: keepPreviousData });
  useHydratedView();
  const stale = useStaleness(q.dataUpdatedAt, SOURCES_REFRESH_MS);
  if (q.isPending) return <FleetSkeleton />;
  // A failed refetch keeps the fleet shown (the stale banner says when it stops being live); the answer to other
  // filters (shown meanwhile as a placeholder) is an error to show.
  if (q.isError && (q.isPlaceholderData || !q.data))
    return <ErrorPanel title="The fleet could not be loaded" error={q.error} onRetry={() => void q.refetch()} />;
  const data = q.data;
  const contexts = [
    ...new Set([
      ...data.sources.kube.filter((s) => s.kind === 'management').map((s) => s.context),
      ...data.pools.map((p) => p.ref.context),
      ...(filters.context ? [filters.context] : []),
    ]),
  ].sort();
  const namespaces = [
    ...new Set([...data.pools.map((p) => p.ref.namespace), ...(filters.namespace ? [filters.namespace] : [])]),
  ].sort();
  // The severity filter is applied here, to pools read without it: the tally counts every severity among them.
  const shown = filters.severity ? data.pools.filter((p) => hasSeverity(p, filters.severity)) : data.pools;
  return (
    <div className="space-y-4">
      {/* Past the sources and a dozen filter controls, for keyboard users. */}
      <a
        href="#pools"
        className="sr-only focus:not-sr-only focus:inline-block focus:rounded focus:px-2 focus:py-1 focus:ring-2 focus:ring-sky-600"
      >
        Skip to the pools
      </a>
      <StaleBanner stale={stale} />
      <SourceBar sources={data.sources} stale={stale !== null} />
      <FleetFilters
        filters={filters}
        contexts={contexts}
        namespaces={namespaces}
        deleted={data.deleted}
        mixedKinds={data.pools.some((p) => flavourOf(p) !== 'self-managed')}
      />
      <div className="flex flex-wrap items-center gap-x-6 gap-y-2">
        <p className="text-sm text-slate-600 dark:text-slate-300" aria-live="polite" data-testid="pool-count">
          {shown.length === data.total
            ? plural(data.total, 'pool')
            : `${shown.length} of ${plural(data.total, 'pool')} match`}
          {data.deleted > 0 && !filters.deleted ? ` (${data.deleted} deleted or not watched, not shown)` : null}
        </p>
        {data.pools.length > 0 || filters.severity ? (
          <SeverityTally filters={filters} counts={severityCounts(data.pools)} />
        ) : null}
      </div>
      {data.total === 0 ? (
        <p className="rounded border border-dashed border-slate-300 p-6 text-center dark:border-slate-700">
          No MachinePools seen yet. poolscope lists the MachinePools of every configured kubeconfig context once it has
          read them.
        </p>
      ) : shown.length === 0 ? (
        <p className="rounded border border-dashed border-slate-300 p-6 text-center dark:border-slate-700">
          No pool matches these filters.
        </p>
      ) : (
        <FleetTable pools={shown} filters={filters} at={data.at} />
      )}
    </div>
  );
}
