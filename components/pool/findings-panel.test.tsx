// The diagnosis panel: never empty; findings that follow from one another as one headline with its evidence; the
// worst one open with what to do, names filled in and commands to copy; each finding's age.

import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { analyzePool } from '@/lib/analyze';
import type { Finding, PoolDetail } from '@/lib/api-types';
import { buildScenario } from '@/lib/fixtures/scenarios';
import { FindingsPanel } from './findings-panel';

const ok = { state: 'ok' } as const;
const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#x27;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/\s+/g, ' ')
    .trim();

function detailWith(findings: Finding[], sources: PoolDetail['sources']): PoolDetail {
  const b = buildScenario('s02-scale-up-post-fix');
  return { ...analyzePool(b.input, { now: b.now }), findings, sources };
}

describe('FindingsPanel', () => {
  it('says which sources are unread when there is no finding', () => {
    const d = detailWith([], { kube: ok, workload: ok, azure: { state: 'unknown', reason: 'not read yet' } });
    expect(text(renderToStaticMarkup(<FindingsPanel detail={d} live={false} />))).toBe(
      'Diagnosis Nothing found so far, but not every source is read: Azure (not read yet). What poolscope cannot read, it cannot compare.',
    );
  });

  it('shows a healthy pool closed, with no such sentence', () => {
    const f: Finding = {
      code: 'healthy',
      severity: 'info',
      summary: 'Healthy.',
      detail: 'd',
      suggestedAction: 'None.',
    };
    const html = renderToStaticMarkup(
      <FindingsPanel detail={detailWith([f], { kube: ok, workload: ok, azure: ok })} live={false} />,
    );
    expect(html).not.toContain('no-findings');
    expect(html).toContain('data-finding="healthy"');
    expect(html).not.toContain('<details open');
  });

  it('keeps information closed: a pool scaling needs nothing done, and its second finding takes one line', () => {
    const info = (code: Finding['code'], summary: string): Finding => ({
      code,
      severity: 'info',
      summary,
      detail: 'd',
      suggestedAction: 'None while it converges.',
    });
    const d = detailWith([info('scaling', 'Scaling from 5 to 6.'), info('order-only', 'Another order.')], {
      kube: ok,
      workload: ok,
      azure: ok,
    });
    const html = renderToStaticMarkup(<FindingsPanel detail={d} live={false} />);
    expect(html).not.toContain('<details open');
    // The second one's age is on its headline's line, not a line of its own.
    const second = html.slice(html.indexOf('data-finding="order-only"'));
    const line = second.slice(second.indexOf('<p'), second.indexOf('</p>'));
    expect(text(line)).toBe('info Another order. already so when poolscope began watching');
  });
});

describe('S4: the frozen list, because the scale set is Failed, because an instance failed', () => {
  const b = buildScenario('s04-one-vm-failed-main');
  const d = analyzePool(b.input, { now: b.now });
  const html = renderToStaticMarkup(<FindingsPanel detail={d} live={false} />);
  const heads = html.match(/<li data-finding="[^"]+" class="rounded/g) ?? [];

  it('is one headline, its causes listed under it, with their ages', () => {
    expect(heads[0]).toContain('readiness-gate-frozen');
    expect(heads.join()).not.toContain('"vmss-failed"');
    const t = text(html);
    expect(t).toContain(
      'because critical Scale set pool0 is in provisioningState Failed (1 instance failed: OSProvisioningTimedOut).',
    );
    expect(t).toMatch(/MachinePool providerIDList frozen for 14 min: .* since 29 Nov 2026, 11:46:00 UTC · for 14 min/);
  });

  it('opens with what to do, the root cause first, and the command to delete the failed Machine by name', () => {
    expect(html).toContain('<details open');
    const todo = text(html.match(/<ol[^>]*data-testid="what-to-do".*?<\/ol>/)?.[0] ?? '');
    expect(todo).toMatch(/^Delete the Machine of each failed instance/);
    const steps = text(html.match(/<ul[^>]*data-testid="next-steps".*?<\/ul>/)?.[0] ?? '');
    expect(steps).toContain(
      `Replace pool0_2 (failed): delete its Machine; CAPZ deletes the VM and the scale set makes a new one kubectl --context ${d.summary.ref.context} -n default delete machine pool0-2 Copy`,
    );
    expect(html).toContain('href="https://github.com/kubernetes-sigs/cluster-api-provider-azure/issues/6488"');
  });
});
