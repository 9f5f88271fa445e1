import 'server-only';
// The address a request came from, for limits by client. Next.js gives route handlers no socket, and the
// X-Forwarded-For it passes on is the client's own when the client sent one. So every HTTP server of the process
// writes the socket's peer address into a header of poolscope's own before Next sees the request, replacing any
// value a client put there.

import http from 'node:http';

export const PEER_HEADER = 'x-poolscope-peer';

const INSTALLED = Symbol.for('poolscope.peer-header');

/** Makes every `http.Server` of this process set PEER_HEADER on each request (once per process). */
export function installPeerHeader(): void {
  const proto = http.Server.prototype as http.Server & { [INSTALLED]?: true };
  if (proto[INSTALLED]) return;
  const emit = proto.emit as (this: http.Server, event: string | symbol, ...args: unknown[]) => boolean;
  proto.emit = function (this: http.Server, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'request') {
      const req = args[0] as http.IncomingMessage;
      req.headers[PEER_HEADER] = req.socket?.remoteAddress ?? 'unknown';
    }
    return emit.call(this, event, ...args);
  } as typeof proto.emit;
  proto[INSTALLED] = true;
}

/** The peer address of a request as installPeerHeader recorded it ('unknown' where it did not run). */
export function peerOf(headers: Headers): string {
  return headers.get(PEER_HEADER) ?? 'unknown';
}
