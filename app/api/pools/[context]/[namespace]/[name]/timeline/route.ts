import { z } from 'zod';
import { MAX_WINDOW_MS, RANGES } from '@/lib/url-state';
import { instant, route } from '@/server/http/route';
import { readPool, readTimeline } from '@/server/read-model';
import { poolParams } from '../params';

export const dynamic = 'force-dynamic';

export const GET = route({
  params: poolParams,
  query: z.strictObject({ from: instant.optional(), to: instant.optional(), at: instant.optional() })
    .refine((q) => !(q.at && (q.from || q.to)), { message: 'give either "at" (the state at an instant) or "from"/"to" (changes in a range), not both' })
    .refine((q) => !q.from || !q.to || Date.parse(q.to) - Date.parse(q.from) <= MAX_WINDOW_MS, { message: 'a range can span at most 31 days' }),
}, async ({ params, query }) => {
  if (query.at) return readPool(params, query.at);
  const to = query.to ?? new Date().toISOString();
  const from = query.from ?? new Date(Date.parse(to) - RANGES['6h']).toISOString();
  return readTimeline(params, from, to);
});
