import { DEFAULT_RANGE, explicitWindow, type RangeName } from '@/lib/url-state';
import { answerResponse } from '@/server/http/answer-cache';
import { poolParams, timelineQuery } from '@/server/http/api-schemas';
import { peerOf } from '@/server/http/peer';
import { HttpError, route, otherMethods } from '@/server/http/route';
import { poolAnswer, timelineAnswer, type TimelineWindow } from '@/server/shared-answers';

export const dynamic = 'force-dynamic';

export const GET = route({ params: poolParams, query: timelineQuery }, async ({ params, query, request }) => {
  const client = peerOf(request.headers);
  if (query.at) return answerResponse(request, await poolAnswer(params, query.at, client));
  return answerResponse(request, await timelineAnswer(params, timelineWindow(query), client));
});

/**
 * The window a query asks for: a named range ending now, or instants. Whichever ends are given (none, one or both),
 * the window is checked: at most 31 days, from before to. Without `to` it ends now, and is shared as a live answer.
 */
function timelineWindow(query: { range?: RangeName; from?: string; to?: string }): TimelineWindow {
  if (query.range) return { live: true, range: query.range };
  const w = explicitWindow(query.from, query.to, Date.now());
  if (!w.ok) throw new HttpError(400, 'invalid-range', w.error);
  if (query.to === undefined) return { live: true, range: DEFAULT_RANGE, ...(query.from ? { from: w.from } : {}) };
  return { from: w.from, to: w.to };
}

export const { POST, PUT, PATCH, DELETE } = otherMethods('GET');
