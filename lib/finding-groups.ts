// Findings that share a cause, as one headline with its evidence: the list is frozen because the scale set is
// Failed, because an instance failed (Finding.cause links each to the one it follows from).

import type { Finding } from './api-types';

export interface FindingGroup {
  /** The finding the group is headed by: the one no other finding of the pool follows from. */
  head: Finding;
  /** What it follows from, in order: its cause, that one's cause, and so on (the root cause last). */
  because: Finding[];
}

/** The pool's findings as groups, in the findings' order (worst first), each finding in one group only. */
export function groupFindings(findings: readonly Finding[]): FindingGroup[] {
  const byCode = new Map(findings.map((f) => [f.code, f]));
  const causes = new Set(findings.flatMap((f) => (f.cause && byCode.has(f.cause) ? [f.cause] : [])));
  const placed = new Set<string>();
  const groups: FindingGroup[] = [];
  for (const head of findings) {
    if (causes.has(head.code) || placed.has(head.code)) continue;
    placed.add(head.code);
    const because: Finding[] = [];
    for (let c = head.cause && byCode.get(head.cause); c && !placed.has(c.code); c = c.cause && byCode.get(c.cause)) {
      placed.add(c.code);
      because.push(c);
    }
    groups.push({ head, because });
  }
  // A finding only ever named as a cause in a loop (a → b → a) still gets shown.
  for (const f of findings) if (!placed.has(f.code)) groups.push({ head: f, because: [] });
  return groups;
}
