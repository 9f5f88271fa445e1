import { explicitWindow } from '@/lib/url-state';
import { changesQuery, poolParams } from '@/server/http/api-schemas';
import { HttpError, route, otherMethods } from '@/server/http/route';
import { readChanges } from '@/server/read-model';

export const dynamic = 'force-dynamic';

/** A window's changes, newest first, page by page: what the timeline's newest 1,000 leave out. */
export const GET = route({ params: poolParams, query: changesQuery }, async ({ params, query }) => {
  const w = explicitWindow(query.from, query.to, Date.now());
  if (!w.ok) throw new HttpError(400, 'invalid-range', w.error);
  return readChanges(params, w.from, w.to, query.before ?? null, query.limit ?? 200);
});

export const { POST, PUT, PATCH, DELETE } = otherMethods('GET');
