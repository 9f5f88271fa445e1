// A source's health as data: how a report moves it (one outage is one, however its error reads), and a management
// cluster's, made up of its kinds' (and its API discovery's).

import type { SourceHealth } from '@/lib/api-types';

const DOWN = new Set<SourceHealth['state']>(['stale', 'error']);

/**
 * A source's health after a report of `state` (and `error`): the same object when nothing changed. `since` is when
 * the source entered its state, and one outage is one: moving between stale and error, or a new error text, keeps
 * the time the source went down.
 */
export function nextHealth(
  prev: SourceHealth,
  state: SourceHealth['state'],
  error?: string,
  now = new Date(),
): SourceHealth {
  if (prev.state === state && prev.error === error) return prev;
  const since = prev.state === state || (DOWN.has(prev.state) && DOWN.has(state)) ? prev.since : now.toISOString();
  const { error: _old, ...rest } = prev;
  return { ...rest, state, since, ...(error ? { error } : {}) };
}

/** The health of a management cluster's kinds (and of its API discovery), by kind. */
export class KindHealth {
  private readonly byKind = new Map<string, SourceHealth>();

  constructor(private readonly context: string) {}

  /** A management cluster's health that starts now. */
  private fresh(): SourceHealth {
    return {
      name: this.context,
      context: this.context,
      kind: 'management',
      state: 'starting',
      since: new Date().toISOString(),
    };
  }

  /** A kind (or discovery) that starts now. */
  starting(kind: string): void {
    this.byKind.set(kind, this.fresh());
  }

  delete(kind: string): void {
    this.byKind.delete(kind);
  }

  /** Records a kind's report (see nextHealth); whether its health changed. */
  report(kind: string, state: SourceHealth['state'], error?: string): boolean {
    const prev = this.byKind.get(kind) ?? this.fresh();
    const next = nextHealth(prev, state, error);
    if (next === prev) return false;
    this.byKind.set(kind, next);
    return true;
  }

  /**
   * The management cluster's health: its worst kind; while any is down, since the first went down, with that one's
   * error.
   */
  overall(): SourceHealth {
    const kinds = [...this.byKind.values()];
    const down = kinds.filter((h) => DOWN.has(h.state)).sort((a, b) => a.since.localeCompare(b.since));
    const first = down[0];
    const worst = first
      ? { ...first, state: down.some((h) => h.state === 'error') ? ('error' as const) : ('stale' as const) }
      : (kinds.find((h) => h.state === 'starting') ?? kinds[0]);
    return worst ?? this.fresh();
  }
}
