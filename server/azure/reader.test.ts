// The headers a read takes from ARM's answers: the rate-limit counts the scheduler budgets by, and the Date the
// VM list was answered at (the read's time, compared with the AMPMs' creationTimestamps: lib/drift).

import { describe, expect, it } from 'vitest';
import { httpDate, parseRateLimitHeaders } from './arm-answers';
import { azureInput } from './reader';

describe('ARM response headers', () => {
  it('reads the remaining Compute and subscription budgets, ignoring what it cannot parse', () => {
    const headers: Record<string, string> = {
      'x-ms-ratelimit-remaining-resource':
        'Microsoft.Compute/HighCostGetVMScaleSet3Min;159,Microsoft.Compute/HighCostGetVMScaleSet30Min;899, junk;1',
      'x-ms-ratelimit-remaining-subscription-reads': '11999',
    };
    expect(parseRateLimitHeaders((n) => headers[n])).toEqual({
      HighCostGetVMScaleSet3Min: 159,
      HighCostGetVMScaleSet30Min: 899,
      SubscriptionReads: 11999,
    });
    expect(parseRateLimitHeaders(() => undefined)).toEqual({});
  });

  it('reads an HTTP Date as RFC 3339, and nothing from a missing or malformed one', () => {
    expect(httpDate('Fri, 04 Dec 2026 21:34:52 GMT')).toBe('2026-12-04T21:34:52.000Z');
    expect(httpDate(undefined)).toBeNull();
    expect(httpDate('yesterday')).toBeNull();
  });

  it('hands the read time on to the pool model with the VMs', () => {
    const read = {
      state: 'ok' as const,
      vmss: { id: 'x' },
      vms: [],
      readAt: '2026-12-04T21:34:52.000Z',
      remaining: {},
      calls: 2,
      ops: { vmssGet: 1, vmList: 1, instanceView: 0 },
    };
    expect(azureInput(read)).toEqual({ state: 'ok', vmss: { id: 'x' }, vms: [], readAt: '2026-12-04T21:34:52.000Z' });
  });
});
