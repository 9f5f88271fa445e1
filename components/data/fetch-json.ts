// fetch for the API: JSON on success, the server's `{error:{code,message}}` as an ApiRequestError otherwise.

import type { ApiError } from '@/lib/api-types';

export class ApiRequestError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

export async function fetchJson<T>(url: string, signal?: AbortSignal): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, { signal, headers: { accept: 'application/json' } });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new ApiRequestError(0, 'network', 'poolscope\'s server does not answer. Check that it is running, then retry.');
  }
  if (res.ok) return (await res.json()) as T;
  const body = (await res.json().catch(() => null)) as ApiError | null;
  throw new ApiRequestError(res.status, body?.error.code ?? 'http', body?.error.message ?? `The server answered ${res.status}.`);
}
