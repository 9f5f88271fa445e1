import 'server-only';
// The address a request came from, for limits by client. Next.js gives route handlers no socket, and the
// X-Forwarded-For it passes on is the client's own when the client sent one. So the process's HTTP servers write
// the socket's peer address into a header of poolscope's own before Next sees the request, replacing any value a
// client put there (screenHttpServers in ./request-screen).

export const PEER_HEADER = 'x-poolscope-peer';

/** The peer address of a request as the front door recorded it ('unknown' where it did not run). */
export function peerOf(headers: Headers): string {
  return headers.get(PEER_HEADER) ?? 'unknown';
}
