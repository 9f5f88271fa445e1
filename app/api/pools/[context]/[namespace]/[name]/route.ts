import { poolParams, poolQuery } from '@/server/http/api-schemas';
import { answerResponse } from '@/server/http/answer-cache';
import { peerOf } from '@/server/http/peer';
import { route, otherMethods } from '@/server/http/route';
import { poolAnswer } from '@/server/shared-answers';

export const dynamic = 'force-dynamic';

export const GET = route({ params: poolParams, query: poolQuery }, async ({ params, query, request }) =>
  answerResponse(request, await poolAnswer(params, query.at ?? null, peerOf(request.headers))),
);

export const { POST, PUT, PATCH, DELETE } = otherMethods('GET');
