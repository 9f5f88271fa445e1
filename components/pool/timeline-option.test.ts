// The chart's option as ECharts gets it: a merged period ("N changes") is drawn unlike any one state.

import { describe, expect, it } from 'vitest';
import type { TimelineView } from '@/lib/timeline';
import { buildOption, shortLabel } from './timeline-option';

type Datum = { value: (string | number)[]; itemStyle: { color: string } };
type Drawn = { type: string; style: Record<string, unknown>; children?: Drawn[] };
type Lanes = { data: Datum[]; renderItem(params: unknown, api: unknown): Drawn | null };

const view: TimelineView = {
  from: '2026-12-04T10:00:00.000Z',
  to: '2026-12-04T16:00:00.000Z',
  knownAtStart: true,
  markers: [],
  series: {
    desired: [],
    vmssCapacity: [],
    azureInstances: [],
    azureSucceeded: [],
    azureFailed: [],
    capz: [],
    capi: [],
    readyNodes: [],
  },
  lanes: [
    {
      field: 'amp.provisioningState',
      label: 'AzureMachinePool provisioningState',
      group: 'state',
      periods: [
        { start: '2026-12-04T10:00:00.000Z', end: '2026-12-04T12:00:00.000Z', value: 'Succeeded' },
        {
          start: '2026-12-04T12:00:00.000Z',
          end: '2026-12-04T12:00:20.000Z',
          value: '4 changes',
          detail: '2 different values in this span; choose a shorter range to see each.',
          merged: 4,
        },
        { start: '2026-12-04T12:00:20.000Z', end: '2026-12-04T16:00:00.000Z', value: 'Succeeded' },
      ],
    },
  ],
};

/** Draws one lane datum through the series' renderItem (1 pixel a second), on a coordinate system that holds it. */
function draw(lanes: Lanes, d: Datum) {
  const api = {
    value: (i: number) => d.value[i],
    coord: ([x, y]: number[]) => [(x as number) / 1000, (y as number) * 10],
    size: () => [0, 10],
    style: () => ({ fill: d.itemStyle.color }),
  };
  const dataIndex = lanes.data.indexOf(d);
  return lanes.renderItem({ dataIndex, coordSys: { x: -1e13, y: -1e3, width: 2e13, height: 2e3 } }, api);
}

/** The bar drawn, whether alone or with its name. */
const bar = (r: Drawn | null) => (r?.type === 'group' ? r.children?.[0] : r);
const nameIn = (r: Drawn | null) => (r?.type === 'group' ? r.children?.[1]?.style.text : undefined);

describe('buildOption', () => {
  it('draws a merged period translucent with a dashed outline, and a state solid', () => {
    const lanes = (buildOption(view, null, false) as { series: Lanes[] }).series[0] as Lanes;
    const [state, merged] = lanes.data;
    expect(merged?.value[6]).toBe(4);
    expect(state?.value[6]).toBe(0);
    const m = draw(lanes, merged as Datum);
    expect(bar(m)?.style).toMatchObject({ opacity: 0.45, lineDash: [3, 2] });
    const s = draw(lanes, state as Datum);
    expect(bar(s)?.style).toEqual({ fill: state?.itemStyle.color });
  });

  it("writes a state's name inside its bar where the whole name fits, dark on the pale normal colour", () => {
    const lanes = (buildOption(view, null, false) as { series: Lanes[] }).series[0] as Lanes;
    const [state, merged] = lanes.data;
    // Two hours at a pixel a second: room for "Succeeded"; the merged span's 20 pixels hold no "4 changes".
    const s = draw(lanes, state as Datum);
    expect(nameIn(s)).toBe('Succeeded');
    expect(s?.children?.[1]?.style.fill).toBe('#14532d');
    expect(nameIn(draw(lanes, merged as Datum))).toBeUndefined();
  });

  it("names the lanes in short and gives them less room on a phone's width, the tooltip keeping the full name", () => {
    type Shape = {
      yAxis: { data?: string[]; axisLabel: { width: number } }[];
      grid: { left: number }[];
      series: Lanes[];
    };
    const wide = buildOption(view, null, false) as Shape;
    const narrow = buildOption(view, null, false, true) as Shape;
    expect(wide.yAxis[0]?.data).toEqual(['AzureMachinePool provisioningState']);
    expect(narrow.yAxis[0]?.data).toEqual(['AMP provisioningState']);
    expect(narrow.grid.map((g) => g.left)).toEqual([150, 150]);
    expect(wide.grid.map((g) => g.left)).toEqual([260, 260]);
    expect(narrow.yAxis[0]?.axisLabel.width).toBeLessThan(wide.yAxis[0]?.axisLabel.width as number);
    expect(narrow.series[0]?.data[0]?.value[5]).toBe('AzureMachinePool provisioningState');
  });
});

describe('shortLabel', () => {
  it("shortens the kind that starts a lane's label, and nothing else", () => {
    expect(shortLabel('AzureMachinePool ScaleSetDesiredReplicas')).toBe('AMP ScaleSetDesiredReplicas');
    expect(shortLabel('MachinePool infrastructure ready')).toBe('MP infrastructure ready');
    expect(shortLabel('Finding: readiness-gate-frozen')).toBe('Finding: readiness-gate-frozen');
    expect(shortLabel('MachinePoolish')).toBe('MachinePoolish');
  });
});
