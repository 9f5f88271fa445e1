// A pool that keeps going not ready and ready again (docs/domain.md, "AKS operator scenarios", K7): one analysis
// sees only the pool as it stands, so each carries the times its infra object went from ready to not ready within
// the last hour, taken over from the analysis before it. Two changes between one analysis and the next (not ready
// and ready again in between) count as none: the count is a floor.

/** The span the drops are counted over. */
const FLAP_WINDOW_MS = 60 * 60 * 1000;

/** This many drops within the span is a loop: ASO's hourly resync, a scale and an upgrade make one or two. */
export const FLAP_THRESHOLD = 6;

/** At most this many kept: enough to tell a loop, bounded however fast the pool flaps. */
const MAX_KEPT = 30;

/**
 * The drops to keep after an analysis at `now`: the previous ones still within the span, and one at `now` when the
 * infra object was ready at the previous analysis and is not now.
 */
export function readyDrops(
  previous: { ampReady: boolean | null; readyDrops?: readonly string[] } | null | undefined,
  ready: boolean | null,
  now: string,
): string[] {
  const nowMs = Date.parse(now);
  const kept = (previous?.readyDrops ?? []).filter((t) => {
    const ms = Date.parse(t);
    return Number.isFinite(ms) && nowMs - ms < FLAP_WINDOW_MS && ms <= nowMs;
  });
  if (previous?.ampReady === true && ready === false) kept.push(now);
  return kept.slice(-MAX_KEPT);
}
