'use client';
// When poolscope reads the pool's scale set next, counting down: its lane's period, or its turn at the region's
// Compute read budget, or Azure's Retry-After (the scheduler's rule: docs/operations.md, "When a scale set is read").

import { nextReadText } from '@/lib/format';
import type { PoolResponse } from '@/lib/api-types';
import { formatInstant } from '@/components/ui/local-time';
import { useLiveNow } from '@/components/ui/use-live-now';

const WHY: Record<NonNullable<PoolResponse['azureNextRead']>['waitingFor'], string> = {
  interval: 'Read every ~15 s while the pool moves, is not ready or drifts; every ~2 min when it is steady.',
  budget:
    'Its subscription and region share a Compute read budget: poolscope uses a share of what is left (POOLSCOPE_AZURE_BUDGET_SHARE, a tenth by default), spread evenly, the longest due first.',
  throttled: 'Azure answered 429: nothing is read in this subscription and region until its Retry-After has passed.',
};

/** The same, for an AKS pool's agent pool: AKS's own budget, per subscription. */
const WHY_AKS: typeof WHY = {
  interval: WHY.interval,
  budget:
    "Its subscription's AKS reads share a budget of their own: poolscope uses a share of it (POOLSCOPE_AZURE_BUDGET_SHARE), spread evenly, the longest due first.",
  throttled: 'AKS answered 429: no agent pool of this subscription is read until its Retry-After has passed.',
};

export function AzureNextRead({
  plan,
  shownAt,
}: {
  plan: NonNullable<PoolResponse['azureNextRead']>;
  shownAt: string;
}) {
  const now = useLiveNow(shownAt);
  return (
    <span
      data-testid="azure-next-read"
      data-waiting-for={plan.waitingFor}
      title={`Planned for ${formatInstant(plan.at, 'UTC')}. ${(plan.of === 'agent-pool' ? WHY_AKS : WHY)[plan.waitingFor]}`}
    >
      · {nextReadText(plan, Date.parse(now))}
    </span>
  );
}
