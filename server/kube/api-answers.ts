// What the API server answered, as the informer reads it: an error with its HTTP status and Status reason (in
// poolscope's words; the server's own message kept for the log), a JSON body, and 410 Gone.

import { LocalFailure, httpText } from './public-error';

/**
 * An error with the API's HTTP status (and Status reason when it sent one). Its message is poolscope's own words
 * (what was asked and the status); the Status message the server sent is kept apart, for the log.
 */
export class ApiStatusError extends LocalFailure {
  constructor(
    readonly statusCode: number,
    what: string,
    readonly reason?: string,
    detail?: string,
  ) {
    super(`${what}: ${httpText(statusCode)}`, detail);
  }
}

/** A request's failure as the API server answered it: its Status message and reason, when the body is a Status. */
export function statusError(what: string, code: number, body: string): ApiStatusError {
  let status: { message?: unknown; reason?: unknown } = {};
  try {
    status = JSON.parse(body) as typeof status;
  } catch {
    /* not a Status */
  }
  const reason = typeof status.reason === 'string' ? status.reason : undefined;
  return new ApiStatusError(
    code,
    what,
    reason,
    typeof status.message === 'string' ? status.message : body.slice(0, 500),
  );
}

/** A JSON answer, or a LocalFailure saying it is not JSON (the text goes to the log, not to readers). */
export function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new LocalFailure(`${what}: the answer is not JSON`, text.slice(0, 200));
  }
}

export const isGone = (e: unknown) =>
  (e as { statusCode?: number; code?: number } | null)?.statusCode === 410 ||
  (e as { code?: number } | null)?.code === 410;
