import { route, otherMethods } from '@/server/http/route';
import { runtime } from '@/server/runtime';
import { sourcesReport } from '@/server/read-model';

export const dynamic = 'force-dynamic';

/** Every source's state, the last stored cycle, and whether the store takes the collector's writes. */
export const GET = route({}, async () => sourcesReport(await runtime()));

export const { POST, PUT, PATCH, DELETE } = otherMethods('GET');
