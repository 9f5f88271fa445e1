import { resyncService } from '@/server/actions';
import { poolParams, resyncStatusQuery } from '@/server/http/api-schemas';
import { route, otherMethods } from '@/server/http/route';

export const dynamic = 'force-dynamic';

/** What the caller may do to this pool (identity, RBAC per mode, verdict, a resync under way and its steps). */
export const GET = route({ params: poolParams, query: resyncStatusQuery }, async ({ params, query, request }) =>
  (await resyncService()).status(params, request.headers, { fresh: query.fresh === true }),
);

/** Runs (or with dryRun previews) a resync: body `{mode: "reconcile" | "sync-provider-ids", dryRun?, verdictDigest?}`. */
export const POST = route({ params: poolParams }, async ({ params, request }) =>
  (await resyncService()).run(params, request),
);

export const { PUT, PATCH, DELETE } = otherMethods('GET', 'POST');
