import { errorResponse, route, otherMethods } from '@/server/http/route';
import { runtime } from '@/server/runtime';

export const dynamic = 'force-dynamic';

/**
 * Readiness: the store answers (not corrupt, not unreadable: 503 `store-failing` with the reason), and some
 * collector (this process's or the leader's) has stored a cycle.
 */
export const GET = route({}, async () => {
  const rt = await runtime();
  if (rt.stopping) return errorResponse(503, 'shutting-down', 'poolscope is shutting down.');
  const health = rt.store.health();
  if (health.state === 'failing') return errorResponse(503, 'store-failing', health.error);
  // A store failing now throws a StoreFailingError: 503 `store-failing` too.
  const last = await rt.store.lastCycle();
  if (!last)
    return errorResponse(
      503,
      'not-ready',
      rt.collector ? 'The collector has not completed its first cycle yet.' : 'No collector has stored a cycle yet.',
    );
  return { status: 'ready', lastCycle: last, collecting: rt.collector !== null };
});

export const { POST, PUT, PATCH, DELETE } = otherMethods('GET');
