// The diagnosis panel never stands empty: with no finding it says which source it could not read.

import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { Finding, PoolDetail } from '@/lib/api-types';
import { FindingsPanel } from './findings-panel';

const at = '2026-12-04T15:46:30.562Z';
const ok = { state: 'ok' } as const;
const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

describe('FindingsPanel', () => {
  it('says which sources are unread when there is no finding', () => {
    const sources: PoolDetail['sources'] = {
      kube: ok,
      workload: ok,
      azure: { state: 'unknown', reason: 'not read yet' },
    };
    const html = renderToStaticMarkup(<FindingsPanel findings={[]} sources={sources} at={at} live={false} />);
    expect(text(html)).toBe(
      'Diagnosis Nothing found so far, but not every source is read: Azure (not read yet). What poolscope cannot read, it cannot compare.',
    );
  });

  it('shows the findings, and no such sentence, when there are some', () => {
    const f: Finding = {
      code: 'healthy',
      severity: 'info',
      summary: 'Healthy: every source agrees.',
      detail: 'd',
      suggestedAction: 'None.',
    };
    const html = renderToStaticMarkup(
      <FindingsPanel findings={[f]} sources={{ kube: ok, workload: ok, azure: ok }} at={at} live={false} />,
    );
    expect(html).not.toContain('no-findings');
    expect(html).toContain('data-finding="healthy"');
  });
});
