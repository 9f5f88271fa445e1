// An instance newer than Azure's last read is shown as not read yet, not as absent from Azure, in both tables.

import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { analyzePool } from '@/lib/analyze';
import { buildPool, healthyInstances } from '@/lib/fixtures/pool';
import { DriftMatrix } from './drift-matrix';
import { InstanceTable } from './instance-table';

const text = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/&#x27;/g, "'").replace(/\s+/g, ' ').trim();
const row = (html: string, member: string) => text(html.match(new RegExp(`<tr[^>]*data-instance="${member}".*?</tr>`))?.[0] ?? '');

describe('an instance newer than Azure\'s last read', () => {
  // Azure listed the scale set a minute ago; instance 3's AMPM is 30 s old; instance 4's VM is gone (AMPM 5 min old).
  const d = analyzePool(buildPool({
    replicas: 4, capacity: 4, azureReadMinutesAgo: 1,
    instances: [...healthyInstances(3), { member: '3', inAzure: false, node: 'none', createdMinutesAgo: 0.5 }, { member: '4', inAzure: false, node: 'none', createdMinutesAgo: 5 }],
  }).input, { now: '2026-11-29T12:00:00Z' });

  it('reads "not read yet" in the Azure column of the drift matrix, and "absent" for a VM that is gone', () => {
    const html = renderToStaticMarkup(<DriftMatrix rows={d.instances} drift={d.drift} />);
    expect(row(html, '3')).toBe('3 … not read yet ✓ ✓ ✓ ✓ ✗ absent');
    expect(row(html, '4')).toMatch(/^4 ✗ absent ✓ ✓ ✓ ✓ ✗ absent /);
    expect(text(html)).toContain('1 instance newer than Azure\'s last read waits for the next one.');
  });

  it('says every source agrees only on what Azure has been asked about, when nothing else drifts', () => {
    const calm = { ...d, instances: d.instances.filter((r) => !r.providerID.endsWith('/4')) };
    const html = renderToStaticMarkup(<DriftMatrix rows={calm.instances} drift={[]} />);
    expect(text(html)).toContain('Every source agrees on every instance Azure has been asked about. 1 instance newer than Azure\'s last read waits for the next one.');
  });

  it('reads "not read yet" in the instance table, and "not in Azure" for a VM that is gone', () => {
    const html = text(renderToStaticMarkup(<InstanceTable rows={d.instances} />));
    expect(html.match(/not read yet/g)).toHaveLength(1);
    expect(html.match(/not in Azure/g)).toHaveLength(1);
  });
});
