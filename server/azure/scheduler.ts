import 'server-only';
// When to read each scale set: fast (≈15 s) while its pool is in motion, not ready or drifting, slow (≈2 min)
// when steady, jittered; never more than a share of the remaining Compute budget per subscription+region; and
// nothing for a whole subscription+region until Retry-After has passed after a 429.

export interface SchedulerOptions {
  fastSeconds: number;
  slowSeconds: number;
  /** Share of the remaining budget poolscope may use (0–1). */
  budgetShare: number;
  /** The budget window the remaining counts refer to (s). */
  windowSeconds?: number;
  random?: () => number;
}

/** Compute throttling policies counted per subscription+region over a 3-minute window. */
export const REGIONAL_POLICY = /^(HighCost\w*3Min|VMScaleSetVMViews3Min)$/;

/**
 * The scarce budget: each read costs one high-cost VMSS GET (the VM list draws on the far larger
 * VMScaleSetVMViews3Min). Before the first answer, the commonly observed 190 per 3 minutes is assumed.
 */
export const GATING_POLICY = 'HighCostGetVMScaleSet3Min';
const ASSUMED_REMAINING = 190;

interface Entry {
  id: string;
  /** `${subscription}|${region}`, or `${subscription}|?` before the region is known. */
  budgetKey: string;
  nextAt: number;
  fast: boolean;
}

interface Budget {
  /** What the gating policy had left at the last response. */
  remaining: number | null;
  /** How many of our own calls in the window that remaining count already included. */
  ownAtObservation: number;
  calls: number[];
  blockedUntil: number;
}

export class Scheduler {
  private readonly entries = new Map<string, Entry>();
  private readonly budgets = new Map<string, Budget>();

  constructor(private readonly opts: SchedulerOptions) {}

  private jitter(seconds: number): number {
    const r = this.opts.random?.() ?? Math.random();
    return seconds * 1000 * (0.9 + 0.2 * r);
  }

  private budget(key: string): Budget {
    let b = this.budgets.get(key);
    if (!b) {
      b = { remaining: null, ownAtObservation: 0, calls: [], blockedUntil: 0 };
      this.budgets.set(key, b);
    }
    return b;
  }

  /**
   * Adds (or keeps) a scale set; new ones are due at once. `region` (the AzureMachinePool's location) puts it in
   * its subscription+region budget from the start; without it, it shares a cautious per-subscription budget
   * until its first read tells the region.
   */
  track(id: string, subscription: string, now: number, region?: string | null): void {
    const e = this.entries.get(id);
    if (e) {
      if (region && e.budgetKey.endsWith('|?')) e.budgetKey = `${e.budgetKey.slice(0, -1)}${region.toLowerCase()}`;
      return;
    }
    this.entries.set(id, { id, budgetKey: `${subscription.toLowerCase()}|${region ? region.toLowerCase() : '?'}`, nextAt: now, fast: true });
  }

  untrack(id: string): void {
    this.entries.delete(id);
  }

  tracked(): string[] {
    return [...this.entries.keys()];
  }

  /** A Kubernetes change to the pool: read its scale set at once and keep it in the fast lane. */
  expedite(id: string, now: number): void {
    const e = this.entries.get(id);
    if (e) {
      e.fast = true;
      e.nextAt = Math.min(e.nextAt, now);
    }
  }

  /** Forgets the budget's calls that left its window. */
  private prune(b: Budget, now: number): void {
    const window = (this.opts.windowSeconds ?? 180) * 1000;
    if (b.calls.some((t) => now - t >= window)) b.calls = b.calls.filter((t) => now - t < window);
  }

  /** Whether the budget (pruned) allows another call. */
  private allowed(b: Budget, now: number): boolean {
    if (b.blockedUntil > now) return false;
    // Our share is of the budget as it stood before our own calls in this window.
    const budget = b.remaining === null ? ASSUMED_REMAINING : b.remaining + Math.min(b.ownAtObservation, b.calls.length);
    return b.calls.length < Math.max(1, Math.floor(this.opts.budgetShare * budget));
  }

  /**
   * Scale sets due now whose budget allows a read, longest due first; each is counted as `calls` gating calls.
   * Runs every cycle over every scale set (a fleet's thousand, most of them due but out of budget while the fleet
   * churns): each budget is pruned once, and a budget found spent is not looked at again.
   */
  due(now: number, calls = 1): string[] {
    const ready: Entry[] = [];
    for (const e of this.entries.values()) if (e.nextAt <= now) ready.push(e);
    if (ready.length === 0) return [];
    ready.sort((a, b) => a.nextAt - b.nextAt);
    const seen = new Set<Budget>();
    const spent = new Set<Budget>();
    const out: string[] = [];
    for (const e of ready) {
      const b = this.budget(e.budgetKey);
      if (spent.has(b)) continue;
      if (!seen.has(b)) {
        seen.add(b);
        this.prune(b, now);
      }
      if (!this.allowed(b, now)) {
        spent.add(b);
        continue;
      }
      for (let i = 0; i < calls; i++) b.calls.push(now);
      out.push(e.id);
    }
    return out;
  }

  /** Records a read's outcome: its region, the budget headers, throttling, and when to read next. */
  record(id: string, now: number, r: { region?: string; remaining?: Record<string, number>; retryAfterSeconds?: number | null; throttled?: boolean; fast: boolean; extraCalls?: number }): void {
    const e = this.entries.get(id);
    if (!e) return;
    if (r.region && e.budgetKey.endsWith('|?')) e.budgetKey = `${e.budgetKey.slice(0, -1)}${r.region.toLowerCase()}`;
    const b = this.budget(e.budgetKey);
    for (let i = 0; i < (r.extraCalls ?? 0); i++) b.calls.push(now);
    // The subscription+region budget is what the region-wide 3-minute policies have left; per-resource
    // policies (e.g. GetVMScaleSet3Min) and ARM's subscription reads are not shared by the whole region.
    const rem = r.remaining ?? {};
    const regional = Object.entries(rem).filter(([k]) => REGIONAL_POLICY.test(k)).map(([, v]) => v);
    const observed = rem[GATING_POLICY] ?? (regional.length ? Math.min(...regional) : undefined);
    if (observed !== undefined) {
      b.remaining = observed;
      b.ownAtObservation = b.calls.filter((t) => now - t < (this.opts.windowSeconds ?? 180) * 1000).length;
    }
    if (r.throttled) {
      b.blockedUntil = Math.max(b.blockedUntil, now + (r.retryAfterSeconds ?? 60) * 1000);
      e.nextAt = b.blockedUntil;
      return;
    }
    e.fast = r.fast;
    e.nextAt = now + this.jitter(r.fast ? this.opts.fastSeconds : this.opts.slowSeconds);
  }

  /** Budget state per subscription+region, for the source bar and metrics. */
  budgetsView(now: number): { key: string; remaining: number | null; callsInWindow: number; blockedUntil: string | null }[] {
    return [...this.budgets.entries()].map(([key, b]) => ({
      key, remaining: b.remaining, callsInWindow: b.calls.filter((t) => now - t < (this.opts.windowSeconds ?? 180) * 1000).length,
      blockedUntil: b.blockedUntil > now ? new Date(b.blockedUntil).toISOString() : null,
    }));
  }
}
