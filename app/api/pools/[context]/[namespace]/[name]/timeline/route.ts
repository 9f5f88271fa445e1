import { RANGES } from '@/lib/url-state';
import { poolParams, timelineQuery } from '@/server/http/api-schemas';
import { route, otherMethods } from '@/server/http/route';
import { readPool, readTimeline } from '@/server/read-model';

export const dynamic = 'force-dynamic';

export const GET = route({ params: poolParams, query: timelineQuery }, async ({ params, query }) => {
  if (query.at) return readPool(params, query.at);
  const to = query.to ?? new Date().toISOString();
  const from = query.from ?? new Date(Date.parse(to) - RANGES['6h']).toISOString();
  return readTimeline(params, from, to);
});

export const { POST, PUT, PATCH, DELETE } = otherMethods('GET');
