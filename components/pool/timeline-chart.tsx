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
import { foldUnchanged, initialZoom, laneToneValue, mergeRestated, type Lane, type TimelineView } from '@/lib/timeline';
import { toneOf } from '@/components/ui/badge';
import { buildOption, chartHeight, COLORS, NARROW_PX } from './timeline-option';

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
