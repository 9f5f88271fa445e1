// fetch for the API: JSON on success, the server's `{error:{code,message}}` as an ApiRequestError otherwise.

import type { ApiError } from '@/lib/api-types';

export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The whole error answer: some carry more than `error` (a 409 `verdict-changed` its new preview). */
    readonly body: unknown = null,
  ) {
    super(message);
  }
}

export async function fetchJson<T>(url: string, signal?: AbortSignal, init: RequestInit = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, {
      ...init,
      signal,
      headers: { accept: 'application/json', ...(init.headers as Record<string, string> | undefined) },
    });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new ApiRequestError(
      0,
      'network',
      "poolscope's server does not answer. Check that it is running, then retry.",
    );
  }
  if (res.ok) return (await res.json()) as T;
  const body = (await res.json().catch(() => null)) as ApiError | null;
  throw new ApiRequestError(
    res.status,
    body?.error.code ?? 'http',
    body?.error.message ?? `The server answered ${res.status}.`,
    body,
  );
}

/** A write: JSON body, the header poolscope requires of every write, and an idempotency key. */
export function postJson<T>(url: string, body: unknown, idempotencyKey: string): Promise<T> {
  return fetchJson<T>(url, undefined, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', 'x-poolscope-request': '1', 'idempotency-key': idempotencyKey },
  });
}
