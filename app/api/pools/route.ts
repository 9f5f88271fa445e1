import { z } from 'zod';
import { SORT_KEYS, type FleetFilters } from '@/lib/url-state';
import { flag, route } from '@/server/http/route';
import { readFleet } from '@/server/read-model';

export const dynamic = 'force-dynamic';

const sort = z.string().refine((s) => (SORT_KEYS as readonly string[]).includes(s.replace(/^-/, '')), {
  message: `must be one of ${SORT_KEYS.join(', ')}, optionally prefixed with - for descending`,
});

export const GET = route({
  query: z.strictObject({
    context: z.string().min(1).optional(),
    namespace: z.string().min(1).optional(),
    drifting: flag.optional(),
    notReady: flag.optional(),
    q: z.string().max(200).optional(),
    sort: sort.optional(),
  }),
}, async ({ query }) => {
  const s = query.sort ?? 'finding';
  const filters: FleetFilters = {
    drifting: query.drifting ?? false,
    notReady: query.notReady ?? false,
    sort: s.replace(/^-/, '') as FleetFilters['sort'],
    desc: s.startsWith('-'),
    ...(query.context ? { context: query.context } : {}),
    ...(query.namespace ? { namespace: query.namespace } : {}),
    ...(query.q ? { q: query.q } : {}),
  };
  return readFleet(filters);
});
