import { HydrationBoundary, QueryClient, dehydrate } from '@tanstack/react-query';
import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { NoDataView } from '@/components/data/no-data-view';
import { PoolView } from '@/components/pool/pool-view';
import { LocalTime } from '@/components/ui/local-time';
import { queryKeys, resolveWindow, windowKey } from '@/components/data/queries';
import type { PoolRef } from '@/lib/api-types';
import { firstView } from '@/lib/first-rows';
import { DEFAULT_RANGE, parseWindow, poolPath, windowQuery, type Params, type TimeWindow } from '@/lib/url-state';
import { runtime } from '@/server/runtime';
import { Overloaded } from '@/server/http/answer-cache';
import { PoolNotFound, sourcesReport } from '@/server/read-model';
import { poolAnswer, timelineAnswer } from '@/server/shared-answers';

export const dynamic = 'force-dynamic';

/** The largest timeline answer (JSON bytes) sent inside the page; a larger one the page reads itself. */
const SSR_TIMELINE_MAX_BYTES = 256 * 1024;

/** The request's "now" (a function, so rendering stays pure for the linter: this page is rendered per request). */
const now = () => Date.now();

type Props = { params: Promise<PoolRef>; searchParams: Promise<Params> };

async function refOf(params: Props['params']): Promise<PoolRef> {
  const p = await params;
  return {
    context: decodeURIComponent(p.context),
    namespace: decodeURIComponent(p.namespace),
    name: decodeURIComponent(p.name),
  };
}

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const ref = await refOf(params);
  return { title: `${ref.name} (${ref.context}/${ref.namespace})` };
}

export default async function PoolPage({ params, searchParams }: Props) {
  const ref = await refOf(params);
  const path = poolPath(ref);
  const parsed = parseWindow(await searchParams, now());
  if (!parsed.ok) {
    return (
      <main id="main" className="mx-auto max-w-3xl space-y-4 px-4 py-10">
        <h1 className="text-2xl font-bold">{ref.name}</h1>
        <div
          role="alert"
          className="rounded border border-amber-300 bg-amber-50 p-4 text-amber-950 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100"
        >
          <h2 className="font-semibold">This link&apos;s time range cannot be read</h2>
          <p className="mt-1">{parsed.error}</p>
        </div>
        <Link href={path} className="underline">
          Show this pool now, for the last 6 hours
        </Link>
        <NoDataView />
      </main>
    );
  }
  const w = parsed.window;
  const qc = new QueryClient();
  try {
    // A large pool's page embeds the rows its tables draw first, and reads the rest once shown (lib/first-rows.ts).
    qc.setQueryData(queryKeys.pool(ref, w.at), firstView((await poolAnswer(ref, w.at)).value));
  } catch (e) {
    // Under overload the page is sent without the pool, which it then reads itself (and is told to retry).
    if (e instanceof Overloaded) return poolMain(ref, w, path, qc);
    if (!(e instanceof PoolNotFound)) throw e;
    // A link to an instant before the pool's record starts: say so, and where it starts.
    const start = e.recordStart;
    if (!start || !w.at) notFound();
    return (
      <main id="main" className="mx-auto max-w-3xl space-y-4 px-4 py-10">
        <h1 className="text-2xl font-bold">{ref.name}</h1>
        <div
          role="alert"
          className="rounded border border-amber-300 bg-amber-50 p-4 text-amber-950 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100"
        >
          <h2 className="font-semibold">
            No record of this pool at <LocalTime iso={w.at} />
          </h2>
          <p className="mt-1">
            poolscope&apos;s record of MachinePool {ref.namespace}/{ref.name} in context {ref.context} starts at{' '}
            <LocalTime iso={start} />: it first saw the pool then, or retention has removed what came before.
          </p>
        </div>
        <p className="flex flex-wrap gap-4">
          <Link href={`${path}?${windowQuery({ range: '1h', from: '', to: '', at: start })}`} className="underline">
            Show it as its record starts
          </Link>
          <Link href={path} className="underline">
            Show it now
          </Link>
        </p>
        <NoDataView />
      </main>
    );
  }
  // Whether the store takes writes, on the first paint too (the client polls it).
  qc.setQueryData(queryKeys.sources(), await sourcesReport(await runtime()));
  const wk = windowKey(w);
  // The answer the page's own request would get (a live range is shared with every reader of it, as the API's is).
  // A long window's answer (a month of a busy pool: megabytes) is left to the browser to read once the page is
  // shown: sent inside the page, it would delay the page's first paint for a chart below it.
  const timeline = await timelineAnswer(
    ref,
    'range' in wk && !wk.at ? { live: true, range: wk.range ?? DEFAULT_RANGE } : resolveWindow(wk),
  ).catch(() => null);
  if (timeline && timeline.body.length <= SSR_TIMELINE_MAX_BYTES)
    qc.setQueryData(queryKeys.timeline(ref, wk), timeline.value);
  return poolMain(ref, w, path, qc);
}

function poolMain(ref: PoolRef, w: TimeWindow, path: string, qc: QueryClient) {
  return (
    <main id="main" className="mx-auto max-w-screen-2xl px-4 py-6">
      <HydrationBoundary state={dehydrate(qc)}>
        <PoolView poolRef={ref} window={w} path={path} />
      </HydrationBoundary>
    </main>
  );
}
