// The dashboard's URL is its state: fleet filters and sort, a pool page's time range and `at` instant. Parsing
// is lenient where a link may be old (an unknown sort falls back to the default) and strict where a wrong
// value would show the wrong moment (a malformed `at` or range is an error the page shows).

import type { PoolSummary, Severity } from './api-types';
import { goneSince, SEVERITY_RANK } from './api-types';

export type Params = Record<string, string | string[] | undefined> | URLSearchParams;

function one(p: Params, key: string): string | undefined {
  const v = p instanceof URLSearchParams ? (p.get(key) ?? undefined) : p[key];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s.trim() === '' ? undefined : s.trim();
}

export const SORT_KEYS = ['pool', 'context', 'namespace', 'cluster', 'state', 'drift', 'finding', 'desired', 'lastChange'] as const;
export type SortKey = (typeof SORT_KEYS)[number];

export interface FleetFilters {
  context?: string;
  namespace?: string;
  /** Only pools with drift. */
  drifting: boolean;
  /** Only pools whose AzureMachinePool is not ready. */
  notReady: boolean;
  /** Deleted and unwatched pools too (kept until retention passes that); hidden by default. */
  deleted: boolean;
  /** Free text matched against context, namespace, cluster and pool names and the worst finding. */
  q?: string;
  /** Only pools whose worst finding has this severity. */
  severity?: Severity;
  sort: SortKey;
  desc: boolean;
}

const truthy = (v: string | undefined) => v === '1' || v === 'true';

export const SEVERITIES = ['critical', 'warning', 'info'] as const satisfies readonly Severity[];

export function parseFleetParams(p: Params): FleetFilters {
  const rawSort = one(p, 'sort') ?? 'finding';
  const desc = rawSort.startsWith('-');
  const key = (desc ? rawSort.slice(1) : rawSort) as SortKey;
  const sort = (SORT_KEYS as readonly string[]).includes(key) ? key : 'finding';
  const out: FleetFilters = { drifting: truthy(one(p, 'drifting')), notReady: truthy(one(p, 'notReady')), deleted: truthy(one(p, 'deleted')), sort, desc: sort === key ? desc : false };
  const context = one(p, 'context');
  const namespace = one(p, 'namespace');
  const q = one(p, 'q');
  // An unknown severity (an old or edited link) filters nothing, as an unknown sort sorts by the default.
  const severity = SEVERITIES.find((s) => s === one(p, 'severity'));
  if (context) out.context = context;
  if (namespace) out.namespace = namespace;
  if (q) out.q = q;
  if (severity) out.severity = severity;
  return out;
}

/** The query string for filters (without `?`), omitting defaults so links stay short. */
export function fleetQuery(f: FleetFilters): string {
  const u = new URLSearchParams();
  if (f.context) u.set('context', f.context);
  if (f.namespace) u.set('namespace', f.namespace);
  if (f.drifting) u.set('drifting', '1');
  if (f.notReady) u.set('notReady', '1');
  if (f.deleted) u.set('deleted', '1');
  if (f.q) u.set('q', f.q);
  if (f.severity) u.set('severity', f.severity);
  if (f.sort !== 'finding' || f.desc) u.set('sort', `${f.desc ? '-' : ''}${f.sort}`);
  return u.toString();
}

export const driftTotal = (p: PoolSummary): number => Object.values(p.driftCounts).reduce((a, b) => a + (b ?? 0), 0);
const severity = (p: PoolSummary): number => (p.worstFinding ? SEVERITY_RANK[p.worstFinding.severity as Severity] + 1 : 0);

/** 2 when a pool shows a finding but `healthy`, plus 1 when its AzureMachinePool is not ready (unknown is not). */
const attention = (p: PoolSummary): number => (p.worstFinding && p.worstFinding.code !== 'healthy' ? 2 : 0) + (p.ampReady === false ? 1 : 0);

const collator = new Intl.Collator('en', { numeric: true });
const SORTERS: Record<SortKey, (a: PoolSummary, b: PoolSummary) => number> = {
  pool: (a, b) => collator.compare(a.ref.name, b.ref.name),
  context: (a, b) => collator.compare(a.ref.context, b.ref.context),
  namespace: (a, b) => collator.compare(a.ref.namespace, b.ref.namespace),
  cluster: (a, b) => collator.compare(a.clusterName ?? '', b.clusterName ?? ''),
  state: (a, b) => collator.compare(a.provisioningState ?? '', b.provisioningState ?? ''),
  drift: (a, b) => driftTotal(a) - driftTotal(b),
  // Worst first is what an operator wants by default: "finding" ascending means most severe on top. Within a
  // severity, a pool that needs a look (a finding but `healthy`, its AzureMachinePool not ready, the most drift)
  // before one that does not: a not-ready pool drifting in six places is no healthy pool's equal because both
  // findings say `info`.
  finding: (a, b) => severity(b) - severity(a) || attention(b) - attention(a) || driftTotal(b) - driftTotal(a),
  desired: (a, b) => (a.replicas.desired ?? -1) - (b.replicas.desired ?? -1),
  lastChange: (a, b) => collator.compare(a.lastChange ?? '', b.lastChange ?? ''),
};

/** Filters and sorts the fleet; ties keep key order so the table does not jump. */
export function selectPools(pools: readonly PoolSummary[], f: FleetFilters): PoolSummary[] {
  const q = f.q?.toLowerCase();
  const out = pools.filter((p) =>
    (!f.context || p.ref.context === f.context)
    && (!f.namespace || p.ref.namespace === f.namespace)
    && (!f.drifting || driftTotal(p) > 0)
    && (!f.notReady || p.ampReady !== true)
    && (f.deleted || !goneSince(p))
    && hasSeverity(p, f.severity)
    && (!q || [p.ref.context, p.ref.namespace, p.ref.name, p.clusterName ?? '', p.worstFinding?.summary ?? ''].some((s) => s.toLowerCase().includes(q))));
  const cmp = SORTERS[f.sort];
  return out.sort((a, b) => (f.desc ? -cmp(a, b) : cmp(a, b)) || collator.compare(a.key, b.key));
}

/** Whether a pool's worst finding has the severity asked for (any pool, when none is). */
export function hasSeverity(p: PoolSummary, severity: Severity | undefined): boolean {
  return !severity || p.worstFinding?.severity === severity;
}

/**
 * The filters without the severity: the fleet page reads the pools matching the others and filters by severity
 * itself, so that it can count every severity among them (its tally) and a click on one shows them at once.
 */
export function withoutSeverity(f: FleetFilters): FleetFilters {
  const { severity: _severity, ...rest } = f;
  return rest;
}

/** How many pools have each severity as their worst finding's, and how many have no finding (`none`). */
export function severityCounts(pools: readonly PoolSummary[]): Record<Severity | 'none', number> {
  const out = { critical: 0, warning: 0, info: 0, none: 0 };
  for (const p of pools) out[p.worstFinding?.severity ?? 'none']++;
  return out;
}

// ---------------- time range ----------------

export const RANGES = { '1h': 3_600_000, '6h': 6 * 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 } as const;
export type RangeName = keyof typeof RANGES;
export const DEFAULT_RANGE: RangeName = '6h';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/** Parses an RFC 3339 instant to a canonical UTC ISO string, or null. */
export function parseInstant(s: string | undefined): string | null {
  if (!s || !RFC3339.test(s)) return null;
  const t = Date.parse(s);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

export interface TimeWindow {
  from: string;
  to: string;
  /** The instant shown, when the link points at the past (`?at=`). */
  at: string | null;
  /** A named range, or null for an explicit from/to. */
  range: RangeName | null;
}

/** The longest window a timeline may span (30 days and a day of slack for explicit from/to). */
export const MAX_WINDOW_MS = RANGES['30d'] + 86_400_000;

export type WindowResult = { ok: true; window: TimeWindow } | { ok: false; error: string };

/**
 * `?range=6h` (default) ending now, `?from=&to=` explicitly, and `?at=` for the state at an instant (the range
 * then ends at `at`). Errors say which parameter is wrong and what it expects.
 */
export function parseWindow(p: Params, now: number): WindowResult {
  const atRaw = one(p, 'at');
  const at = atRaw === undefined ? null : parseInstant(atRaw);
  if (atRaw !== undefined && at === null) return { ok: false, error: `"at" must be an RFC 3339 instant such as 2026-11-29T10:15:00Z; got "${atRaw}".` };
  const fromRaw = one(p, 'from');
  const toRaw = one(p, 'to');
  if (fromRaw !== undefined || toRaw !== undefined) {
    const from = parseInstant(fromRaw);
    const to = toRaw === undefined ? (at ?? new Date(now).toISOString()) : parseInstant(toRaw);
    if (from === null) return { ok: false, error: `"from" must be an RFC 3339 instant such as 2026-11-29T10:00:00Z; got "${fromRaw ?? ''}".` };
    if (to === null) return { ok: false, error: `"to" must be an RFC 3339 instant such as 2026-11-29T12:00:00Z; got "${toRaw}".` };
    if (from >= to) return { ok: false, error: `"from" (${from}) must be before "to" (${to}).` };
    if (Date.parse(to) - Date.parse(from) > MAX_WINDOW_MS) return { ok: false, error: 'A time range can span at most 31 days.' };
    return { ok: true, window: { from, to, at, range: null } };
  }
  const rangeRaw = one(p, 'range') ?? DEFAULT_RANGE;
  if (!(rangeRaw in RANGES)) return { ok: false, error: `"range" must be one of ${Object.keys(RANGES).join(', ')}; got "${rangeRaw}".` };
  const range = rangeRaw as RangeName;
  const end = at ? Date.parse(at) : now;
  return { ok: true, window: { from: new Date(end - RANGES[range]).toISOString(), to: new Date(end).toISOString(), at, range } };
}

/** The query string of a pool page's window (without `?`). */
export function windowQuery(w: Pick<TimeWindow, 'range' | 'from' | 'to' | 'at'>): string {
  const u = new URLSearchParams();
  if (w.range) {
    if (w.range !== DEFAULT_RANGE) u.set('range', w.range);
  } else {
    u.set('from', w.from);
    u.set('to', w.to);
  }
  if (w.at) u.set('at', w.at);
  return u.toString();
}

/** The path of a pool page. */
export function poolPath(ref: { context: string; namespace: string; name: string }): string {
  return `/pools/${encodeURIComponent(ref.context)}/${encodeURIComponent(ref.namespace)}/${encodeURIComponent(ref.name)}`;
}
