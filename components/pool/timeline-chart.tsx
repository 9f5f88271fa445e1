'use client';
// The pool's story on one time axis: state lanes (provisioning state, ready flags, phase, conditions, findings)
// above the replica counters, with Events and resync actions as markers. ECharts draws it; zoom is shared.

import { CustomChart, LineChart, ScatterChart } from 'echarts/charts';
import {
  DataZoomComponent,
  GridComponent,
  LegendComponent,
  MarkLineComponent,
  TooltipComponent,
} from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';
import { useEffect, useRef, useState, useSyncExternalStore } from 'react';
import {
  REPLICA_SERIES,
  foldUnchanged,
  initialZoom,
  laneToneValue,
  mergeRestated,
  valueAt,
  type Lane,
  type TimelineView,
} from '@/lib/timeline';
import { toneOf, type Tone } from '@/components/ui/badge';
import { formatInstant } from '@/components/ui/local-time';
import { formatDuration } from '@/lib/format';

echarts.use([
  CustomChart,
  LineChart,
  ScatterChart,
  GridComponent,
  TooltipComponent,
  DataZoomComponent,
  LegendComponent,
  MarkLineComponent,
  CanvasRenderer,
]);

/** "good" is muted: ready, Succeeded, not paused are the normal state, and red and amber must stand out. */
const COLORS: Record<Tone, [light: string, dark: string]> = {
  good: ['#a7d8b9', '#2f6b47'],
  bad: ['#dc2626', '#f87171'],
  warn: ['#d97706', '#fbbf24'],
  info: ['#0284c7', '#38bdf8'],
  neutral: ['#64748b', '#94a3b8'],
};
const SERIES_COLORS = ['#4338ca', '#0ea5e9', '#14b8a6', '#22c55e', '#ef4444', '#f59e0b', '#a855f7', '#64748b'];
/** Series that often coincide stay apart by their dashes; the desired count is drawn bold. */
const SERIES_DASH = ['solid', 'dashed', 'solid', 'dotted', 'solid', 'dashed', 'dotted', 'solid'] as const;

/** Whether a lane's value is one to keep in sight even when it never changed (failed, not ready, a warning). */
const notable = (l: Lane, value: string) => {
  const t = toneOf(laneToneValue(l.field, value.split(' (')[0] ?? value));
  return t === 'bad' || t === 'warn';
};

function subscribeDark(cb: () => void) {
  const o = new MutationObserver(cb);
  o.observe(document.documentElement, { attributes: true, attributeFilter: ['class'] });
  return () => o.disconnect();
}
const useDark = () =>
  useSyncExternalStore(
    subscribeDark,
    () => document.documentElement.classList.contains('dark'),
    () => false,
  );

const LANE_HEIGHT = 26;
/** The lanes' label column: wide enough for the longest condition lanes ("AzureMachinePool ScaleSetDesiredReplicas"). */
const LABELS_PX = 260;
/**
 * Below this width (a phone) the label column is narrower and names the kinds as the drift badges do ("AMP",
 * "MP"): with 260 pixels of labels, a 390-pixel screen had 70 left for the lanes.
 */
const NARROW_PX = 640;
const NARROW_LABELS_PX = 150;

/** A lane's label as the narrow chart shows it (the tooltip names it in full). */
export function shortLabel(label: string): string {
  return label.replace(/^AzureMachinePool\b/, 'AMP').replace(/^MachinePool\b/, 'MP');
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

export function buildOption(
  view: TimelineView,
  at: string | null,
  dark: boolean,
  narrow = false,
): echarts.EChartsCoreOption {
  const labels = view.lanes.map((l) => (narrow ? shortLabel(l.label) : l.label));
  if (view.markers.length) labels.push(narrow ? 'Events ▲, resyncs ◆' : 'Events ▲ and resyncs ◆');
  const labelsPx = narrow ? NARROW_LABELS_PX : LABELS_PX;
  const lanesHeight = Math.max(1, labels.length) * LANE_HEIGHT;
  const text = dark ? '#e2e8f0' : '#0f172a';
  const grid = dark ? '#334155' : '#e2e8f0';
  const from = Date.parse(view.from);
  const to = Date.parse(view.to);
  const textColor = (tone: Tone) =>
    dark ? (tone === 'good' ? '#f8fafc' : '#0f172a') : tone === 'good' ? '#14532d' : '#ffffff';
  const laneData: LaneDatum[] = view.lanes.flatMap((l, i) =>
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

  const markerLane = view.lanes.length;
  const top = 10;
  const replicasTop = top + lanesHeight + 40;
  const xAxis = (gridIndex: number, show: boolean) => ({
    type: 'time',
    gridIndex,
    min: from,
    max: to,
    axisLabel: { show, color: text, hideOverlap: true },
    axisLine: { lineStyle: { color: grid } },
    splitLine: { show: true, lineStyle: { color: grid } },
  });
  return {
    backgroundColor: 'transparent',
    textStyle: { color: text },
    animation: false,
    tooltip: {
      trigger: 'item',
      confine: true,
      backgroundColor: dark ? '#0f172a' : '#ffffff',
      textStyle: { color: text },
      borderColor: grid,
      // The replica chart's crosshair (its x axis triggers it): every series at that instant.
      formatter: (p: unknown) => (Array.isArray(p) ? crosshair(view, (p[0] as { axisValue: number }).axisValue) : ''),
    },
    legend: {
      top: replicasTop - 28,
      left: 16,
      right: 24,
      textStyle: { color: text },
      type: 'scroll',
      data: REPLICA_SERIES.map((s) => s.label),
    },
    grid: [
      { left: labelsPx, right: narrow ? 12 : 24, top, height: lanesHeight },
      { left: labelsPx, right: narrow ? 12 : 24, top: replicasTop, height: 180 },
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
    dataZoom: [
      // The wheel zooms; a drag selects the span to zoom to (see useDragZoom), so it does not pan.
      { type: 'inside', xAxisIndex: [0, 1], filterMode: 'none', moveOnMouseMove: false },
      { type: 'slider', xAxisIndex: [0, 1], filterMode: 'none', height: 18, bottom: 6, textStyle: { color: text } },
    ],
    series: [
      {
        type: 'custom',
        name: 'lanes',
        xAxisIndex: 0,
        yAxisIndex: 0,
        encode: { x: [1, 2], y: 0 },
        data: laneData,
        renderItem: (
          params: { dataIndex: number; coordSys: { x: number; y: number; width: number; height: number } },
          api: { value(i: number): number; coord(v: number[]): number[]; size(v: number[]): number[]; style(): object },
        ) => {
          const lane = api.value(0);
          const start = api.coord([api.value(1), lane]) as [number, number];
          const end = api.coord([api.value(2), lane]) as [number, number];
          const h = ((api.size([0, 1]) as number[])[1] as number) * 0.62;
          const rect = echarts.graphic.clipRectByRect(
            { x: start[0], y: start[1] - h / 2, width: Math.max(1, end[0] - start[0]), height: h },
            {
              x: params.coordSys.x,
              y: params.coordSys.y,
              width: params.coordSys.width,
              height: params.coordSys.height,
            },
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
          return {
            type: 'group',
            children: [
              box,
              {
                type: 'text',
                silent: true,
                style: {
                  text: name,
                  x: rect.x + 4,
                  y: rect.y + rect.height / 2,
                  verticalAlign: 'middle',
                  fill: merged ? text : d.textColor,
                  font: `11px ui-sans-serif, system-ui, sans-serif`,
                },
              },
            ],
          };
        },
        tooltip: {
          formatter: (p: { value: LaneDatum['value'] }) => {
            const [, s, e, v, detail, label] = p.value;
            return `<b>${esc(label)}</b>: ${esc(v)}<br/>${time(s)} → ${time(e)} (${formatDuration(e - s)})${detail ? `<br/><span style="white-space:normal;display:inline-block;max-width:420px">${esc(detail)}</span>` : ''}`;
          },
        },
      },
      {
        type: 'scatter',
        name: 'markers',
        xAxisIndex: 0,
        yAxisIndex: 0,
        data: view.markers.map((m) => ({
          value: [Date.parse(m.at), markerLane, m.label, m.detail ?? ''],
          // An Event is an amber triangle; a resync, a larger blue diamond (the legend says so).
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
      },
      ...REPLICA_SERIES.map((s, i) => ({
        type: 'line',
        name: s.label,
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
      })),
    ],
  };
}

/** The crosshair's tooltip: every replica series' value at `ms` (the step in force then). */
function crosshair(view: TimelineView, ms: number): string {
  const rows = REPLICA_SERIES.map(
    (s, i) =>
      `<span style="color:${SERIES_COLORS[i]}">●</span> ${esc(s.label)}: <b>${valueAt(view.series[s.key], ms) ?? 'unknown'}</b>`,
  );
  return `<div data-crosshair>${time(ms)}<br/>${rows.join('<br/>')}</div>`;
}

function chartHeight(view: TimelineView): number {
  return 10 + Math.max(1, view.lanes.length + (view.markers.length ? 1 : 0)) * LANE_HEIGHT + 40 + 180 + 50;
}

/**
 * `windowKey` names the window shown (its range or bounds, and the instant): when it changes, the chart opens
 * anew (see `initialZoom`); live updates within one window keep the viewer's zoom.
 */
interface ChartProps {
  view: TimelineView;
  at: string | null;
  windowKey: string;
  onPick?: (iso: string) => void;
  /** A span the viewer zoomed to (a drag across the chart, or the wheel): the page puts it in its URL. */
  onZoom?: (from: string, to: string) => void;
  /** A double-click: back to the whole range. */
  onZoomReset?: () => void;
}

type ZrEvent = { offsetX: number; offsetY: number };

/**
 * Zooming as Grafana does: a drag across either grid selects a span, the wheel zooms, a double-click resets; each
 * settles into `onZoom` / `onZoomReset` (the URL), so a zoomed view is a link. A click without a drag picks an
 * instant. Zooms the page asks for itself (a new window) are not reported back.
 */
function wireZoom(
  c: echarts.ECharts,
  handlers: { current: Pick<ChartProps, 'onPick' | 'onZoom' | 'onZoomReset'> },
  quiet: { current: boolean },
  bounds: { current: { from: number; to: number } },
) {
  let downAt: number | null = null;
  let dragged = false;
  let settle: ReturnType<typeof setTimeout> | null = null;
  const zr = c.getZr();
  const inGrid = (e: ZrEvent) => c.containPixel({ gridIndex: [0, 1] }, [e.offsetX, e.offsetY]);
  const timeAt = (x: number) => c.convertFromPixel({ xAxisIndex: 1 }, x) as number;
  const band = (x0: number, x1: number) =>
    c.setOption({
      graphic: [
        {
          id: 'zoom-band',
          type: 'rect',
          silent: true,
          shape: { x: Math.min(x0, x1), y: 0, width: Math.abs(x1 - x0), height: c.getHeight() - 40 },
          style: { fill: 'rgba(14,165,233,0.15)', stroke: 'rgba(14,165,233,0.6)' },
        },
      ],
    });
  zr.on('mousedown', (e: ZrEvent) => {
    downAt = inGrid(e) ? e.offsetX : null;
    dragged = false;
  });
  zr.on('mousemove', (e: ZrEvent) => {
    if (downAt === null || Math.abs(e.offsetX - downAt) < 5) return;
    dragged = true;
    band(downAt, e.offsetX);
  });
  zr.on('mouseup', (e: ZrEvent) => {
    const x0 = downAt;
    downAt = null;
    if (x0 === null || !dragged) return;
    c.setOption({ graphic: [{ id: 'zoom-band', $action: 'remove' }] });
    const [a, b] = [timeAt(x0), timeAt(e.offsetX)].sort((p, q) => p - q) as [number, number];
    if (Number.isFinite(a) && Number.isFinite(b) && b > a)
      handlers.current.onZoom?.(new Date(a).toISOString(), new Date(b).toISOString());
  });
  // A click picks an instant once it is clear that it is not half of a double-click.
  let picking: ReturnType<typeof setTimeout> | null = null;
  zr.on('click', (e: ZrEvent) => {
    if (dragged || !inGrid(e)) return;
    const ms = timeAt(e.offsetX);
    if (picking) clearTimeout(picking);
    picking = setTimeout(() => {
      picking = null;
      if (Number.isFinite(ms)) handlers.current.onPick?.(new Date(ms).toISOString());
    }, 300);
  });
  zr.on('dblclick', (e: ZrEvent) => {
    if (picking) clearTimeout(picking);
    picking = null;
    if (inGrid(e)) handlers.current.onZoomReset?.();
  });
  // The wheel (and the slider): once it settles, the span shown.
  c.on('datazoom', () => {
    if (quiet.current) return;
    if (settle) clearTimeout(settle);
    settle = setTimeout(() => {
      // The zoom in percent of the window's axis.
      const dz = (c.getOption() as { dataZoom?: { start?: number; end?: number }[] }).dataZoom?.[0];
      const { from, to } = bounds.current;
      const at = (pct: number | undefined, dflt: number) => from + ((to - from) * (pct ?? dflt)) / 100;
      handlers.current.onZoom?.(new Date(at(dz?.start, 0)).toISOString(), new Date(at(dz?.end, 100)).toISOString());
    }, 600);
  });
}

/** The folded lanes in words: how many, and each with the one value it held. */
function unchangedText(lanes: readonly Lane[]): string {
  const names = lanes.map((l) => `${l.label} ${l.periods[0]?.value ?? ''}`).join(' · ');
  return `${lanes.length} ${lanes.length === 1 ? 'lane' : 'lanes'} unchanged in this window: ${names}.`;
}

export function TimelineChart({ view, at, windowKey, onPick, onZoom, onZoomReset }: ChartProps) {
  const [all, setAll] = useState(false);
  const merged = { ...view, lanes: mergeRestated(view.lanes) };
  const folded = foldUnchanged(merged, notable);
  const drawn = all || folded.unchanged.length === 0 ? merged : { ...merged, lanes: folded.shown };
  const unchanged = unchangedText(folded.unchanged);
  return (
    <div className="space-y-2">
      <TimelineLegend firstSeenInside={!view.knownAtStart} />
      <Chart
        view={drawn}
        at={at}
        windowKey={windowKey}
        {...(onPick ? { onPick } : {})}
        {...(onZoom ? { onZoom } : {})}
        {...(onZoomReset ? { onZoomReset } : {})}
      />
      {folded.unchanged.length ? (
        // One line whatever the number of lanes folded: the names run on past the edge (all of them on hover).
        <p className="flex items-baseline gap-2 text-sm text-slate-600 dark:text-slate-300">
          {all ? null : (
            <span data-testid="unchanged-lanes" className="min-w-0 truncate" title={unchanged}>
              {unchanged}
            </span>
          )}
          <button type="button" className="shrink-0 underline" onClick={() => setAll(!all)}>
            {all ? 'Fold the unchanged lanes' : 'Show them'}
          </button>
        </p>
      ) : null}
    </div>
  );
}

/** What the colours and marks mean. */
function TimelineLegend({ firstSeenInside }: { firstSeenInside: boolean }) {
  // The lanes' own colours, in the theme shown.
  const shade = useDark() ? 1 : 0;
  const items: [string, string][] = [
    [COLORS.bad[shade], 'failed, not ready, critical'],
    [COLORS.warn[shade], 'in progress, paused, warning'],
    [COLORS.info[shade], 'info'],
    [COLORS.good[shade], 'ready, succeeded, normal'],
    [COLORS.neutral[shade], 'unknown, other'],
  ];
  return (
    <ul
      aria-label="Timeline legend"
      className="flex flex-wrap gap-x-4 gap-y-1 text-xs text-slate-700 dark:text-slate-300"
    >
      {items.map(([c, t]) => (
        <li key={t} className="flex items-center gap-1.5">
          <span aria-hidden="true" className="inline-block h-2.5 w-4 rounded-sm" style={{ background: c }} />
          {t}
        </li>
      ))}
      <li>▲ Event</li>
      <li>◆ resync</li>
      <li>dashed: changes too close to draw apart</li>
      {firstSeenInside ? (
        <li className="text-slate-600 italic dark:text-slate-400">first seen in this window: lanes start there</li>
      ) : null}
    </ul>
  );
}

function Chart({ view, at, windowKey, onPick, onZoom, onZoomReset }: ChartProps) {
  const el = useRef<HTMLDivElement>(null);
  const chart = useRef<echarts.ECharts | null>(null);
  const zoomedFor = useRef<string | null>(null);
  const dark = useDark();
  const [narrow, setNarrow] = useState(false);
  const handlers = useRef({ onPick, onZoom, onZoomReset });
  useEffect(() => {
    handlers.current = { onPick, onZoom, onZoomReset };
  }, [onPick, onZoom, onZoomReset]);
  /** Set while the chart zooms itself (a new window opening), which is not the viewer's zoom. */
  const quiet = useRef(false);
  const bounds = useRef({ from: Date.parse(view.from), to: Date.parse(view.to) });
  useEffect(() => {
    bounds.current = { from: Date.parse(view.from), to: Date.parse(view.to) };
  }, [view.from, view.to]);

  useEffect(() => {
    if (!el.current) return;
    const c = echarts.init(el.current, dark ? 'dark' : undefined, { renderer: 'canvas' });
    chart.current = c;
    // A new chart (the theme changed) opens as a new window would.
    zoomedFor.current = null;
    const ro = new ResizeObserver(() => {
      c.resize();
      setNarrow(c.getWidth() < NARROW_PX);
    });
    ro.observe(el.current);
    wireZoom(c, handlers, quiet, bounds);
    return () => {
      ro.disconnect();
      c.dispose();
      chart.current = null;
    };
  }, [dark]);

  useEffect(() => {
    const c = chart.current;
    if (!c) return;
    c.setOption(buildOption(view, at, dark, narrow), { replaceMerge: ['series'] });
    if (zoomedFor.current !== windowKey) {
      zoomedFor.current = windowKey;
      const z = initialZoom(view);
      quiet.current = true;
      c.dispatchAction(
        z
          ? { type: 'dataZoom', startValue: z.startValue, endValue: z.endValue }
          : { type: 'dataZoom', start: 0, end: 100 },
      );
      quiet.current = false;
      // Where it opened, for the browser tests (the canvas says it only in pixels).
      if (el.current) el.current.dataset.opensAt = z ? new Date(z.startValue).toISOString() : 'window';
    }
  }, [view, at, dark, narrow, windowKey]);

  const summary = `Timeline from ${view.from} to ${view.to}: ${view.lanes.length} state lanes, ${view.markers.length} events and resyncs, and the replica counters. The same changes are listed as text below.`;
  // data-lane-labels: which labels it shows, for the browser tests (the canvas says it only in pixels).
  return (
    <div
      ref={el}
      role="img"
      aria-label={summary}
      data-testid="timeline-chart"
      data-lane-labels={narrow ? 'short' : 'full'}
      data-lanes={view.lanes.length}
      data-lane-fields={view.lanes.map((l) => l.field).join(' ')}
      style={{ height: chartHeight(view) }}
      className="w-full"
    />
  );
}
