import 'server-only';
// What poolscope shows anyone about a failed call to a cluster: built from the HTTP status, the request's own
// description and Node's local error codes — never from what the server sent back, which a hostile workload
// cluster (or anything posing as one) controls. The server's own words go to the log, bounded (docs/security.md).

/** An error whose message poolscope wrote itself (no server text in it): safe to show as it is. */
export class LocalFailure extends Error {
  /** `detail`: what the server sent, for the log only. */
  constructor(
    message: string,
    readonly detail?: string,
  ) {
    super(message);
  }
}

const HTTP: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

const HINT: Record<number, string> = {
  401: ': the credentials were not accepted',
  403: ": poolscope's identity may not do this (its RBAC)",
  429: ': the API server is throttling poolscope',
};

/** Node's and undici's local error codes, in words. */
const NETWORK: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found (DNS)',
  EAI_AGAIN: 'DNS lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  EPIPE: 'connection closed',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed by the server',
  UND_ERR_HEADERS_TIMEOUT: 'no answer in time',
  UND_ERR_BODY_TIMEOUT: 'no answer in time',
  UND_ERR_CLOSED: 'connection closed',
};

const TLS = /CERT|SELF_SIGNED|UNABLE_TO_|ERR_TLS|ERR_SSL|EPROTO/;

/** The text for an HTTP status: `HTTP 403 Forbidden: poolscope's identity may not do this (its RBAC)`. */
export function httpText(status: number): string {
  return `HTTP ${status}${HTTP[status] ? ` ${HTTP[status]}` : ''}${HINT[status] ?? ''}`;
}

type Failing = { code?: unknown; statusCode?: unknown; name?: string; message?: string; cause?: Failing };

/** A local error code found on the error or its causes (undici wraps them: `fetch failed` ← ECONNREFUSED). */
function localCode(e: Failing | undefined, depth = 0): string | null {
  if (!e || depth > 4) return null;
  if (typeof e.code === 'string' && /^[A-Z][A-Z0-9_]{1,60}$/.test(e.code)) return e.code;
  return localCode(e.cause, depth + 1);
}

function timedOut(e: Failing | undefined, depth = 0): boolean {
  if (!e || depth > 4) return false;
  return e.name === 'TimeoutError' || e.name === 'AbortError' || timedOut(e.cause, depth + 1);
}

/**
 * Text about a failed call that is safe to show to readers: `what` (e.g. "list /api/v1/nodes") and the status or
 * local cause. A LocalFailure keeps its own message.
 */
export function publicError(e: unknown, what?: string): string {
  const prefix = what ? `${what}: ` : '';
  if (e instanceof LocalFailure) return e.message;
  const err = (e ?? {}) as Failing;
  const status = typeof err.statusCode === 'number' ? err.statusCode : typeof err.code === 'number' ? err.code : null;
  if (status !== null) return `${prefix}${httpText(status)}`;
  if (timedOut(err)) return `${prefix}no answer in time`;
  const code = localCode(err);
  if (code && NETWORK[code]) return `${prefix}${NETWORK[code]}`;
  if (code && TLS.test(code))
    return `${prefix}TLS failed: the server's certificate is not trusted or not valid (${code})`;
  if (code) return `${prefix}failed (${code})`;
  return `${prefix}failed (the server log has the details)`;
}

/** What the server (or the error) said, bounded, for the log. */
export function logDetail(e: unknown, max = 500): string {
  const err = (e ?? {}) as Failing & { detail?: string; body?: unknown };
  const parts = [
    err.message,
    err.detail,
    typeof err.body === 'string' ? err.body : undefined,
    err.cause?.message,
  ].filter((p): p is string => typeof p === 'string' && p !== '');
  const text = parts.join(' | ');
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
