// Turns a pool's state at the start of a range plus the transitions inside it into what the timeline draws:
// state lanes (each a run of periods), replica series (steps) and point markers (Events, resync actions).

import { INFRA_KINDS, type PoolDetail, type PoolFlavour, type ReplicaCounts, type TimelineEntry } from './api-types';

export interface LanePeriod {
  start: string;
  end: string;
  value: string;
  detail?: string;
  /** How many shorter periods this one merges (narrower than a pixel of the chart); `value` then says "N changes". */
  merged?: number;
}

export type LaneGroup = 'state' | 'condition' | 'finding';

export interface Lane {
  /** The transition field it follows, e.g. `amp.provisioningState`, `condition.amp.Ready`, `finding.vmss-failed`. */
  field: string;
  /** Its name in the chart; a finding begun more than once in the range says how often: `(3×)` (S12's flips). */
  label: string;
  group: LaneGroup;
  periods: LanePeriod[];
}

export type SeriesPoint = [at: string, value: number | null];

export interface TimelineMarker {
  at: string;
  kind: 'event' | 'resync';
  label: string;
  detail?: string;
}

export interface TimelineView {
  from: string;
  to: string;
  lanes: Lane[];
  series: Record<keyof ReplicaCounts, SeriesPoint[]>;
  markers: TimelineMarker[];
  /** Whether the state at `from` was known (false: the pool was first seen inside the range). */
  knownAtStart: boolean;
  /** The pool's flavour, which names some lanes and series (an AKS pool's capacity is AKS's count). */
  flavour?: PoolFlavour;
}

const STATE_LANES: { field: string; label: string; read: (d: PoolDetail) => unknown }[] = [
  {
    field: 'amp.provisioningState',
    label: 'AzureMachinePool provisioningState',
    read: (d) => d.summary.provisioningState,
  },
  { field: 'amp.ready', label: 'AzureMachinePool ready', read: (d) => d.summary.ampReady },
  { field: 'mp.phase', label: 'MachinePool phase', read: (d) => d.summary.phase },
  {
    field: 'mp.infrastructureReady',
    label: 'MachinePool infrastructure ready',
    read: (d) => d.summary.mpInfrastructureReady,
  },
  { field: 'paused', label: 'Paused', read: (d) => d.summary.paused },
];

export const REPLICA_SERIES: { key: keyof ReplicaCounts; label: string }[] = [
  { key: 'desired', label: 'Desired (MachinePool spec)' },
  { key: 'vmssCapacity', label: 'VMSS capacity' },
  { key: 'azureInstances', label: 'Azure instances' },
  { key: 'azureSucceeded', label: 'Azure Succeeded' },
  { key: 'azureFailed', label: 'Azure Failed' },
  { key: 'capz', label: 'CAPZ replicas' },
  { key: 'capi', label: 'CAPI replicas' },
  { key: 'readyNodes', label: 'Ready Nodes' },
];

/**
 * A replica series' label for the pool's flavour: an AKS pool's capacity is the agent pool's count as AKS reports it
 * (AKS sizes the node resource group's scale set to it).
 */
export function replicaLabel(key: string, flavour: PoolFlavour = 'self-managed'): string {
  if (key === 'vmssCapacity' && flavour !== 'self-managed') return 'AKS count';
  return REPLICA_SERIES.find((s) => s.key === key)?.label ?? key;
}

/** Who a condition's source is, in words: the infra object by its kind, ASO's agent pool, the MachinePool. */
export function conditionSourceWords(source: string | undefined, flavour: PoolFlavour = 'self-managed'): string {
  if (source === 'amp') return INFRA_KINDS[flavour].kind;
  return source === 'aso' ? 'ASO agent pool' : 'MachinePool';
}

/**
 * A state lane's label for the pool's flavour: the infra object's by its kind; an AKS pool's provisioning state is
 * its agent pool's (AKS's, or ASO's copy).
 */
function stateLaneLabel(l: (typeof STATE_LANES)[number], flavour: PoolFlavour): string {
  if (flavour === 'self-managed') return l.label;
  if (l.field === 'amp.provisioningState') return 'Agent pool provisioningState';
  return l.label.replace(/^AzureMachinePool\b/, INFRA_KINDS[flavour].kind);
}

const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

function laneOf(field: string, flavour: PoolFlavour): { label: string; group: LaneGroup } | null {
  const fixed = STATE_LANES.find((l) => l.field === field);
  if (fixed) return { label: stateLaneLabel(fixed, flavour), group: 'state' };
  const c = /^condition\.(amp|aso|mp)\.(.+)$/.exec(field);
  if (c) return { label: `${conditionSourceWords(c[1], flavour)} ${c[2]}`, group: 'condition' };
  const f = /^finding\.(.+)$/.exec(field);
  if (f) return { label: `Finding: ${f[1]}`, group: 'finding' };
  return null;
}

/** Lanes whose `true` is the state to notice, not the healthy one (a paused pool). */
const INVERTED_LANES = new Set(['paused']);

/**
 * A lane value as the chart colours it: the value itself, or for a lane whose `true` is the state to notice
 * (`paused`), `true` read as a warning and `false` as fine.
 */
export function laneToneValue(field: string, value: string): string {
  if (!INVERTED_LANES.has(field)) return value;
  return value === 'true' ? 'warning' : value === 'false' ? 'ok' : value;
}

/**
 * The lanes a chart draws at first, and those it folds into one line: a lane that held one value through the
 * window (from its start, or from when poolscope first saw the pool), unless that value is one to notice (failed,
 * not ready, a warning: `notable`).
 */
export function foldUnchanged(
  view: Pick<TimelineView, 'from' | 'to' | 'lanes'>,
  notable: (lane: Lane, value: string) => boolean,
): { shown: Lane[]; unchanged: Lane[] } {
  const shown: Lane[] = [];
  const unchanged: Lane[] = [];
  for (const l of view.lanes) {
    const [only] = l.periods;
    const still = l.periods.length === 1 && only && only.end >= view.to && !only.merged;
    (still && !notable(l, only.value) ? unchanged : shown).push(l);
  }
  return { shown, unchanged };
}

/** Flag lanes and the condition that restates them: drawn as one lane, the flag's value, the condition's aside. */
const RESTATED: readonly [flag: string, condition: string, conditionName: string][] = [
  ['amp.ready', 'condition.amp.Ready', 'Ready condition'],
  ['mp.infrastructureReady', 'condition.mp.InfrastructureReady', 'InfrastructureReady condition'],
];

/** The periods of a lane at `ms`: its value then (null outside its periods). */
function periodAt(l: Lane, ms: number): LanePeriod | null {
  return l.periods.find((p) => Date.parse(p.start) <= ms && ms < Date.parse(p.end)) ?? null;
}

/**
 * One lane per fact: the AzureMachinePool's ready flag and its Ready condition (and the MachinePool's
 * infrastructure flag and its InfrastructureReady) become one lane. Its value is the flag's; where the condition
 * says otherwise (a scale on CAPZ v1.20 or later: ready, with the condition False), the value says that too, and
 * the detail names the condition's reason.
 */
export function mergeRestated(lanes: readonly Lane[]): Lane[] {
  let out = [...lanes];
  for (const [flagField, condField, name] of RESTATED) {
    const flag = out.find((l) => l.field === flagField);
    const cond = out.find((l) => l.field === condField);
    if (!flag || !cond) continue;
    const cuts = [...new Set([...flag.periods, ...cond.periods].flatMap((p) => [p.start, p.end]))].sort();
    const periods: LanePeriod[] = [];
    for (let i = 0; i + 1 < cuts.length; i++) {
      const [start, end] = [cuts[i] as string, cuts[i + 1] as string];
      const f = periodAt(flag, Date.parse(start));
      if (!f) continue;
      const c = periodAt(cond, Date.parse(start));
      const agree = !c || c.value.split('/')[0] === f.value.replace(/^t/, 'T').replace(/^f/, 'F');
      const value = agree ? f.value : `${f.value} (${name} ${c.value})`;
      const detail = [f.detail, c && !agree ? `${name}: ${c.value}${c.detail ? `. ${c.detail}` : ''}` : null]
        .filter(Boolean)
        .join(' ');
      const last = periods.at(-1);
      if (last && last.value === value && last.end === start) last.end = end;
      else periods.push({ start, end, value, ...(detail ? { detail } : {}) });
    }
    out = out.filter((l) => l !== cond).map((l) => (l === flag ? { ...flag, periods } : l));
  }
  return out;
}

/** A replica series' value at `ms`: the last step at or before it (null before the first, or unknown). */
export function valueAt(points: readonly SeriesPoint[], ms: number): number | null {
  let v: number | null = null;
  for (const [at, n] of points) {
    if (Date.parse(at) > ms) break;
    v = n;
  }
  return v;
}

/**
 * Where the chart opens when poolscope first saw the pool well inside the window: from a little before the first
 * thing it recorded to the window's end (the zoom bar still spans the whole window). Null: open on the window.
 */
export function initialZoom(
  view: Pick<TimelineView, 'from' | 'to' | 'lanes' | 'series' | 'markers' | 'knownAtStart'>,
): { startValue: number; endValue: number } | null {
  if (view.knownAtStart) return null;
  const from = Date.parse(view.from);
  const to = Date.parse(view.to);
  let first = Infinity;
  for (const l of view.lanes) for (const p of l.periods) first = Math.min(first, Date.parse(p.start));
  for (const points of Object.values(view.series)) for (const [at] of points) first = Math.min(first, Date.parse(at));
  for (const m of view.markers) first = Math.min(first, Date.parse(m.at));
  // Nothing recorded, or the record starts in the window's first fifth: the whole window reads well enough.
  if (!Number.isFinite(first) || first - from < (to - from) / 5) return null;
  const margin = Math.max(10_000, (to - first) / 10);
  return { startValue: Math.max(from, first - margin), endValue: to };
}

/** `GET /api/pools/{context}/{namespace}/{name}/timeline?from=&to=`: the view and the raw transitions behind it. */
export interface TimelineResponse extends TimelineView {
  /** The newest transitions of the window (at most `ENTRY_LIMIT`), oldest first. */
  entries: TimelineEntry[];
  /** How many transitions the window holds in all. */
  entriesTotal: number;
}

/** `GET /api/pools/{context}/{namespace}/{name}/changes`: one page of a window's changes, and where the next starts. */
export interface ChangesPage {
  /** Newest first. */
  entries: TimelineEntry[];
  /** The `before` of the next (older) page, or null when this page holds the window's oldest change. */
  next: string | null;
}

/** How many raw transitions a timeline answer carries; lanes and series always use all of them. */
export const ENTRY_LIMIT = 1000;

/**
 * The shortest period a lane keeps on its own (shorter runs are merged: {@link coalescePeriods}): about a pixel of
 * a wide chart at the scale the chart opens at. That is the whole window, or, for a pool first recorded inside it,
 * from there to the window's end, where the chart opens zoomed ({@link initialZoom}): a new pool's first minutes
 * must not be merged at a 6-hour scale into "2 changes" that then fill a quarter of its zoomed chart.
 */
export function minPeriodMs(from: string, to: string, firstRecorded: string | null, pixels = 1500): number {
  // Instants compared as numbers: "…00Z" and "…00.000Z" are the same instant, and would not compare as strings.
  const start = Math.max(Date.parse(from), firstRecorded === null ? -Infinity : Date.parse(firstRecorded));
  return Math.max(0, Date.parse(to) - start) / pixels;
}

/**
 * Merges runs of periods shorter than `minMs` (narrower than a pixel at the window's scale) into one period
 * that says how many states it holds, so a month of flapping stays a readable, small answer.
 */
export function coalescePeriods(periods: readonly LanePeriod[], minMs: number): LanePeriod[] {
  const out: LanePeriod[] = [];
  let run: LanePeriod[] = [];
  const flush = () => {
    if (run.length === 1) out.push(run[0] as LanePeriod);
    else if (run.length > 1) {
      out.push({
        start: (run[0] as LanePeriod).start,
        end: (run.at(-1) as LanePeriod).end,
        value: `${run.length} changes`,
        detail: `${new Set(run.map((p) => p.value)).size} different values in this span; choose a shorter range to see each.`,
        merged: run.length,
      });
    }
    run = [];
  };
  for (const p of periods) {
    if (Date.parse(p.end) - Date.parse(p.start) < minMs) run.push(p);
    else {
      flush();
      out.push(p);
    }
  }
  flush();
  return out;
}

/** Builds lanes, series and markers for [from, to] from the state at `from` (null if unknown) and the entries. */
export function buildTimeline(
  initial: PoolDetail | null,
  entries: readonly TimelineEntry[],
  from: string,
  to: string,
  opts: { minPeriodMs?: number; flavour?: PoolFlavour } = {},
): TimelineView {
  const open = new Map<string, { value: string; since: string; detail?: string }>();
  const lanes = new Map<string, Lane>();
  const lane = (field: string): Lane | null => {
    let l = lanes.get(field);
    if (!l) {
      const meta = laneOf(field, opts.flavour ?? initial?.summary.flavour ?? 'self-managed');
      if (!meta) return null;
      l = { field, ...meta, periods: [] };
      lanes.set(field, l);
    }
    return l;
  };
  const begin = (field: string, value: string | null, at: string, detail?: string) => {
    if (!lane(field)) return;
    const cur = open.get(field);
    if (cur) {
      lanes
        .get(field)
        ?.periods.push({ start: cur.since, end: at, value: cur.value, ...(cur.detail ? { detail: cur.detail } : {}) });
      open.delete(field);
    }
    if (value !== null) open.set(field, { value, since: at, ...(detail ? { detail } : {}) });
  };

  const series = Object.fromEntries(REPLICA_SERIES.map((s) => [s.key, [] as SeriesPoint[]])) as TimelineView['series'];
  if (initial) {
    for (const l of STATE_LANES) begin(l.field, text(l.read(initial)), from);
    for (const c of initial.conditions)
      begin(
        `condition.${c.source}.${c.type}`,
        `${c.status}${c.reason ? `/${c.reason}` : ''}`,
        from,
        c.message ?? undefined,
      );
    for (const f of initial.findings) begin(`finding.${f.code}`, f.severity, from, f.summary);
    for (const s of REPLICA_SERIES) series[s.key].push([from, initial.summary.replicas[s.key]]);
  }
  const markers: TimelineMarker[] = [];
  // How often each finding began inside the range: a flapping one (the lists' order flipping, S12, each flip a
  // rewrite of the MachinePool list that resets its counts) is counted, not only drawn.
  const began = new Map<string, number>();
  for (const e of entries) {
    if (e.at < from || e.at > to) continue;
    if (e.field.startsWith('finding.') && e.from === null && e.to !== null)
      began.set(e.field, (began.get(e.field) ?? 0) + 1);
    const r = /^replicas\.(.+)$/.exec(e.field);
    if (r) {
      const points = series[r[1] as keyof ReplicaCounts];
      if (points) points.push([e.at, e.to === null ? null : Number(e.to)]);
      continue;
    }
    if (e.field.startsWith('event.')) {
      markers.push({
        at: e.at,
        kind: 'event',
        label: `${e.field.slice('event.'.length)} on ${e.to ?? '?'}`,
        ...(e.detail ? { detail: e.detail } : {}),
      });
      continue;
    }
    if (e.field === 'pool') {
      const label =
        e.to === 'deleted'
          ? 'MachinePool deleted'
          : e.to === 'unwatched'
            ? 'Context no longer watched'
            : e.from === 'unwatched'
              ? 'Context watched again'
              : 'MachinePool created again';
      markers.push({ at: e.at, kind: 'event', label });
      continue;
    }
    if (e.field === 'resync' || e.field.startsWith('resync.')) {
      markers.push({
        at: e.at,
        kind: 'resync',
        label: `Resync: ${e.to ?? e.field}`,
        ...(e.detail ? { detail: e.detail } : {}),
      });
      continue;
    }
    begin(e.field, e.to, e.at, e.detail);
  }
  for (const field of [...open.keys()]) begin(field, null, to);
  // Steps run to the end of the range.
  for (const s of REPLICA_SERIES) {
    const last = series[s.key].at(-1);
    if (last && last[0] !== to) series[s.key].push([to, last[1]]);
  }
  const order = (l: Lane) =>
    l.group === 'state' ? STATE_LANES.findIndex((s) => s.field === l.field) : l.group === 'condition' ? 100 : 200;
  return {
    from,
    to,
    lanes: [...lanes.values()]
      .filter((l) => l.periods.length > 0)
      .map((l) => ((began.get(l.field) ?? 0) > 1 ? { ...l, label: `${l.label} (${began.get(l.field)}×)` } : l))
      .map((l) => (opts.minPeriodMs ? { ...l, periods: coalescePeriods(l.periods, opts.minPeriodMs) } : l))
      .sort((a, b) => order(a) - order(b) || a.label.localeCompare(b.label)),
    series,
    markers,
    knownAtStart: initial !== null,
    flavour: opts.flavour ?? initial?.summary.flavour ?? 'self-managed',
  };
}
