// The dashboard's URL is its state: fleet filters and sort, a pool page's time range and `at` instant. A link
// GET /api/pools would refuse, the fleet page refuses before it reads filters here (server/http/api-schemas
// fleetParamsProblem); a malformed, impossible or future instant or range is an error the pool page shows.

import type { PoolFlavour, PoolSummary, Severity } from './api-types';
import { goneSince, INFRA_KINDS, SEVERITY_RANK } from './api-types';

export type Params = Record<string, string | string[] | undefined> | URLSearchParams;

function one(p: Params, key: string): string | undefined {
  const v = p instanceof URLSearchParams ? (p.get(key) ?? undefined) : p[key];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s.trim() === '' ? undefined : s.trim();
}

export const SORT_KEYS = [
  'pool',
  'context',
  'namespace',
  'cluster',
  'state',
  'drift',
  'finding',
  'desired',
  'lastChange',
] as const;
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
  /** Only pools of this flavour (the infra kind behind the MachinePool). */
  kind?: PoolFlavour;
  sort: SortKey;
  desc: boolean;
  /** The page's own: pools grouped by management cluster (kubeconfig context) or workload cluster. Not an API filter. */
  group?: FleetGroup;
}

export const FLEET_GROUPS = ['context', 'cluster'] as const;
export type FleetGroup = (typeof FLEET_GROUPS)[number];

const truthy = (v: string | undefined) => v === '1' || v === 'true';

export const SEVERITIES = ['critical', 'warning', 'info'] as const satisfies readonly Severity[];

export const FLAVOURS = ['self-managed', 'aks-managed', 'aks-aso'] as const satisfies readonly PoolFlavour[];

/** Each flavour in a few words, and the infra kind behind it. */
export const FLAVOUR_LABELS: Record<PoolFlavour, { short: string; kind: string }> = {
  'self-managed': { short: 'Self-managed', kind: INFRA_KINDS['self-managed'].kind },
  'aks-managed': { short: 'AKS', kind: INFRA_KINDS['aks-managed'].kind },
  'aks-aso': { short: 'AKS (ASO)', kind: INFRA_KINDS['aks-aso'].kind },
};

/** A summary's flavour: one stored before flavours were is self-managed. */
export const flavourOf = (p: Pick<PoolSummary, 'flavour'>): PoolFlavour => p.flavour ?? 'self-managed';

export function parseFleetParams(p: Params): FleetFilters {
  const rawSort = one(p, 'sort') ?? 'finding';
  const desc = rawSort.startsWith('-');
  const key = (desc ? rawSort.slice(1) : rawSort) as SortKey;
  const sort = (SORT_KEYS as readonly string[]).includes(key) ? key : 'finding';
  const out: FleetFilters = {
    drifting: truthy(one(p, 'drifting')),
    notReady: truthy(one(p, 'notReady')),
    deleted: truthy(one(p, 'deleted')),
    sort,
    desc: sort === key ? desc : false,
  };
  const context = one(p, 'context');
  const namespace = one(p, 'namespace');
  const q = one(p, 'q');
  // An unknown sort or severity falls back to the default here; the page has already refused such a link.
  const severity = SEVERITIES.find((s) => s === one(p, 'severity'));
  const group = FLEET_GROUPS.find((g) => g === one(p, 'group'));
  const kind = FLAVOURS.find((k) => k === one(p, 'kind'));
  if (context) out.context = context;
  if (namespace) out.namespace = namespace;
  if (q) out.q = q;
  if (severity) out.severity = severity;
  if (kind) out.kind = kind;
  if (group) out.group = group;
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
  if (f.kind) u.set('kind', f.kind);
  if (f.sort !== 'finding' || f.desc) u.set('sort', `${f.desc ? '-' : ''}${f.sort}`);
  if (f.group) u.set('group', f.group);
  return u.toString();
}

const driftTotal = (p: PoolSummary): number => Object.values(p.driftCounts).reduce((a, b) => a + (b ?? 0), 0);
const severity = (p: PoolSummary): number =>
  p.worstFinding ? SEVERITY_RANK[p.worstFinding.severity as Severity] + 1 : 0;

/** 2 when a pool shows a finding but `healthy`, plus 1 when its AzureMachinePool is not ready (unknown is not). */
const attention = (p: PoolSummary): number =>
  (p.worstFinding && p.worstFinding.code !== 'healthy' ? 2 : 0) + (p.ampReady === false ? 1 : 0);

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
  const out = pools.filter(
    (p) =>
      (!f.context || p.ref.context === f.context) &&
      (!f.namespace || p.ref.namespace === f.namespace) &&
      (!f.drifting || driftTotal(p) > 0) &&
      (!f.notReady || p.ampReady !== true) &&
      (f.deleted || !goneSince(p)) &&
      (!f.kind || flavourOf(p) === f.kind) &&
      hasSeverity(p, f.severity) &&
      (!q ||
        [p.ref.context, p.ref.namespace, p.ref.name, p.clusterName ?? '', p.worstFinding?.summary ?? ''].some((s) =>
          s.toLowerCase().includes(q),
        )),
  );
  const cmp = SORTERS[f.sort];
  return out.sort((a, b) => (f.desc ? -cmp(a, b) : cmp(a, b)) || collator.compare(a.key, b.key));
}

/** Whether a pool's worst finding has the severity asked for (any pool, when none is). */
export function hasSeverity(p: PoolSummary, severity: Severity | undefined): boolean {
  return !severity || p.worstFinding?.severity === severity;
}

/**
 * The filters the fleet page reads GET /api/pools with: without the severity, since the page filters by severity
 * itself (so that it counts every severity among the pools, its tally, and a click on one shows them at once), and
 * without the grouping, which is the page's alone.
 */
export function withoutSeverity(f: FleetFilters): FleetFilters {
  const { severity: _severity, group: _group, ...rest } = f;
  return rest;
}

/** How many pools have each severity as their worst finding's, and how many have no finding (`none`). */
/** Pools by their worst finding's severity; `healthy` counts those of `info` whose worst finding is `healthy`. */
export function severityCounts(pools: readonly PoolSummary[]): Record<Severity | 'none' | 'healthy', number> {
  const out = { critical: 0, warning: 0, info: 0, none: 0, healthy: 0 };
  for (const p of pools) {
    out[p.worstFinding?.severity ?? 'none']++;
    if (p.worstFinding?.code === 'healthy') out.healthy++;
  }
  return out;
}

// ---------------- time range ----------------

export const RANGES = {
  '1h': 3_600_000,
  '6h': 6 * 3_600_000,
  '24h': 86_400_000,
  '7d': 7 * 86_400_000,
  '30d': 30 * 86_400_000,
} as const;
export type RangeName = keyof typeof RANGES;
export const DEFAULT_RANGE: RangeName = '6h';

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-](\d{2}):(\d{2}))$/i;

/** Whether `s` names a range: an own key of RANGES, never an inherited one such as `toString` or `__proto__`. */
function isRangeName(s: string): s is RangeName {
  return Object.hasOwn(RANGES, s);
}

export const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
export const daysIn = (year: number, month: number): number =>
  month === 2
    ? year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
      ? 29
      : 28
    : [4, 6, 9, 11].includes(month)
      ? 30
      : 31;

export type InstantResult = { ok: true; iso: string } | { ok: false; error: string };

/**
 * Reads an RFC 3339 instant as a canonical UTC ISO string. A date or time that does not exist (2026-02-30, 25:00,
 * an offset of +24:00) is an error saying so: JavaScript's Date would roll it over into another instant.
 */
export function readInstant(s: string, example = '2026-11-29T10:15:00Z'): InstantResult {
  const m = RFC3339.exec(s);
  if (!m) return { ok: false, error: `must be an RFC 3339 instant such as ${example}` };
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12)
    return {
      ok: false,
      error: `names a month that does not exist (${String(month).padStart(2, '0')}; months run 01 to 12)`,
    };
  if (day < 1 || day > daysIn(year, month))
    return {
      ok: false,
      error: `names a day that does not exist (${MONTHS[month - 1]} ${year} has ${daysIn(year, month)} days)`,
    };
  if (hour > 23 || minute > 59 || second > 59)
    return {
      ok: false,
      error: 'names a time of day that does not exist (hours run 00 to 23, minutes and seconds 00 to 59)',
    };
  if (Number(m[9] ?? 0) > 23 || Number(m[10] ?? 0) > 59)
    return { ok: false, error: 'has a UTC offset that does not exist (at most ±23:59)' };
  const t = Date.parse(s);
  return Number.isNaN(t)
    ? { ok: false, error: `must be an RFC 3339 instant such as ${example}` }
    : { ok: true, iso: new Date(t).toISOString() };
}

/** Parses an RFC 3339 instant to a canonical UTC ISO string, or null (readInstant says why). */
export function parseInstant(s: string | undefined): string | null {
  if (s === undefined) return null;
  const r = readInstant(s);
  return r.ok ? r.iso : null;
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
const MAX_WINDOW_MS = RANGES['30d'] + 86_400_000;

/** How far past "now" an `at` may be and still be taken for now: clocks of browser and server differ a little. */
const CLOCK_SKEW_MS = 60_000;

/** Why an `at` instant cannot be shown, or null: a state that has not happened yet has nothing to show. */
export function futureAtError(at: string, now: number): string | null {
  if (Date.parse(at) <= now + CLOCK_SKEW_MS) return null;
  return `${at} is in the future (it is now ${new Date(now).toISOString()}): poolscope shows a pool as it is or was, not as it will be`;
}

export type WindowResult = { ok: true; window: TimeWindow } | { ok: false; error: string };

/**
 * The [from, to] of a window given by either end or both (each a canonical ISO instant): `to` defaults to `end`
 * (now, or `at`), `from` to the default range before `to`. Whatever was given, from must come before to and the
 * window span at most MAX_WINDOW_MS.
 */
export function explicitWindow(
  from: string | undefined,
  to: string | undefined,
  end: number,
): { ok: true; from: string; to: string } | { ok: false; error: string } {
  const t = to ?? new Date(end).toISOString();
  const f = from ?? new Date(Date.parse(t) - RANGES[DEFAULT_RANGE]).toISOString();
  if (f >= t)
    return { ok: false, error: `"from" (${f}) must be before "to" (${t}${to === undefined ? ', now' : ''}).` };
  if (Date.parse(t) - Date.parse(f) > MAX_WINDOW_MS)
    return {
      ok: false,
      error: `A time range can span at most 31 days; "from" (${f}) to "to" (${t}${to === undefined ? ', now' : ''}) spans more.`,
    };
  return { ok: true, from: f, to: t };
}

/** An instant parameter of a pool page's link, or the message saying what is wrong with it. */
function instantParam(p: Params, key: 'at' | 'from' | 'to', example: string): { value?: string; error?: string } {
  const raw = one(p, key);
  if (raw === undefined) return {};
  const r = readInstant(raw, example);
  return r.ok ? { value: r.iso } : { error: `"${key}" ${r.error}; got "${raw}".` };
}

/**
 * `?range=6h` (default) ending now, `?from=&to=` explicitly (either end alone too), and `?at=` for the state at an
 * instant (the range then ends at `at`). Errors say which parameter is wrong and what it expects.
 */
export function parseWindow(p: Params, now: number): WindowResult {
  const at = instantParam(p, 'at', '2026-11-29T10:15:00Z');
  if (at.error) return { ok: false, error: at.error };
  const future = at.value ? futureAtError(at.value, now) : null;
  if (future) return { ok: false, error: `"at": ${future}.` };
  const atIso = at.value ?? null;
  const from = instantParam(p, 'from', '2026-11-29T10:00:00Z');
  const to = instantParam(p, 'to', '2026-11-29T12:00:00Z');
  if (from.error || to.error) return { ok: false, error: (from.error ?? to.error) as string };
  if (one(p, 'from') !== undefined || one(p, 'to') !== undefined) {
    const w = explicitWindow(from.value, to.value, atIso ? Date.parse(atIso) : now);
    return w.ok ? { ok: true, window: { from: w.from, to: w.to, at: atIso, range: null } } : w;
  }
  const rangeRaw = one(p, 'range') ?? DEFAULT_RANGE;
  if (!isRangeName(rangeRaw))
    return { ok: false, error: `"range" must be one of ${Object.keys(RANGES).join(', ')}; got "${rangeRaw}".` };
  const end = atIso ? Date.parse(atIso) : now;
  return {
    ok: true,
    window: {
      from: new Date(end - RANGES[rangeRaw]).toISOString(),
      to: new Date(end).toISOString(),
      at: atIso,
      range: rangeRaw,
    },
  };
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

/**
 * The query of a window zoomed to `from`–`to` (whole seconds, outward): the instant shown stays when it is inside.
 */
export function zoomQuery(w: Pick<TimeWindow, 'at'>, from: string, to: string): string {
  const f = new Date(Math.floor(Date.parse(from) / 1000) * 1000).toISOString();
  const t = new Date(Math.ceil(Date.parse(to) / 1000) * 1000).toISOString();
  const at = w.at && w.at >= f && w.at <= t ? w.at : null;
  return windowQuery({ range: null, from: f, to: t, at });
}

/** The path of a pool page. */
export function poolPath(ref: { context: string; namespace: string; name: string }): string {
  return `/pools/${encodeURIComponent(ref.context)}/${encodeURIComponent(ref.namespace)}/${encodeURIComponent(ref.name)}`;
}
