// Charging one ARM read against the throttling budgets (throttle.ts): the remaining-budget headers every answer
// carries, or the 429 `OperationNotAllowed` ARM sends when a bucket is empty, with the policy in `details`.

import { ArmError } from './arm-http';
import type { PolicyName, Throttler } from './throttle';

/** What a request is charged to: its subscription and region, and the scale set's own budget when it names one. */
export interface ChargeTarget {
  subscriptionId: string;
  location: string;
  name?: string;
}

/** Charges `policies` (and, when `perScaleSet`, the scale set's budget); the headers to answer with. */
export function charge(
  throttler: Throttler,
  rec: ChargeTarget,
  policies: PolicyName[],
  perScaleSet: boolean,
): Record<string, string> {
  const r = throttler.charge(rec.subscriptionId, rec.location, policies, perScaleSet ? rec.name : undefined);
  if (!r.allowed) {
    const now = new Date();
    throw new ArmError(
      429,
      'OperationNotAllowed',
      'The server rejected the request because too many requests have been received for this subscription.',
      { 'Retry-After': String(r.retryAfterSeconds), ...r.headers },
      [
        {
          code: 'TooManyRequests',
          target: r.policy,
          message: JSON.stringify({
            operationGroup: r.policy,
            startTime: now.toISOString(),
            endTime: new Date(now.getTime() + r.retryAfterSeconds * 1000).toISOString(),
            allowedRequestCount: throttler.budgets[(r.policy ?? 'SubscriptionReads') as PolicyName]?.capacity,
            measuredRequestCount:
              (throttler.budgets[(r.policy ?? 'SubscriptionReads') as PolicyName]?.capacity ?? 0) + 1,
          }),
        },
      ],
    );
  }
  return r.headers;
}
