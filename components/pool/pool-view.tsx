'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { INFRA_KINDS, type PoolRef } from '@/lib/api-types';
import { DEFAULT_RANGE, FLAVOUR_LABELS, flavourOf, windowQuery, zoomQuery, type TimeWindow } from '@/lib/url-state';
import {
  POOL_REFRESH_MS,
  poolApiPath,
  poolOptions,
  sourcesOptions,
  timelineOptions,
  windowKey,
} from '@/components/data/queries';
import { StaleBanner, useStaleness } from '@/components/ui/stale-banner';
import { useHydratedView } from '@/components/data/use-live-updates';
import { Badge, StateBadge } from '@/components/ui/badge';
import { ErrorPanel } from '@/components/ui/error-panel';
import { LocalTime } from '@/components/ui/local-time';
import { Skeleton } from '@/components/ui/skeleton';
import { StoreAlert } from '@/components/ui/store-alert';
import { AzureNextRead } from './azure-next-read';
import { AzureReadAge } from './azure-read-age';
import { ChangesList } from './changes-list';
import { DeletedNote } from './deleted-note';
import { DriftMatrix } from './drift-matrix';
import { FindingsPanel } from './findings-panel';
import { InstanceTable } from './instance-table';
import { PoolSkeleton } from './pool-skeleton';
import { ResyncButton } from './resync/resync-button';
import { TimeControls } from './time-controls';
import { TimelineChart } from './timeline-chart';
import { VerdictPanel } from './verdict-panel';

export function PoolView({ poolRef, window: w, path }: { poolRef: PoolRef; window: TimeWindow; path: string }) {
  const router = useRouter();
  const pool = useQuery(poolOptions(poolRef, w.at));
  const timeline = useQuery(timelineOptions(poolRef, windowKey(w)));
  const sources = useQuery(sourcesOptions());
  useHydratedView();
  const stale = useStaleness(pool.dataUpdatedAt, POOL_REFRESH_MS);
  if (pool.isPending) return <PoolSkeleton />;
  // A refetch that fails keeps the pool shown (the stale banner says when it stops being live): only a pool never
  // read is an error.
  if (!pool.data)
    return <ErrorPanel title="This pool could not be loaded" error={pool.error} onRetry={() => void pool.refetch()} />;
  const { pool: d } = pool.data;
  const s = d.summary;
  return (
    <div className="space-y-5">
      <div className="space-y-1">
        <p className="text-sm">
          <Link href="/" className="underline">
            All pools
          </Link>{' '}
          / {s.ref.context} / {s.ref.namespace}
        </p>
        <h1 className="text-2xl font-bold tracking-tight">{s.ref.name}</h1>
        <p className="flex flex-wrap items-center gap-2 text-sm">
          <span>Cluster {s.clusterName ?? '?'}</span>
          <span>· {FLAVOUR_LABELS[flavourOf(s)].kind}</span>
          {s.orchestrationMode ? <span>· {s.orchestrationMode}</span> : null}
          <span>· CAPZ {s.capzVersion ?? 'version unknown'}</span>
          {w.at === null && pool.data.azureReadAt ? (
            <AzureReadAge readAt={pool.data.azureReadAt} shownAt={d.at} />
          ) : null}
          {w.at === null && pool.data.azureNextRead ? (
            <AzureNextRead plan={pool.data.azureNextRead} shownAt={d.at} />
          ) : null}
          <StateBadge value={s.provisioningState} />
          <StateBadge
            value={s.ampReady}
            label={
              s.ampReady === null
                ? 'ready unknown'
                : `${FLAVOUR_LABELS[flavourOf(s)].kind} ${s.ampReady ? 'ready' : 'not ready'}`
            }
          />
          {s.paused ? <Badge tone="warn">paused</Badge> : null}
          {s.deletedAt ? (
            <Badge tone="bad">deleted</Badge>
          ) : s.unwatchedSince ? (
            <Badge tone="bad">not watched</Badge>
          ) : null}
        </p>
      </div>
      {w.at === null ? <StaleBanner stale={stale} /> : null}
      <StoreAlert store={sources.data?.store} />
      <DeletedNote summary={s} />
      {w.at ? (
        <p
          role="note"
          data-testid="as-of"
          className="rounded border border-amber-300 bg-amber-50 p-3 text-amber-950 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100"
        >
          You are looking at this pool as it was at <LocalTime iso={w.at} />.{' '}
          <Link href={w.range || w.from ? `${path}?${windowQuery({ ...w, at: null })}` : path} className="underline">
            Back to now
          </Link>
        </p>
      ) : null}
      {/* What is wrong beside what a resync would do: on a laptop, the page down to the drift matrix is one screen. */}
      <div className="grid items-start gap-6 xl:grid-cols-[minmax(0,3fr)_minmax(0,2fr)]">
        <FindingsPanel detail={d} live={w.at === null} />
        <VerdictPanel
          verdict={d.verdict}
          action={
            <ResyncButton
              poolRef={s.ref}
              past={w.at !== null}
              gone={s.deletedAt ? 'deleted' : s.unwatchedSince ? 'unwatched' : null}
              infraKind={INFRA_KINDS[flavourOf(s)].kind}
            />
          }
        />
      </div>
      <section aria-labelledby="timeline-h" className="space-y-2">
        <div className="flex flex-wrap items-center gap-x-6 gap-y-2">
          <h2 id="timeline-h" className="text-lg font-semibold">
            Timeline
          </h2>
          <TimeControls path={path} window={w} shownAt={d.at} />
        </div>
        {timeline.isPending ? (
          <Skeleton className="h-96 w-full" />
        ) : !timeline.data ? (
          <ErrorPanel
            title="The timeline could not be loaded"
            error={timeline.error}
            onRetry={() => void timeline.refetch()}
          />
        ) : (
          <TimelineChart
            view={timeline.data}
            at={w.at}
            windowKey={windowQuery(w)}
            onPick={(iso) => router.push(`${path}?${windowQuery({ ...w, at: iso })}`, { scroll: false })}
            onZoom={(from, to) => router.push(`${path}?${zoomQuery(w, from, to)}`, { scroll: false })}
            onZoomReset={() =>
              w.range ? null : router.push(`${path}?${windowQuery({ ...w, range: DEFAULT_RANGE })}`, { scroll: false })
            }
          />
        )}
      </section>
      <DriftMatrix
        rows={d.instances}
        drift={d.drift}
        heldBack={pool.data.heldBack}
        flavour={flavourOf(s)}
        azureRead={d.sources.azure.state === 'ok'}
      />
      <InstanceTable
        rows={d.instances}
        heldBack={pool.data.heldBack}
        flavour={flavourOf(s)}
        azureRead={d.sources.azure.state === 'ok'}
      />
      {timeline.data ? (
        <ChangesList
          flavour={flavourOf(s)}
          entries={timeline.data.entries}
          total={timeline.data.entriesTotal}
          source={{ apiPath: poolApiPath(poolRef), from: timeline.data.from, to: timeline.data.to }}
        />
      ) : null}
      {d.notes.length ? (
        <section aria-labelledby="notes-h" className="text-sm">
          <h2 id="notes-h" className="font-semibold">
            Notes
          </h2>
          <ul className="list-disc pl-5">
            {d.notes.map((n) => (
              <li key={n}>{n}</li>
            ))}
          </ul>
        </section>
      ) : null}
    </div>
  );
}
