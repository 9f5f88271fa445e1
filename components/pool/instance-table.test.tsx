// A large pool's instance table: the first 100 rows, those with something to look at first, until asked for all.

import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { analyzePool } from '@/lib/analyze';
import { buildPool, healthyInstances } from '@/lib/fixtures/pool';
import { InstanceTable, firstRows } from './instance-table';

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
  it('shows every row when asked, in their own order', () => {
    expect(firstRows(d.instances, true)).toBe(d.instances);
  });
  it('shows a pool of up to 100 whole, without the note', () => {
    const small = d.instances.slice(0, 100);
    expect(firstRows(small, false)).toBe(small);
    expect(renderToStaticMarkup(<InstanceTable rows={small} />)).not.toContain('shown: those');
  });
});
