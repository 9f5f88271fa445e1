import { z } from 'zod';
import { instant, route } from '@/server/http/route';
import { readPool } from '@/server/read-model';
import { poolParams } from './params';

export const dynamic = 'force-dynamic';

export const GET = route({ params: poolParams, query: z.strictObject({ at: instant.optional() }) }, ({ params, query }) => readPool(params, query.at ?? null));
