import { poolParams, poolQuery } from '@/server/http/api-schemas';
import { route, otherMethods } from '@/server/http/route';
import { readPool } from '@/server/read-model';

export const dynamic = 'force-dynamic';

export const GET = route({ params: poolParams, query: poolQuery }, ({ params, query }) =>
  readPool(params, query.at ?? null),
);

export const { POST, PUT, PATCH, DELETE } = otherMethods('GET');
