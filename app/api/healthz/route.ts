import { errorResponse, route, otherMethods } from '@/server/http/route';
import { runtime } from '@/server/runtime';

export const dynamic = 'force-dynamic';

/**
 * Liveness: the process answers, and its store is not corrupt. A corrupt store (found by a query) fails it, so that
 * Kubernetes restarts the pod and start-up says what is wrong and stops (its check reads the whole file after this).
 * A store that cannot be read for now (a database down, an I/O error) fails readiness only: a restart mends neither.
 */
export const GET = route({}, async () => {
  const health = (await runtime()).store.health();
  if (health.state === 'failing' && health.fault === 'corrupt')
    return errorResponse(503, 'store-failing', health.error);
  return { status: 'ok' };
});

export const { POST, PUT, PATCH, DELETE } = otherMethods('GET');
