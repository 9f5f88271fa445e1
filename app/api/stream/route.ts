import { route, otherMethods } from '@/server/http/route';
import { sseResponse } from '@/server/http/sse';
import { runtime } from '@/server/runtime';

export const dynamic = 'force-dynamic';

export const GET = route({}, async ({ request }) => {
  const rt = await runtime();
  return sseResponse(request, { bus: rt.bus, hello: rt.hello });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods('GET');
