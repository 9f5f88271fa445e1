// Token-bucket budgets modelled on Azure Compute's throttling (docs/domain.md, "Azure throttling"): per
// subscription+region policies and a per-scale-set policy, each reported in `x-ms-ratelimit-remaining-resource`,
// plus ARM's subscription read bucket. An empty bucket answers 429 with Retry-After.

export interface BudgetSpec {
  /** Tokens when full. */
  capacity: number;
  /** Seconds to refill from empty. */
  windowSeconds: number;
}

/** Budgets as observed in the wild; Microsoft does not publish them (docs/domain.md, "Azure throttling"). */
const DEFAULT_BUDGETS = {
  HighCostGetVMScaleSet3Min: { capacity: 190, windowSeconds: 180 },
  HighCostGetVMScaleSet30Min: { capacity: 900, windowSeconds: 1800 },
  VMScaleSetVMViews3Min: { capacity: 5000, windowSeconds: 180 },
  /** Per scale set. */
  GetVMScaleSet3Min: { capacity: 60, windowSeconds: 180 },
  /** ARM's per-subscription read bucket (new token-bucket model: 250 tokens, 25/s). */
  SubscriptionReads: { capacity: 250, windowSeconds: 10 },
  /**
   * AKS's own GET budget per subscription (charged with region `aks`): a burst of 60, one a second after, as one
   * unofficial source has it. AKS does not report what is left.
   * docs/domain.md, "How poolscope reads an AKS pool from Azure".
   */
  AksReads: { capacity: 60, windowSeconds: 60 },
} satisfies Record<string, BudgetSpec>;

export type PolicyName = keyof typeof DEFAULT_BUDGETS;

/** Policies charged but not reported in `x-ms-ratelimit-remaining-resource` (that header is Compute's). */
const UNREPORTED = new Set<string>(['AksReads']);

class Bucket {
  private tokens: number;
  private last: number;

  constructor(
    readonly spec: BudgetSpec,
    private readonly now: () => number,
  ) {
    this.tokens = spec.capacity;
    this.last = now();
  }

  private refill(): void {
    const t = this.now();
    this.tokens = Math.min(
      this.spec.capacity,
      this.tokens + ((t - this.last) / 1000) * (this.spec.capacity / this.spec.windowSeconds),
    );
    this.last = t;
  }

  remaining(): number {
    this.refill();
    return Math.floor(this.tokens);
  }

  /** Seconds until one token is available (0 when one is). */
  waitSeconds(): number {
    this.refill();
    return this.tokens >= 1 ? 0 : Math.ceil((1 - this.tokens) / (this.spec.capacity / this.spec.windowSeconds));
  }

  take(): void {
    this.tokens -= 1;
  }
}

export interface ThrottleResult {
  allowed: boolean;
  retryAfterSeconds: number;
  /** The policy that refused, when one did. */
  policy?: string;
  headers: Record<string, string>;
}

export class Throttler {
  private readonly buckets = new Map<string, Bucket>();
  /** Subscriptions throttled by a world event until the given time (ms). */
  private readonly forced = new Map<string, number>();
  readonly budgets: Record<PolicyName, BudgetSpec>;

  constructor(
    budgets: Partial<Record<PolicyName, BudgetSpec>> = {},
    private readonly now: () => number = Date.now,
  ) {
    this.budgets = { ...DEFAULT_BUDGETS, ...budgets };
  }

  private bucket(key: string, policy: PolicyName): Bucket {
    const k = `${key}|${policy}`;
    let b = this.buckets.get(k);
    if (!b) {
      b = new Bucket(this.budgets[policy], this.now);
      this.buckets.set(k, b);
    }
    return b;
  }

  /** Throttles a whole subscription for `seconds` (a world event). */
  throttleSubscription(subscription: string, seconds: number): void {
    this.forced.set(subscription.toLowerCase(), this.now() + seconds * 1000);
  }

  /**
   * Charges one request. `regionPolicies` are charged against subscription+region, `scaleSet` (if given)
   * against the scale set's own budget. Nothing is charged when any bucket is empty.
   */
  charge(subscription: string, region: string, regionPolicies: PolicyName[], scaleSet?: string): ThrottleResult {
    const sub = subscription.toLowerCase();
    const charged: [string, Bucket][] = [
      ...regionPolicies.map((p): [string, Bucket] => [p, this.bucket(`${sub}|${region.toLowerCase()}`, p)]),
      ...(scaleSet
        ? [
            ['GetVMScaleSet3Min', this.bucket(`${sub}|${scaleSet.toLowerCase()}`, 'GetVMScaleSet3Min')] as [
              string,
              Bucket,
            ],
          ]
        : []),
    ];
    const reads = this.bucket(sub, 'SubscriptionReads');
    const forcedUntil = this.forced.get(sub) ?? 0;
    const reported = charged.filter(([p]) => !UNREPORTED.has(p));
    const headers = (): Record<string, string> => ({
      'x-ms-ratelimit-remaining-subscription-reads': String(reads.remaining()),
      ...(reported.length
        ? {
            'x-ms-ratelimit-remaining-resource': reported
              .map(([p, b]) => `Microsoft.Compute/${p};${b.remaining()}`)
              .join(','),
          }
        : {}),
    });
    if (forcedUntil > this.now()) {
      return {
        allowed: false,
        retryAfterSeconds: Math.ceil((forcedUntil - this.now()) / 1000),
        policy: 'HighCostGetVMScaleSet3Min',
        headers: headers(),
      };
    }
    for (const [p, b] of [...charged, ['SubscriptionReads', reads] as [string, Bucket]]) {
      const wait = b.waitSeconds();
      if (wait > 0) return { allowed: false, retryAfterSeconds: wait, policy: p, headers: headers() };
    }
    for (const [, b] of charged) b.take();
    reads.take();
    return { allowed: true, retryAfterSeconds: 0, headers: headers() };
  }
}
