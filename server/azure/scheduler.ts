import 'server-only';
// When to read each scale set (docs/operations.md, "When a scale set is read"):
// - fast (≈15 s) while its pool is in motion, not ready or drifting, slow (≈2 min) when steady, jittered;
// - someone acting on the pool brings its read forward to now (once per MIN_GAP_MS); a controller's write only
//   moves it into the fast lane, so a pool whose status churns is not read at every write;
// - never more than a share of the remaining Compute budget per subscription+region over its 3-minute window,
//   spent evenly: half of it may go at once (a start's first reads, a quiet region's reads as they come); past that,
//   what is left is spread over the time until the window's oldest read leaves it, so a busy region never spends it
//   all at once and then reads nothing for minutes; the longest due first;
// - nothing for a whole subscription+region until Retry-After has passed after a 429.

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
const REGIONAL_POLICY = /^(HighCost\w*3Min|VMScaleSetVMViews3Min)$/;

/**
 * The scarce budget: each read costs one high-cost VMSS GET (the VM list draws on the far larger
 * VMScaleSetVMViews3Min). Before the first answer, the commonly observed 190 per 3 minutes is assumed.
 */
const GATING_POLICY = 'HighCostGetVMScaleSet3Min';
const ASSUMED_REMAINING = 190;

/** An urgent change reads a scale set at once, but not again within this of its last read. */
const MIN_GAP_MS = 5000;

interface Entry {
  id: string;
  /** `${subscription}|${region}`, or `${subscription}|?` before the region is known. */
  budgetKey: string;
  nextAt: number;
  fast: boolean;
  /** When its last read was recorded (-Infinity before the first). */
  lastAt: number;
}

/** When a scale set will be read, as far as the scheduler can tell, and what it waits for. */
export interface ReadPlan {
  at: number;
  /** interval: its lane's period; budget: its region's Compute read budget; throttled: Retry-After after a 429. */
  waitingFor: 'interval' | 'budget' | 'throttled';
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

  /** The fast lane's period (s): how often a moving pool's scale set is read at most. */
  get fastSeconds(): number {
    return this.opts.fastSeconds;
  }

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
    this.entries.set(id, {
      id,
      budgetKey: `${subscription.toLowerCase()}|${region ? region.toLowerCase() : '?'}`,
      nextAt: now,
      fast: true,
      lastAt: -Infinity,
    });
  }

  untrack(id: string): void {
    this.entries.delete(id);
  }

  tracked(): string[] {
    return [...this.entries.keys()];
  }

  /**
   * A Kubernetes change to the pool: into the fast lane. Someone acting on it (`urgent`: its spec, annotations,
   * labels or deletion) reads it at once, or MIN_GAP_MS after its last read; a controller's write (status, the
   * lists) no sooner than a fast period after its last read: a pool in motion is written many times a second.
   */
  expedite(id: string, now: number, urgent = true): void {
    const e = this.entries.get(id);
    if (!e) return;
    e.fast = true;
    e.nextAt = Math.min(e.nextAt, Math.max(now, e.lastAt + (urgent ? MIN_GAP_MS : this.opts.fastSeconds * 1000)));
  }

  /** Forgets the budget's calls that left its window. */
  private prune(b: Budget, now: number): void {
    const window = (this.opts.windowSeconds ?? 180) * 1000;
    if (b.calls.some((t) => now - t >= window)) b.calls = b.calls.filter((t) => now - t < window);
  }

  /** Calls a budget allows per window: the share of what it had before our own calls in the window. */
  private share(b: Budget): number {
    const budget =
      b.remaining === null ? ASSUMED_REMAINING : b.remaining + Math.min(b.ownAtObservation, b.calls.length);
    return Math.max(1, Math.floor(this.opts.budgetShare * budget));
  }

  private windowMs(): number {
    return (this.opts.windowSeconds ?? 180) * 1000;
  }

  /**
   * When the budget (pruned) allows its next call: now, or later. Never more than the share in a window; under half
   * of it used, at once; past that, what is left spread evenly until the window's oldest call leaves it.
   */
  private nextSlot(b: Budget, now: number): number {
    if (b.blockedUntil > now) return b.blockedUntil;
    const n = this.share(b);
    const count = b.calls.length;
    if (count >= n) return (b.calls[count - n] as number) + this.windowMs();
    if (count < Math.ceil(n / 2)) return now;
    const oldest = b.calls[0] as number;
    const last = b.calls[count - 1] as number;
    // The calls left, and one more for when the oldest leaves: evenly apart over the time until then.
    return Math.max(now, last + (oldest + this.windowMs() - last) / (n - count + 1));
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
      if (this.nextSlot(b, now) > now) {
        spent.add(b);
        continue;
      }
      for (let i = 0; i < calls; i++) b.calls.push(now);
      out.push(e.id);
    }
    return out;
  }

  /** Records a read's outcome: its region, the budget headers, throttling, and when to read next. */
  record(
    id: string,
    now: number,
    r: {
      region?: string;
      remaining?: Record<string, number>;
      retryAfterSeconds?: number | null;
      throttled?: boolean;
      fast: boolean;
      extraCalls?: number;
      /** When to read it next, in place of its lane's period (a read with a rhythm of its own). */
      afterSeconds?: number;
    },
  ): void {
    const e = this.entries.get(id);
    if (!e) return;
    if (r.region && e.budgetKey.endsWith('|?')) e.budgetKey = `${e.budgetKey.slice(0, -1)}${r.region.toLowerCase()}`;
    const b = this.budget(e.budgetKey);
    for (let i = 0; i < (r.extraCalls ?? 0); i++) b.calls.push(now);
    // The subscription+region budget is what the region-wide 3-minute policies have left; per-resource
    // policies (e.g. GetVMScaleSet3Min) and ARM's subscription reads are not shared by the whole region.
    const rem = r.remaining ?? {};
    const regional = Object.entries(rem)
      .filter(([k]) => REGIONAL_POLICY.test(k))
      .map(([, v]) => v);
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
    e.lastAt = now;
    e.nextAt = now + this.jitter(r.afterSeconds ?? (r.fast ? this.opts.fastSeconds : this.opts.slowSeconds));
  }

  /**
   * When a scale set is to be read next and what it waits for (null when not tracked): its lane's time, its
   * region's Retry-After, or — due, but its budget spent — its turn among the due scale sets of its budget
   * (the longest due first), a slot apart each.
   */
  plan(id: string, now: number): ReadPlan | null {
    const e = this.entries.get(id);
    if (!e) return null;
    const b = this.budget(e.budgetKey);
    this.prune(b, now);
    if (b.blockedUntil > now && b.blockedUntil >= e.nextAt) return { at: b.blockedUntil, waitingFor: 'throttled' };
    const slot = this.nextSlot(b, Math.max(now, e.nextAt));
    if (e.nextAt > now && slot <= e.nextAt) return { at: e.nextAt, waitingFor: 'interval' };
    let ahead = 0;
    for (const o of this.entries.values()) {
      if (
        o !== e &&
        o.budgetKey === e.budgetKey &&
        o.nextAt <= Math.max(now, e.nextAt) &&
        (o.nextAt < e.nextAt || (o.nextAt === e.nextAt && o.id < e.id))
      )
        ahead++;
    }
    // Those due before it go first, about a window ÷ share apart.
    const at = slot + ahead * (this.windowMs() / this.share(b));
    return at <= now ? { at: now, waitingFor: 'interval' } : { at, waitingFor: 'budget' };
  }

  /** Budget state per subscription+region, for the source bar and metrics. */
  budgetsView(
    now: number,
  ): { key: string; remaining: number | null; callsInWindow: number; blockedUntil: string | null }[] {
    return [...this.budgets.entries()].map(([key, b]) => ({
      key,
      remaining: b.remaining,
      callsInWindow: b.calls.filter((t) => now - t < (this.opts.windowSeconds ?? 180) * 1000).length,
      blockedUntil: b.blockedUntil > now ? new Date(b.blockedUntil).toISOString() : null,
    }));
  }
}
