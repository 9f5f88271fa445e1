import { explicitWindow } from '@/lib/url-state';
import { poolParams, timelineQuery } from '@/server/http/api-schemas';
import { HttpError, route, otherMethods } from '@/server/http/route';
import { readPool, readTimeline } from '@/server/read-model';

export const dynamic = 'force-dynamic';

export const GET = route({ params: poolParams, query: timelineQuery }, async ({ params, query }) => {
  if (query.at) return readPool(params, query.at);
  // Whichever ends are given (none, one or both), the window is checked: at most 31 days, from before to.
  const w = explicitWindow(query.from, query.to, Date.now());
  if (!w.ok) throw new HttpError(400, 'invalid-range', w.error);
  return readTimeline(params, w.from, w.to);
});

export const { POST, PUT, PATCH, DELETE } = otherMethods('GET');
