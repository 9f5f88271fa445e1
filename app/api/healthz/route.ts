import { route, otherMethods } from '@/server/http/route';

export const dynamic = 'force-dynamic';

/** Liveness: the process answers. */
export const GET = route({}, async () => ({ status: 'ok' }));

export const { POST, PUT, PATCH, DELETE } = otherMethods('GET');
