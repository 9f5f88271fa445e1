// ARM's wire format, shared by the token endpoint and every route: the error a route throws (the server turns it
// into `{error:{code,message}}`), JSON answers with a request id, request bodies, and the stock 404/405 errors.

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

export class ArmError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly details?: unknown[],
  ) {
    super(message);
  }
}

export function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'x-ms-request-id': randomUUID(),
    ...headers,
  });
  res.end(text);
}

/** Answers a request that failed with `e`: an ArmError as ARM words it, anything else as a 500. */
export function sendError(res: ServerResponse, e: unknown): void {
  if (res.headersSent) return void res.destroy();
  if (e instanceof ArmError) {
    send(
      res,
      e.status,
      { error: { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) } },
      e.headers,
    );
  } else {
    send(res, 500, { error: { code: 'InternalServerError', message: (e as Error).message } });
  }
}

export async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function notFound(kind: string, name: string, rg: string): ArmError {
  return new ArmError(
    404,
    'ResourceNotFound',
    `The Resource 'Microsoft.Compute/${kind}/${name}' under resource group '${rg}' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix`,
  );
}

export function noRoute(pathname: string): ArmError {
  return new ArmError(404, 'NotFound', `No route for ${pathname}.`);
}

export function methodNotAllowed(): ArmError {
  return new ArmError(405, 'MethodNotAllowed', 'The requested resource does not support this method.');
}
