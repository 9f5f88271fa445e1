// What the Azure reads take from ARM's answers, whichever resource provider answered: the rate-limit counts the
// scheduler budgets by, the Date the answer was given at, and a failure as a read's outcome.

/** `Microsoft.Compute/HighCostGetVMScaleSet3Min;159,…` → { HighCostGetVMScaleSet3Min: 159, … }, plus subscription reads. */
export function parseRateLimitHeaders(get: (name: string) => string | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of (get('x-ms-ratelimit-remaining-resource') ?? '').split(',')) {
    const m = /^\s*Microsoft\.Compute\/([^;]+);(\d+)\s*$/.exec(part);
    if (m) out[m[1] as string] = Number(m[2]);
  }
  const reads = get('x-ms-ratelimit-remaining-subscription-reads');
  if (reads && /^\d+$/.test(reads)) out.SubscriptionReads = Number(reads);
  return out;
}

/** An HTTP Date header (`Fri, 04 Dec 2026 21:34:52 GMT`) as RFC 3339, or null. */
export function httpDate(v: string | undefined): string | null {
  const ms = v ? Date.parse(v) : NaN;
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

/** An ARM call's failure as a read's outcome: 404 is not found, 429 throttled (with Retry-After), else unreachable. */
export function classifyArmError(
  e: unknown,
):
  | { state: 'not-found'; error: string }
  | { state: 'throttled'; error: string; retryAfterSeconds: number | null; remaining: Record<string, number> }
  | { state: 'unreachable'; error: string } {
  const err = e as {
    statusCode?: number;
    code?: string;
    message?: string;
    response?: { headers: { get(n: string): string | undefined } };
  };
  // An error body is the server's text: one line of it, bounded, is what the UI shows.
  const message = `${err.code ?? 'Error'}: ${(err.message ?? String(e)).split('\n')[0]}`.slice(0, 500);
  if (err.statusCode === 404) return { state: 'not-found', error: message };
  if (err.statusCode === 429) {
    const ra = Number(err.response?.headers.get('retry-after'));
    const remaining = err.response ? parseRateLimitHeaders((n) => err.response?.headers.get(n)) : {};
    return { state: 'throttled', error: message, retryAfterSeconds: Number.isFinite(ra) ? ra : null, remaining };
  }
  return { state: 'unreachable', error: message };
}

/**
 * An HTTP pipeline policy (core-rest-pipeline's shape) that sends a GET once more when its connection was reset before
 * any answer came: the server closed an idle keep-alive socket just as the request went out on it. Such a reset says
 * nothing of Azure, and the repeat is safe (a GET). Any other failure, an answer or a second reset, is the read's
 * outcome, and when to read again the scheduler's (the clients make no retries of their own).
 */
export const retryGetOnReset = {
  name: 'poolscopeRetryGetOnReset',
  async sendRequest<Req extends { method: string }, Res>(request: Req, next: (r: Req) => Promise<Res>): Promise<Res> {
    try {
      return await next(request);
    } catch (e) {
      const err = e as { code?: string; statusCode?: number };
      if (request.method !== 'GET' || err.code !== 'ECONNRESET' || err.statusCode !== undefined) throw e;
      return next(request);
    }
  },
};
