// The source bar as the server renders it: every source with its state, and a store that refuses the collector's
// writes said in words, since when and why.

import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { SourcesReport } from '@/lib/api-types';
import { SourceBar } from './source-bar';

const report = (store: SourcesReport['store']): SourcesReport => ({
  collecting: true,
  lastCycle: { id: 'c1', at: '2026-12-04T07:00:00.000Z' },
  kube: [
    { name: 'mgmt-weu', context: 'mgmt-weu', kind: 'management', state: 'live', since: '2026-12-04T06:00:00.000Z' },
  ],
  azure: [{ subscription: 'sub-a', state: 'throttled', since: '2026-12-04T06:50:00.000Z' }],
  store,
});

/** The markup's text, tags dropped. */
const text = (html: string) => html.replace(/<[^>]+>/g, '').replace(/&nbsp;/g, ' ');

describe('SourceBar', () => {
  it('lists every source with its state, and says nothing of the store while it takes writes', () => {
    const html = renderToStaticMarkup(<SourceBar sources={report({ state: 'ok', since: null, failingWrites: 0 })} />);
    expect(text(html)).toContain('Managementmgmt-weulive');
    expect(text(html)).toContain('Subscriptionsub-athrottled since');
    expect(html).not.toContain('role="alert"');
    expect(text(html)).not.toContain('Not recording');
  });

  it('names a subscription by the clusters that use it, its ID on hover; and stops saying live for stale data', () => {
    const r = report({ state: 'ok', since: null, failingWrites: 0 });
    const sub = '6f0a3c1e-2b4d-4e8f-9a1b-7c5d3e2f1a0b';
    r.azure = [
      { subscription: sub, state: 'live', since: '2026-12-04T06:50:00.000Z', usedBy: ['prod-neu', 'prod-weu'] },
    ];
    const html = renderToStaticMarkup(<SourceBar sources={r} />);
    expect(text(html)).toContain('Subscriptionof prod-neu, prod-weu (6f0a3c1e…)live');
    expect(html).toContain(`title="${sub}"`);
    const stale = text(renderToStaticMarkup(<SourceBar sources={r} stale />));
    expect(stale).toContain('live when last read');
    expect(stale).not.toMatch(/live(?! when last read)/);
  });

  it('says when the store refuses writes: since when, why, and that the changes wait', () => {
    const html = renderToStaticMarkup(
      <SourceBar
        sources={report({
          state: 'failing',
          since: '2026-12-04T06:58:00.000Z',
          failingWrites: 12,
          error: 'database or disk is full',
        })}
      />,
    );
    const alert = html.match(/<p role="alert"[^>]*>(.*?)<\/p>/)?.[1] ?? '';
    expect(text(alert)).toBe(
      'Not recording: the store has refused every write since 04 Dec 2026, 06:58:00 UTC (database or disk is full). What you see is as last stored; the changes since are stored once it takes writes again.',
    );
    expect(alert).toContain('dateTime="2026-12-04T06:58:00.000Z"');
  });
});
