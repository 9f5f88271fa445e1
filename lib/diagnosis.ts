// The diagnosis: ordered findings in plain words for one pool, from its model and drift
// (docs/domain.md, "Operator scenarios"). Each finding is a rule of its own (./findings/rules); this runs them,
// settles since when each holds, escalates a warning that lasts, and orders them, worst first.
// Each finding says what is wrong, the evidence, since when (when known) and what an operator can do.

import type { DriftItem, Finding, FindingCode } from './api-types';
import { SEVERITY_RANK } from './api-types';
import { formatDuration } from './format';
import type { JoinedId } from './join';
import type { PoolModel } from './pool-model';
import { toMs } from './unstructured';
import { contextOf, type DiagnosisOptions, type Draft } from './findings/context';
import { FINDING_ORDER, rulesFor } from './findings/rules';

/**
 * A finding's summary as of `now`: the stored summary has no duration (it would change every second), so the
 * freeze's length is put in when it is shown — "frozen for 14 min: …".
 */
export function headline(f: Pick<Finding, 'code' | 'summary' | 'since'>, now: string): string {
  const since = toMs(f.since ?? null);
  const nowMs = toMs(now);
  if (f.code !== 'readiness-gate-frozen' || since === null || nowMs === null) return f.summary;
  return f.summary.replace(
    /^MachinePool providerIDList frozen:/,
    `MachinePool providerIDList frozen for ${formatDuration(nowMs - since)}:`,
  );
}

/** A pool summary's worst finding as {@link headline} says it, with its `since` from the summary's active findings. */
export function worstHeadline(
  worst: Pick<Finding, 'code' | 'summary'>,
  active: readonly { code: string; since: string | null }[] | undefined,
  now: string,
): string {
  const since = active?.find((f) => f.code === worst.code)?.since ?? undefined;
  return headline({ ...worst, ...(since ? { since } : {}) }, now);
}

/**
 * A finding that is a warning for `warnFor` from its start, then critical. Without a known start it counts from
 * now: the next analysis that knows one decides.
 */
function escalated(f: Finding, warnFor: number, nowMs: number): Finding {
  const start = toMs(f.since ?? null) ?? nowMs;
  if (nowMs - start >= warnFor) return { ...f, severity: 'critical' };
  return { ...f, severity: 'warning', criticalFrom: new Date(start + warnFor).toISOString() };
}

/** Each rule's draft, those that read the others' findings after them. */
function drafts(c: ReturnType<typeof contextOf>): Draft[] {
  const out: Draft[] = [];
  const found = new Set<FindingCode>();
  for (const pass of [false, true])
    for (const rule of rulesFor(c.model.flavour)) {
      if ((rule.afterOthers === true) !== pass) continue;
      const d = rule.find(c, found);
      if (d) {
        out.push(d);
        found.add(d.code);
      }
    }
  return out;
}

export function diagnose(
  model: PoolModel,
  joined: readonly JoinedId[],
  drift: readonly DriftItem[],
  opts: DiagnosisOptions,
): Finding[] {
  const nowMs = toMs(opts.now) ?? 0;
  const prev = opts.previous ? new Map(opts.previous.map((f) => [f.code, f.since])) : null;
  const findings = drafts(contextOf(model, joined, drift, opts)).map(
    ({ derivedSince: told, warnFor, ...f }): Finding => {
      // A condition's time comes from the API server's clock: one ahead of poolscope's would date the finding in the
      // future ("frozen for 0 s" while it counts up to it); it started no later than now, when it was seen.
      const derivedSince = told !== undefined && (toMs(told) ?? -Infinity) > nowMs ? opts.now : told;
      let since: string | undefined;
      if (prev?.has(f.code)) since = prev.get(f.code) ?? derivedSince;
      else since = derivedSince ?? (prev ? opts.now : undefined);
      const found = since ? { ...f, since } : f;
      return warnFor === undefined ? found : escalated(found, warnFor, nowMs);
    },
  );
  return findings.sort(
    (a, b) =>
      SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] ||
      FINDING_ORDER.indexOf(a.code) - FINDING_ORDER.indexOf(b.code),
  );
}
