import type { FleetFilters } from '@/lib/url-state';
import { fleetQuery } from '@/server/http/api-schemas';
import { answerResponse } from '@/server/http/answer-cache';
import { peerOf } from '@/server/http/peer';
import { route, otherMethods } from '@/server/http/route';
import { fleetAnswer } from '@/server/shared-answers';

export const dynamic = 'force-dynamic';

export const GET = route({ query: fleetQuery }, async ({ query, request }) => {
  const s = query.sort ?? 'finding';
  const filters: FleetFilters = {
    drifting: query.drifting ?? false,
    notReady: query.notReady ?? false,
    deleted: query.deleted ?? false,
    sort: s.replace(/^-/, '') as FleetFilters['sort'],
    desc: s.startsWith('-'),
    ...(query.context ? { context: query.context } : {}),
    ...(query.namespace ? { namespace: query.namespace } : {}),
    ...(query.q ? { q: query.q } : {}),
    ...(query.severity ? { severity: query.severity } : {}),
    ...(query.kind ? { kind: query.kind } : {}),
  };
  return answerResponse(request, await fleetAnswer(filters, peerOf(request.headers)));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods('GET');
