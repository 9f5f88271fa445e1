// HTTP plumbing the simulated API server's modules share: the request and response types (HTTP/2 and HTTP/1.1),
// JSON answers, and reading a request body within its size limit and accepted content types.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { ApiError, badRequest } from './errors';
import { PATCH_TYPES, type PatchType } from './patch';
import { decodeKubeProtobuf, PROTOBUF_KINDS, ProtobufError } from './protobuf';
import type { ResourceDef } from './resources';

const MAX_BODY = 3 * 1024 * 1024;

/** A request and its response over HTTP/2 or HTTP/1.1 (the server speaks both, as an API server does: kubectl and client-go use HTTP/2). */
export type Req = IncomingMessage | Http2ServerRequest;
export type Res = ServerResponse | Http2ServerResponse;

/** API groups Kubernetes itself serves (not CRDs). */
export const BUILT_IN_GROUPS = new Set([
  '',
  'apps',
  'policy',
  'rbac.authorization.k8s.io',
  'coordination.k8s.io',
  'events.k8s.io',
  'authorization.k8s.io',
  'authentication.k8s.io',
]);

export function send(res: Res, code: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function sendError(res: Res, e: ApiError): void {
  // A body past the limit is left unread: an HTTP/1.1 connection closes after the answer (as Go's server does),
  // or the next request on it would be read from the rest of that body. (HTTP/2 resets the stream alone.)
  const close = e.code === 413 && !('stream' in res);
  send(res, e.code, e.toStatus(), close ? { Connection: 'close' } : {});
}

/** A Kubernetes protobuf body's JSON form; a kind (or a set field) the decoder has no table for is a 415 that names it. */
function decodeProtobufBody(raw: Buffer): unknown {
  try {
    return decodeKubeProtobuf(raw);
  } catch (e) {
    if (!(e instanceof ProtobufError)) throw e;
    if (!e.unsupported) throw badRequest(`the request body could not be decoded: ${e.message}`);
    throw new ApiError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml ` +
        `(this simulator decodes application/vnd.kubernetes.protobuf for ${PROTOBUF_KINDS.join(', ')}; ${e.message}: send it as application/json)`,
    );
  }
}

/**
 * Reads a JSON body, or a Kubernetes protobuf one where `protobuf` says a real server takes it (built-in kinds, and
 * the Scale of a custom resource); custom resources have no protobuf form, so there it is a 415.
 */
/** A request's body, refused (413) past the API server's limit. */
export async function readBytes(req: Req): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY) throw new ApiError(413, 'BadRequest', 'request entity too large');
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}

export async function readBody(req: Req, protobuf = false): Promise<unknown> {
  const ct = req.headers['content-type'] ?? '';
  const raw = await readBytes(req);
  if (protobuf && /protobuf/.test(ct)) return decodeProtobufBody(raw);
  if (/protobuf|cbor/.test(ct)) {
    throw new ApiError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml`,
    );
  }
  const text = raw.toString('utf8');
  if (!text.trim()) throw badRequest('the request body is empty');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw badRequest(`the request body could not be decoded: ${(e as Error).message}`);
  }
}

/** The patch type of a PATCH request; strategic merge is for built-in kinds only (custom resources refuse it, as on a real server). */
export function patchTypeOf(req: Req, r: ResourceDef): PatchType {
  const ct = (req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
  const type = PATCH_TYPES[ct as keyof typeof PATCH_TYPES];
  if (!type)
    throw new ApiError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${Object.keys(PATCH_TYPES).join(', ')}`,
    );
  if (type === 'strategic' && !BUILT_IN_GROUPS.has(r.group)) {
    throw new ApiError(
      415,
      'UnsupportedMediaType',
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    );
  }
  return type;
}
