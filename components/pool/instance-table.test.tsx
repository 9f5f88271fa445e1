// A large pool's instance table: the first 100 rows, those with something to look at first, until asked for all.

import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { analyzePool } from '@/lib/analyze';
import { buildPool, healthyInstances } from '@/lib/fixtures/pool';
import { firstRows } from '@/lib/first-rows';
import { firstView } from '@/lib/first-rows';
import { DriftMatrix } from './drift-matrix';
import { InstanceTable } from './instance-table';

describe('a pool of 300 instances, two of them Failed and one without a Node', () => {
  const d = analyzePool(
    buildPool({
      replicas: 300,
      instances: [
        ...healthyInstances(297),
        { member: '297', state: 'Failed' },
        { member: '298', node: 'none' },
        { member: '299', state: 'Failed' },
      ],
    }).input,
    { now: '2026-11-29T10:00:00Z' },
  );
  const names = (rows: readonly { azure: { name: string } | null }[]) => rows.map((r) => r.azure?.name);

  it('shows 100 at first, the three that need a look on top, and says so', () => {
    const shown = firstRows(d.instances, false);
    expect(shown).toHaveLength(100);
    expect(names(shown.slice(0, 3)).map((n) => n?.replace(/^.*_/, ''))).toEqual(['297', '298', '299']);
    const html = renderToStaticMarkup(<InstanceTable rows={d.instances} />);
    expect(html).toContain('Instances (300)');
    expect(html).toContain('100 of 300 shown: those with something to look at first.');
    expect(html.match(/<tr/g)).toHaveLength(101);
  });
  it('draws the drift matrix the same way: 100 rows, those that need a look first', () => {
    const html = renderToStaticMarkup(<DriftMatrix rows={d.instances} drift={d.drift} />);
    expect(html).toContain('100 of 300 shown: those with something to look at first.');
    expect(html.match(/<tr/g)).toHaveLength(101);
    expect(html.match(/data-instance="(\d+)"/g)?.slice(0, 3)).toEqual([
      'data-instance="297"',
      'data-instance="298"',
      'data-instance="299"',
    ]);
  });
  it("draws a page's first copy (100 rows, 200 held back) as it draws the whole pool", () => {
    const view = firstView({ pool: d, asOf: null, azureReadAt: null, azureNextRead: null });
    for (const el of [
      [
        <InstanceTable key="t" rows={d.instances} />,
        <InstanceTable key="t" rows={view.pool.instances} heldBack={view.heldBack} />,
      ],
      [
        <DriftMatrix key="m" rows={d.instances} drift={d.drift} />,
        <DriftMatrix key="m" rows={view.pool.instances} drift={d.drift} heldBack={view.heldBack} />,
      ],
    ])
      expect(renderToStaticMarkup(el[1])).toBe(renderToStaticMarkup(el[0]));
  });
  it('shows every row when asked, in their own order', () => {
    expect(firstRows(d.instances, true)).toBe(d.instances);
  });
  it('shows a pool of up to 100 whole, without the note', () => {
    const small = d.instances.slice(0, 100);
    expect(firstRows(small, false)).toBe(small);
    expect(renderToStaticMarkup(<InstanceTable rows={small} />)).not.toContain('shown: those');
  });
});
