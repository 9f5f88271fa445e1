import { describe, expect, it } from 'vitest';
import { analyzePool } from './analyze';
import type { TimelineEntry } from './api-types';
import { changeWhat } from './change-words';
import { buildAksPool } from './fixtures/aks-pool';
import { buildScenario } from './fixtures/scenarios';
import {
  buildTimeline,
  coalescePeriods,
  foldUnchanged,
  initialZoom,
  laneToneValue,
  mergeRestated,
  minPeriodMs,
  valueAt,
  type Lane,
  type SeriesPoint,
} from './timeline';
import { diffDetails } from './transitions';

const T0 = '2026-11-29T10:00:00.000Z';
const T1 = '2026-11-29T10:14:00.000Z';
const T2 = '2026-11-29T11:00:00.000Z';

/** The S1 freeze at T0, over at T1 (the pool settles at 5 ready replicas). */
function freezeAndThaw() {
  const frozen = buildScenario('s01-scale-up-pre-fix');
  const d1 = analyzePool(frozen.input, { now: T0 });
  const settled = buildScenario('s02-scale-up-post-fix', { capzVersion: 'v1.19.1' });
  const d2 = analyzePool(settled.input, { now: T1, previous: d1 });
  return { d1, d2, entries: diffDetails(d1, d2, T1) };
}

describe('buildTimeline', () => {
  it('draws the frozen period: AMP not ready and the finding from the range start until the thaw', () => {
    const { d1, d2, entries } = freezeAndThaw();
    expect(d1.summary.ampReady).toBe(false);
    const view = buildTimeline(d1, entries, T0, T2);
    const lane = (f: string) => view.lanes.find((l) => l.field === f);
    expect(d2.summary.ampReady).toBe(true);
    expect(lane('amp.ready')?.periods.map((p) => [p.start, p.end, p.value])).toEqual([
      [T0, T1, 'false'],
      [T1, T2, 'true'],
    ]);
    expect(lane('amp.provisioningState')?.periods.map((p) => p.value)).toEqual(['Updating', 'Succeeded']);
    expect(lane('condition.mp.Ready')?.periods.map((p) => p.value)).toEqual(['False/WaitingForInfrastructure', 'True']);
    expect(lane('finding.readiness-gate-frozen')?.periods).toEqual([
      {
        start: T0,
        end: T1,
        value: 'warning',
        detail: d1.findings.find((f) => f.code === 'readiness-gate-frozen')?.summary,
      },
    ]);
    expect(view.lanes[0]?.field).toBe('amp.provisioningState');
    expect(view.knownAtStart).toBe(true);
  });

  it('counts how often a finding began inside the range when it began more than once (the order flips of S12)', () => {
    const { d1, entries } = freezeAndThaw();
    const at = (m: number) => new Date(Date.parse(T1) + m * 60_000).toISOString();
    const flip = (m: number): TimelineEntry[] => [
      { at: at(m), poolKey: 'k', field: 'finding.order-only', from: null, to: 'info', detail: 'reordered' },
      { at: at(m + 1), poolKey: 'k', field: 'finding.order-only', from: 'info', to: null },
    ];
    const label = (es: TimelineEntry[], from = T0) =>
      buildTimeline(d1, [...entries, ...es], from, T2).lanes.find((l) => l.field === 'finding.order-only')?.label;
    expect(label([...flip(1), ...flip(5), ...flip(9)])).toBe('Finding: order-only (3×)');
    // Once is what the lane shows anyway; a start before the range is not counted in it.
    expect(label(flip(1))).toBe('Finding: order-only');
    expect(label([...flip(1), ...flip(5)], at(3))).toBe('Finding: order-only');
  });

  it('turns replica transitions into steps that run to the end of the range', () => {
    const { d1, entries } = freezeAndThaw();
    const view = buildTimeline(
      d1,
      [...entries, { at: T1, poolKey: 'k', field: 'replicas.capi', from: '3', to: '5' }],
      T0,
      T2,
    );
    expect(view.series.capi).toEqual([
      [T0, 3],
      [T1, 5],
      [T2, 5],
    ]);
    expect(view.series.desired).toEqual([
      [T0, 5],
      [T2, 5],
    ]);
  });

  it('shows Events and resync actions as markers, and starts lanes where an unknown pool first appears', () => {
    const entries: TimelineEntry[] = [
      { at: T1, poolKey: 'k', field: 'amp.provisioningState', from: null, to: 'Updating' },
      {
        at: T1,
        poolKey: 'k',
        field: 'event.FailedVMState',
        from: null,
        to: 'AzureMachinePoolMachine/p-3',
        detail: 'Warning: failed',
      },
      { at: T2, poolKey: 'k', field: 'resync', from: null, to: 'reconcile', detail: 'by alice' },
      { at: T2, poolKey: 'k', field: 'pool', from: 'present', to: 'deleted' },
      { at: T2, poolKey: 'k', field: 'pool', from: 'deleted', to: 'present' },
      { at: T2, poolKey: 'k', field: 'pool', from: 'present', to: 'unwatched' },
      { at: T2, poolKey: 'k', field: 'pool', from: 'unwatched', to: 'present' },
      {
        at: '2026-11-29T12:00:00.000Z',
        poolKey: 'k',
        field: 'amp.provisioningState',
        from: 'Updating',
        to: 'Succeeded',
      },
    ];
    const view = buildTimeline(null, entries, T0, T2);
    expect(view.knownAtStart).toBe(false);
    expect(view.lanes).toEqual([
      {
        field: 'amp.provisioningState',
        label: 'AzureMachinePool provisioningState',
        group: 'state',
        periods: [{ start: T1, end: T2, value: 'Updating' }],
      },
    ]);
    expect(view.markers).toEqual([
      { at: T1, kind: 'event', label: 'FailedVMState on AzureMachinePoolMachine/p-3', detail: 'Warning: failed' },
      { at: T2, kind: 'resync', label: 'Resync: reconcile', detail: 'by alice' },
      { at: T2, kind: 'event', label: 'MachinePool deleted' },
      { at: T2, kind: 'event', label: 'MachinePool created again' },
      { at: T2, kind: 'event', label: 'Context no longer watched' },
      { at: T2, kind: 'event', label: 'Context watched again' },
    ]);
    expect(view.series.desired).toEqual([]);
  });
});

describe("an AKS pool's lanes and changes", () => {
  it("name its infra object by its kind, its provisioning state the agent pool's, and ASO's Ready its own", () => {
    const ready = (status: 'True' | 'False') =>
      analyzePool(
        buildAksPool({
          flavour: 'aks-managed',
          mpList: [0],
          infraReady: status === 'True',
          aso: { ready: { type: 'Ready', status }, state: { count: 1, provisioningState: 'Scaling' } },
        }),
        { now: T0 },
      );
    const d1 = ready('False');
    const entries = diffDetails(d1, ready('True'), T1);
    const labels = buildTimeline(d1, entries, T0, T2).lanes.map((l) => l.label);
    expect(labels).toEqual(
      expect.arrayContaining([
        'Agent pool provisioningState',
        'AzureManagedMachinePool ready',
        'AzureManagedMachinePool AgentPoolsReady',
        'ASO agent pool Ready',
      ]),
    );
    expect(labels.join(' ')).not.toMatch(/AzureMachinePool/);
    expect(changeWhat('condition.aso.Ready', 'aks-aso')).toBe('ASO agent pool condition Ready');
    expect(changeWhat('amp.ready', 'aks-aso')).toBe('AzureASOManagedMachinePool ready');
    expect(changeWhat('amp.ready')).toBe('AzureMachinePool ready');
    expect(changeWhat('amp.provisioningState', 'aks-managed')).toBe('Agent pool provisioning state');
  });
});

describe('initialZoom', () => {
  const at = (m: number) => new Date(Date.parse(T0) + m * 60_000).toISOString();
  const seen = (m: number) =>
    buildTimeline(
      null,
      [{ at: at(m), poolKey: 'k', field: 'amp.provisioningState', from: null, to: 'Succeeded' }],
      T0,
      at(60),
    );

  it('opens a little before the first thing recorded when the pool was first seen well inside the window', () => {
    expect(initialZoom(seen(57))).toEqual({ startValue: Date.parse(at(57)) - 18_000, endValue: Date.parse(at(60)) });
    expect(initialZoom(seen(30))).toEqual({ startValue: Date.parse(at(27)), endValue: Date.parse(at(60)) });
    // Ten seconds at least.
    expect(initialZoom(seen(59.9))?.startValue).toBe(Date.parse(at(59.9)) - 10_000);
  });

  it('opens on the whole window when the state at its start is known, nothing is recorded, or the record starts early in it', () => {
    const { d1, entries } = freezeAndThaw();
    expect(initialZoom(buildTimeline(d1, entries, T0, T2))).toBeNull();
    expect(initialZoom(buildTimeline(null, [], T0, T2))).toBeNull();
    expect(initialZoom(seen(5))).toBeNull();
  });
});

describe('laneToneValue', () => {
  it("reads a paused pool as the state to notice, and leaves other lanes' values as they are", () => {
    expect([laneToneValue('paused', 'true'), laneToneValue('paused', 'false')]).toEqual(['warning', 'ok']);
    expect([laneToneValue('amp.ready', 'false'), laneToneValue('condition.amp.Ready', 'True')]).toEqual([
      'false',
      'True',
    ]);
  });
});

describe('coalescePeriods', () => {
  const at = (m: number) => new Date(Date.parse(T0) + m * 60_000).toISOString();
  it('merges runs of periods shorter than the minimum and keeps the others', () => {
    const periods = [
      { start: at(0), end: at(60), value: 'Succeeded' },
      { start: at(60), end: at(61), value: 'Updating' },
      { start: at(61), end: at(62), value: 'Succeeded' },
      { start: at(62), end: at(63), value: 'Updating' },
      { start: at(63), end: at(120), value: 'Succeeded' },
    ];
    expect(coalescePeriods(periods, 5 * 60_000)).toEqual([
      periods[0],
      {
        start: at(60),
        end: at(63),
        value: '3 changes',
        detail: '2 different values in this span; choose a shorter range to see each.',
        merged: 3,
      },
      periods[4],
    ]);
    expect(coalescePeriods(periods, 30_000)).toEqual(periods);
  });

  it('merges at the scale the chart opens at: a pool first recorded inside the window keeps its first seconds apart', () => {
    // The demo's failed VM: vmss-failed a warning for 9 s, then critical; read 12 s later in a 6-hour window.
    const to = '2026-11-29T16:00:00.000Z';
    const from = new Date(Date.parse(to) - 6 * 3_600_000).toISOString();
    const first = new Date(Date.parse(to) - 120_000).toISOString();
    const sec = (s: number) => new Date(Date.parse(to) - s * 1000).toISOString();
    const entries: TimelineEntry[] = [
      { at: first, poolKey: 'k', field: 'amp.ready', from: null, to: 'true' },
      { at: sec(21), poolKey: 'k', field: 'finding.vmss-failed', from: null, to: 'warning' },
      { at: sec(12), poolKey: 'k', field: 'finding.vmss-failed', from: 'warning', to: 'critical' },
    ];
    const values = (ms: number) =>
      buildTimeline(null, entries, from, to, { minPeriodMs: ms })
        .lanes.find((l) => l.field === 'finding.vmss-failed')
        ?.periods.map((p) => p.value);
    // At the whole window's scale (14.4 s) both periods were merged: a grey "2 changes" on the zoomed chart.
    expect(values(minPeriodMs(from, to, null))).toEqual(['2 changes']);
    expect(minPeriodMs(from, to, first)).toBe(80);
    expect(values(minPeriodMs(from, to, first))).toEqual(['warning', 'critical']);
    // A record that starts before the window: the window's scale (whichever way the instants are written).
    expect(minPeriodMs(from, to, '2026-11-29T01:00:00.000Z')).toBe(14_400);
    expect(minPeriodMs('2026-11-29T10:00:00Z', '2026-11-29T10:00:15.500Z', '2026-11-29T09:59:59.500Z')).toBeCloseTo(
      15_500 / 1500,
    );
    expect(minPeriodMs('2026-11-29T10:00:00Z', '2026-11-29T10:00:15.500Z', '2026-11-29T10:00:00.500Z')).toBe(10);
  });
});

describe('foldUnchanged and valueAt', () => {
  const lane = (field: string, periods: [string, string, string][]): Lane => ({
    field,
    label: field,
    group: 'state',
    periods: periods.map(([start, end, value]) => ({ start, end, value })),
  });
  const from = '2026-12-06T00:00:00.000Z';
  const to = '2026-12-06T01:00:00.000Z';
  const mid = '2026-12-06T00:30:00.000Z';

  it('folds a lane that held one normal value all window, and keeps changes and values to notice', () => {
    const view = {
      from,
      to,
      lanes: [
        lane('amp.ready', [[from, to, 'true']]),
        lane('amp.provisioningState', [
          [from, mid, 'Updating'],
          [mid, to, 'Succeeded'],
        ]),
        lane('finding.vmss-failed', [[from, to, 'critical']]),
        // First seen inside the window, unchanged since.
        lane('mp.phase', [[mid, to, 'Running']]),
      ],
    };
    const folded = foldUnchanged(view, (_l, v) => v === 'critical');
    expect(folded.unchanged.map((l) => l.field)).toEqual(['amp.ready', 'mp.phase']);
    expect(folded.shown.map((l) => l.field)).toEqual(['amp.provisioningState', 'finding.vmss-failed']);
  });

  it('merges a flag lane and the condition that restates it, saying where the condition differs', () => {
    const lanes = mergeRestated([
      lane('amp.ready', [[from, to, 'true']]),
      lane('condition.amp.Ready', [
        [from, mid, 'False/ScaleSetScalingUp'],
        [mid, to, 'True'],
      ]),
      lane('mp.phase', [[from, to, 'Running']]),
    ]);
    expect(lanes.map((l) => l.field)).toEqual(['amp.ready', 'mp.phase']);
    expect(lanes[0]?.periods.map((p) => [p.start, p.end, p.value])).toEqual([
      [from, mid, 'true (Ready condition False/ScaleSetScalingUp)'],
      [mid, to, 'true'],
    ]);
  });

  it('reads a step series at an instant: the last step at or before it', () => {
    const points: SeriesPoint[] = [
      [from, 3],
      [mid, 5],
      [to, 5],
    ];
    expect(valueAt(points, Date.parse(from) - 1)).toBeNull();
    expect(valueAt(points, Date.parse(from) + 1)).toBe(3);
    expect(valueAt(points, Date.parse(mid))).toBe(5);
  });
});
