import { HydrationBoundary, QueryClient, dehydrate } from '@tanstack/react-query';
import { FleetLinkError } from '@/components/fleet/fleet-link-error';
import { FleetView } from '@/components/fleet/fleet-view';
import { queryKeys } from '@/components/data/queries';
import { parseFleetParams, withoutSeverity, type Params } from '@/lib/url-state';
import { fleetParamsProblem } from '@/server/http/api-schemas';
import { fleetAnswer } from '@/server/shared-answers';

export const dynamic = 'force-dynamic';

export default async function FleetPage({ searchParams }: { searchParams: Promise<Params> }) {
  const params = await searchParams;
  // The rules of GET /api/pools: a link the API would refuse says what is wrong rather than showing other pools.
  const problem = fleetParamsProblem(params);
  if (problem) {
    return (
      <main id="main" className="mx-auto max-w-3xl space-y-4 px-4 py-10">
        <h1 className="text-2xl font-bold tracking-tight">MachinePools</h1>
        <FleetLinkError {...problem} />
      </main>
    );
  }
  const filters = parseFleetParams(params);
  const qc = new QueryClient();
  // Read as the page reads it: without the severity, which the page applies itself (it counts every severity).
  await qc.prefetchQuery({
    queryKey: queryKeys.fleet(filters),
    queryFn: async () => (await fleetAnswer(withoutSeverity(filters))).value,
  });
  return (
    <main id="main" className="mx-auto max-w-screen-2xl space-y-4 px-4 py-6">
      <h1 className="text-2xl font-bold tracking-tight">MachinePools</h1>
      {/* No Suspense boundary here: the fleet is in hand, and a boundary would send the table hidden, to be shown by a
          script once the rest of the page has streamed (React throttles such reveals), well after the first paint. */}
      <HydrationBoundary state={dehydrate(qc)}>
        <FleetView />
      </HydrationBoundary>
    </main>
  );
}
