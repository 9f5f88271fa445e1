// The timeline chart's ECharts option, built from a timeline view: the state lanes (a custom series of bars, each
// naming its state where it fits), the Events and resyncs as markers, and the replica counters below on the same
// time axis. Plain data and functions: components/pool/timeline-chart.tsx draws it and wires the zoom.

import * as echarts from 'echarts/core';
import { REPLICA_SERIES, laneToneValue, replicaLabel, valueAt, type TimelineView } from '@/lib/timeline';
import { toneOf, type Tone } from '@/components/ui/badge';
import { formatInstant } from '@/components/ui/local-time';
import { formatDuration } from '@/lib/format';

/** "good" is muted: ready, Succeeded, not paused are the normal state, and red and amber must stand out. */
export const COLORS: Record<Tone, [light: string, dark: string]> = {
  good: ['#a7d8b9', '#2f6b47'],
  bad: ['#dc2626', '#f87171'],
  warn: ['#d97706', '#fbbf24'],
  info: ['#0284c7', '#38bdf8'],
  neutral: ['#64748b', '#94a3b8'],
};
const SERIES_COLORS = ['#4338ca', '#0ea5e9', '#14b8a6', '#22c55e', '#ef4444', '#f59e0b', '#a855f7', '#64748b'];
/** Series that often coincide stay apart by their dashes; the desired count is drawn bold. */
const SERIES_DASH = ['solid', 'dashed', 'solid', 'dotted', 'solid', 'dashed', 'dotted', 'solid'] as const;

const LANE_HEIGHT = 26;
const REPLICAS_PX = 180;
const TOP_PX = 10;
/** Between the lanes and the replica chart: the replica legend's row. */
const GAP_PX = 40;
/** Below the replica chart: the zoom slider. */
const SLIDER_PX = 50;
/** The lanes' label column: wide enough for the longest condition lanes ("AzureMachinePool ScaleSetDesiredReplicas"). */
const LABELS_PX = 260;
/**
 * Below this width (a phone) the label column is narrower and names the kinds as the drift badges do ("AMP",
 * "MP"): with 260 pixels of labels, a 390-pixel screen had 70 left for the lanes.
 */
export const NARROW_PX = 640;
const NARROW_LABELS_PX = 150;

/** A lane's label as the narrow chart shows it (the tooltip names it in full). */
export function shortLabel(label: string): string {
  return label
    .replace(/^AzureMachinePool\b/, 'AMP')
    .replace(/^AzureManagedMachinePool\b/, 'AMMP')
    .replace(/^AzureASOManagedMachinePool\b/, 'ASO-MP')
    .replace(/^MachinePool\b/, 'MP');
}
const esc = (s: string) =>
  s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);
const time = (ms: number) => formatInstant(new Date(ms).toISOString(), undefined);

/** A lane period: lane index, start, end (ms), value, detail, lane label, how many periods it merges (0: none). */
type LaneDatum = {
  value: [number, number, number, string, string, string, number];
  itemStyle: { color: string };
  /** The colour of the state's name inside the bar: dark on the pale normal colour, else light (dark on light in dark mode). */
  textColor: string;
};
/** An 11-pixel label's width per character, generously: a name is drawn only where all of it fits. */
const BAR_CHAR_PX = 6.4;

/** The colours of the theme shown. */
interface Theme {
  dark: boolean;
  text: string;
  grid: string;
}

/** The chart's height for a view: its lanes (and the markers' lane), the replica chart and the slider. */
export function chartHeight(view: TimelineView): number {
  const lanes = Math.max(1, view.lanes.length + (view.markers.length ? 1 : 0));
  return TOP_PX + lanes * LANE_HEIGHT + GAP_PX + REPLICAS_PX + SLIDER_PX;
}

export function buildOption(
  view: TimelineView,
  at: string | null,
  dark: boolean,
  narrow = false,
): echarts.EChartsCoreOption {
  const theme: Theme = { dark, text: dark ? '#e2e8f0' : '#0f172a', grid: dark ? '#334155' : '#e2e8f0' };
  const labels = view.lanes.map((l) => (narrow ? shortLabel(l.label) : l.label));
  if (view.markers.length) labels.push(narrow ? 'Events ▲, resyncs ◆' : 'Events ▲ and resyncs ◆');
  const laneData = laneDataOf(view, dark);
  return {
    backgroundColor: 'transparent',
    textStyle: { color: theme.text },
    animation: false,
    tooltip: {
      trigger: 'item',
      confine: true,
      backgroundColor: dark ? '#0f172a' : '#ffffff',
      textStyle: { color: theme.text },
      borderColor: theme.grid,
      // The replica chart's crosshair (its x axis triggers it): every series at that instant.
      formatter: (p: unknown) => (Array.isArray(p) ? crosshair(view, (p[0] as { axisValue: number }).axisValue) : ''),
    },
    ...layout(view, labels, theme, narrow),
    dataZoom: [
      // The wheel zooms; a drag selects the span to zoom to (see useDragZoom), so it does not pan.
      { type: 'inside', xAxisIndex: [0, 1], filterMode: 'none', moveOnMouseMove: false },
      {
        type: 'slider',
        xAxisIndex: [0, 1],
        filterMode: 'none',
        height: 18,
        bottom: 6,
        textStyle: { color: theme.text },
      },
    ],
    series: [lanesSeries(laneData, theme), markersSeries(view, theme), ...replicaSeries(view, at, theme)],
  };
}

/** Each lane's periods as bars, coloured by the tone of their value. */
function laneDataOf(view: TimelineView, dark: boolean): LaneDatum[] {
  const textColor = (tone: Tone) =>
    dark ? (tone === 'good' ? '#f8fafc' : '#0f172a') : tone === 'good' ? '#14532d' : '#ffffff';
  return view.lanes.flatMap((l, i) =>
    l.periods.map((p) => {
      // A merged lane's value may add the condition's in brackets: the flag's own value sets the colour.
      const tone = toneOf(laneToneValue(l.field, p.value.split(' (')[0] ?? p.value));
      return {
        value: [i, Date.parse(p.start), Date.parse(p.end), p.value, p.detail ?? '', l.label, p.merged ?? 0],
        itemStyle: { color: COLORS[tone][dark ? 1 : 0] },
        textColor: textColor(tone),
      };
    }),
  );
}

/** The two grids on one time axis (lanes above, replicas below), their axes and the replica legend. */
function layout(view: TimelineView, labels: string[], theme: Theme, narrow: boolean) {
  const { text, grid } = theme;
  const labelsPx = narrow ? NARROW_LABELS_PX : LABELS_PX;
  const lanesHeight = Math.max(1, labels.length) * LANE_HEIGHT;
  const replicasTop = TOP_PX + lanesHeight + GAP_PX;
  const xAxis = (gridIndex: number, show: boolean) => ({
    type: 'time',
    gridIndex,
    min: Date.parse(view.from),
    max: Date.parse(view.to),
    axisLabel: { show, color: text, hideOverlap: true },
    axisLine: { lineStyle: { color: grid } },
    splitLine: { show: true, lineStyle: { color: grid } },
  });
  return {
    legend: {
      top: replicasTop - 28,
      left: 16,
      right: 24,
      textStyle: { color: text },
      type: 'scroll',
      data: REPLICA_SERIES.map((s) => replicaLabel(s.key, view.flavour)),
    },
    grid: [
      { left: labelsPx, right: narrow ? 12 : 24, top: TOP_PX, height: lanesHeight },
      { left: labelsPx, right: narrow ? 12 : 24, top: replicasTop, height: REPLICAS_PX },
    ],
    xAxis: [
      xAxis(0, false),
      {
        ...xAxis(1, true),
        axisPointer: { show: true, type: 'line', snap: false, triggerTooltip: true, label: { show: false } },
      },
    ],
    yAxis: [
      {
        type: 'category',
        gridIndex: 0,
        data: labels,
        inverse: true,
        axisLabel: { color: text, width: labelsPx - 10, overflow: 'truncate' },
        axisTick: { show: false },
        axisLine: { lineStyle: { color: grid } },
      },
      {
        type: 'value',
        gridIndex: 1,
        minInterval: 1,
        name: 'replicas',
        nameLocation: 'middle',
        nameRotate: 90,
        nameGap: 32,
        nameTextStyle: { color: text },
        axisLabel: { color: text },
        splitLine: { lineStyle: { color: grid } },
      },
    ],
  };
}

type RenderParams = { dataIndex: number; coordSys: { x: number; y: number; width: number; height: number } };
type RenderApi = {
  value(i: number): number;
  coord(v: number[]): number[];
  size(v: number[]): number[];
  style(): object;
};

/** The state lanes: a bar per period, naming its state inside where the name fits whole. */
function lanesSeries(laneData: LaneDatum[], theme: Theme) {
  return {
    type: 'custom',
    name: 'lanes',
    xAxisIndex: 0,
    yAxisIndex: 0,
    encode: { x: [1, 2], y: 0 },
    data: laneData,
    renderItem: (params: RenderParams, api: RenderApi) => renderBar(params, api, laneData, theme),
    tooltip: {
      formatter: (p: { value: LaneDatum['value'] }) => {
        const [, s, e, v, detail, label] = p.value;
        return `<b>${esc(label)}</b>: ${esc(v)}<br/>${time(s)} → ${time(e)} (${formatDuration(e - s)})${detail ? `<br/><span style="white-space:normal;display:inline-block;max-width:420px">${esc(detail)}</span>` : ''}`;
      },
    },
  };
}

function renderBar(params: RenderParams, api: RenderApi, laneData: LaneDatum[], { dark, text }: Theme) {
  const lane = api.value(0);
  const start = api.coord([api.value(1), lane]) as [number, number];
  const end = api.coord([api.value(2), lane]) as [number, number];
  const h = ((api.size([0, 1]) as number[])[1] as number) * 0.62;
  const { x, y, width, height } = params.coordSys;
  const rect = echarts.graphic.clipRectByRect(
    { x: start[0], y: start[1] - h / 2, width: Math.max(1, end[0] - start[0]), height: h },
    { x, y, width, height },
  );
  // Merged periods ("N changes": too short to draw apart at this scale): translucent, outlined with a dash,
  // unlike any one state.
  const merged = api.value(6) > 0;
  if (!rect) return null;
  const box = {
    type: 'rect',
    transition: [],
    shape: rect,
    style: merged
      ? { ...api.style(), opacity: 0.45, stroke: dark ? '#cbd5e1' : '#334155', lineWidth: 1, lineDash: [3, 2] }
      : api.style(),
  };
  const d = laneData[params.dataIndex];
  const name = merged ? `${api.value(6)} changes` : (d?.value[3] ?? '');
  // The state's name inside its bar, where it fits whole.
  if (!d || rect.width < name.length * BAR_CHAR_PX + 8) return box;
  const style = {
    text: name,
    x: rect.x + 4,
    y: rect.y + rect.height / 2,
    verticalAlign: 'middle',
    fill: merged ? text : d.textColor,
    font: `11px ui-sans-serif, system-ui, sans-serif`,
  };
  return { type: 'group', children: [box, { type: 'text', silent: true, style }] };
}

/** Events (amber triangles) and resyncs (larger blue diamonds) on a lane of their own, below the states. */
function markersSeries(view: TimelineView, { dark, text }: Theme) {
  const markerLane = view.lanes.length;
  return {
    type: 'scatter',
    name: 'markers',
    xAxisIndex: 0,
    yAxisIndex: 0,
    data: view.markers.map((m) => ({
      value: [Date.parse(m.at), markerLane, m.label, m.detail ?? ''],
      symbol: m.kind === 'resync' ? 'diamond' : 'triangle',
      symbolSize: m.kind === 'resync' ? 14 : 11,
      itemStyle: {
        color: m.kind === 'resync' ? COLORS.info[dark ? 1 : 0] : COLORS.warn[dark ? 1 : 0],
        borderColor: text,
        borderWidth: m.kind === 'resync' ? 1 : 0,
      },
    })),
    tooltip: {
      formatter: (p: { value: [number, number, string, string] }) =>
        `<b>${esc(p.value[2])}</b><br/>${time(p.value[0])}${p.value[3] ? `<br/><span style="white-space:normal;display:inline-block;max-width:420px">${esc(p.value[3])}</span>` : ''}`,
    },
  };
}

/** The replica counters as steps; the desired count (the first) bold, with the shown instant marked on it. */
function replicaSeries(view: TimelineView, at: string | null, { text }: Theme) {
  return REPLICA_SERIES.map((s, i) => ({
    type: 'line',
    name: replicaLabel(s.key, view.flavour),
    xAxisIndex: 1,
    yAxisIndex: 1,
    step: 'end',
    showSymbol: true,
    symbolSize: 4,
    color: SERIES_COLORS[i],
    lineStyle: { width: i === 0 ? 3 : 1.5, type: SERIES_DASH[i] },
    z: i === 0 ? 3 : 2,
    data: view.series[s.key].map(([t, v]) => [Date.parse(t), v]),
    tooltip: {
      formatter: (p: { seriesName: string; value: [number, number | null] }) =>
        `${esc(p.seriesName)}: <b>${p.value[1] ?? 'unknown'}</b><br/>${time(p.value[0])}`,
    },
    ...(i === 0 && at
      ? {
          markLine: {
            symbol: 'none',
            silent: true,
            lineStyle: { color: text, type: 'dashed' },
            label: { formatter: 'shown instant', color: text },
            data: [{ xAxis: Date.parse(at) }],
          },
        }
      : {}),
  }));
}

/** The crosshair's tooltip: every replica series' value at `ms` (the step in force then). */
function crosshair(view: TimelineView, ms: number): string {
  const rows = REPLICA_SERIES.map(
    (s, i) =>
      `<span style="color:${SERIES_COLORS[i]}">●</span> ${esc(s.label)}: <b>${valueAt(view.series[s.key], ms) ?? 'unknown'}</b>`,
  );
  return `<div data-crosshair>${time(ms)}<br/>${rows.join('<br/>')}</div>`;
}
