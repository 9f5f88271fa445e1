// What changed between two analyses of a pool, as timeline entries: one per changed field — provisioning
// state, ready flags, phase, each condition, each replica counter, each list, drift items appearing and
// clearing, findings starting and ending. Nothing when nothing changed.

import { presence, type PoolDetail, type ReplicaCounts, type TimelineEntry } from './api-types';

const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** A PoolDetail with everything that only says *when* it was computed removed, for change detection. */
export function stableDetail(d: PoolDetail): Omit<PoolDetail, 'at'> {
  const { at: _at, ...rest } = d;
  return { ...rest, summary: { ...rest.summary, lastChange: null } };
}

export function sameDetail(a: PoolDetail, b: PoolDetail): boolean {
  return JSON.stringify(stableDetail(a)) === JSON.stringify(stableDetail(b));
}

export function diffDetails(prev: PoolDetail | null, next: PoolDetail, at: string): TimelineEntry[] {
  const poolKey = next.summary.key;
  const out: TimelineEntry[] = [];
  const add = (field: string, from: unknown, to: unknown, detail?: string) => {
    const f = str(from);
    const t = str(to);
    if (f !== t)
      out.push(detail ? { at, poolKey, field, from: f, to: t, detail } : { at, poolKey, field, from: f, to: t });
  };
  const p = prev?.summary;
  const n = next.summary;
  add('amp.provisioningState', p?.provisioningState, n.provisioningState);
  add('amp.ready', p?.ampReady, n.ampReady);
  add('mp.infrastructureReady', p?.mpInfrastructureReady, n.mpInfrastructureReady);
  add('mp.phase', p?.phase, n.phase);
  add('paused', p?.paused, n.paused);
  // The MachinePool deleted, or its context no longer watched (or back): only when either state says so.
  if (p && presence(p) !== presence(n)) add('pool', presence(p), presence(n));
  else if (!p && presence(n) !== 'present') add('pool', null, presence(n));
  for (const k of Object.keys(n.replicas) as (keyof ReplicaCounts)[])
    add(`replicas.${k}`, p?.replicas[k], n.replicas[k]);
  add(
    'list.mp',
    prev ? `${prev.lists.mp.count}:${prev.lists.mp.hash}` : null,
    `${next.lists.mp.count}:${next.lists.mp.hash}`,
  );
  add(
    'list.amp',
    prev?.lists.amp ? `${prev.lists.amp.count}:${prev.lists.amp.hash}` : null,
    next.lists.amp ? `${next.lists.amp.count}:${next.lists.amp.hash}` : null,
  );
  for (const [name, s] of Object.entries(next.sources))
    add(`source.${name}`, prev?.sources[name as keyof PoolDetail['sources']]?.state, s.state);

  // Conditions: the value is status/reason; the message goes along as detail.
  const condKey = (c: PoolDetail['conditions'][number]) => `condition.${c.source}.${c.type}`;
  const condVal = (c: PoolDetail['conditions'][number]) => `${c.status}${c.reason ? `/${c.reason}` : ''}`;
  const before = new Map((prev?.conditions ?? []).map((c) => [condKey(c), c]));
  const after = new Map(next.conditions.map((c) => [condKey(c), c]));
  for (const [k, c] of after)
    add(k, before.has(k) ? condVal(before.get(k) as typeof c) : null, condVal(c), c.message ?? undefined);
  for (const [k, c] of before) if (!after.has(k)) add(k, condVal(c), null);

  // Drift items and findings appear and clear.
  const prevDrift = new Set((prev?.drift ?? []).map((d) => d.key));
  const nextDrift = new Set(next.drift.map((d) => d.key));
  // An item is matched by its key, whose ID is lower-cased to join the sources; the entry names it by its kind
  // and the ID as a source spells it (Azure's first), since a change in case is itself a finding.
  const spelled = (d: PoolDetail['drift'][number]) => `${d.kind}:${d.providerID ?? ''}`;
  for (const d of next.drift) if (!prevDrift.has(d.key)) add('drift', null, spelled(d), d.summary);
  for (const d of prev?.drift ?? []) if (!nextDrift.has(d.key)) add('drift', spelled(d), null, d.summary);
  const prevFind = new Map((prev?.findings ?? []).map((f) => [f.code, f]));
  const nextFind = new Map(next.findings.map((f) => [f.code, f]));
  for (const [code, f] of nextFind) {
    const before2 = prevFind.get(code);
    if (!before2) add(`finding.${code}`, null, f.severity, f.summary);
    else if (before2.severity !== f.severity) add(`finding.${code}`, before2.severity, f.severity, f.summary);
    // Same severity, new evidence (e.g. a second failed instance): still a transition, with the new text.
    else if (before2.summary !== f.summary)
      out.push({ at, poolKey, field: `finding.${code}`, from: before2.severity, to: f.severity, detail: f.summary });
  }
  for (const [code, f] of prevFind) if (!nextFind.has(code)) add(`finding.${code}`, f.severity, null);
  return out;
}
