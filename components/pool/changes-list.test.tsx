// The list of changes as the server renders it: a change whose value stayed says what changed instead.

import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { TimelineEntry } from '@/lib/api-types';
import { ChangesList, olderThanShown } from './changes-list';

const at = '2026-12-04T15:46:30.562Z';
const entry = (field: string, from: string | null, to: string | null, detail?: string): TimelineEntry => ({
  at,
  poolKey: 'ctx/ns/pool',
  field,
  from,
  to,
  ...(detail === undefined ? {} : { detail }),
});
/** Each row's cells' text, tags dropped. */
const rows = (html: string) =>
  [...html.matchAll(/<tr[^>]*>(.*?)<\/tr>/g)]
    .slice(1)
    .map((m) =>
      [...(m[1] as string).matchAll(/<td[^>]*>(.*?)<\/td>/g)].map((c) => (c[1] as string).replace(/<[^>]+>/g, '')),
    );

describe('ChangesList', () => {
  it("says what changed when a value stayed the same: a finding's summary, a condition's message", () => {
    const entries = [
      entry('finding.readiness-gate-frozen', null, 'critical', 'frozen: 3 AMPMs ready'),
      entry('finding.readiness-gate-frozen', 'critical', 'critical', 'frozen: 1 instance failed'),
      entry('condition.amp.Ready', 'False/Creating', 'False/Creating', 'still creating'),
      entry('replicas.capz', '3', '4'),
    ];
    const r = rows(renderToStaticMarkup(<ChangesList entries={entries} total={entries.length} />));
    // Newest first: what, from, to, detail, in words.
    expect(r.map((c) => c.slice(1))).toEqual([
      ['Replicas: CAPZ replicas', '3', '4', ''],
      ['AzureMachinePool condition Ready', 'False/Creating', 'False/Creating(new message)', 'still creating'],
      ['Finding: readiness-gate-frozen', 'critical', 'critical(new summary)', 'frozen: 1 instance failed'],
      ['Finding: readiness-gate-frozen', '—', 'critical', 'frozen: 3 AMPMs ready'],
    ]);
    // One instant: its time on its first row only.
    expect(r.map((c) => c[0])).toEqual([
      expect.stringContaining('2026'),
      'same instant',
      'same instant',
      'same instant',
    ]);
  });

  it("names an AKS pool's infra object, its ASO agent pool and its drift badges after their kinds", () => {
    const id =
      'azure:///subscriptions/s/resourceGroups/mc_rg/providers/Microsoft.Compute/virtualMachineScaleSets/aks-jobs-vmss/virtualMachines/3';
    const entries = [
      entry('condition.aso.Ready', 'True', 'False/Reconciling'),
      entry('amp.ready', 'true', 'false'),
      entry('drift', null, `missing-from-azuremachinepool:${id}`),
    ];
    const r = rows(renderToStaticMarkup(<ChangesList entries={entries} total={entries.length} flavour="aks-aso" />));
    expect(r.map((c) => c.slice(1, 4))).toEqual([
      ['Drift', '—', 'missing from ASO-MP: virtualMachines/3'],
      ['AzureASOManagedMachinePool ready', 'true', 'false'],
      ['ASO agent pool condition Ready', 'True', 'False/Reconciling'],
    ]);
  });

  it("says a list's change as its count of IDs, and offers a toggle for each kind present, with its count", () => {
    const entries = [
      entry('list.amp', '3:16329caf', '4:b6f3b055'),
      entry('finding.scaling', null, 'info', 'Scaling from 3 to 4 replicas.'),
      { ...entry('event.ScaleSetScaling', null, 'AzureMachinePool/pool0'), at: '2026-12-04T15:46:31Z' },
    ];
    const html = renderToStaticMarkup(<ChangesList entries={entries} total={entries.length} />);
    expect(rows(html).at(-1)?.slice(1, 4)).toEqual(['AzureMachinePool list', '3 IDs', '4 IDs']);
    const reordered = renderToStaticMarkup(
      <ChangesList entries={[entry('list.mp', '6:16329caf', '6:b6f3b055')]} total={1} />,
    );
    expect(rows(reordered)[0]?.slice(2, 4)).toEqual(['6 IDs', '6 IDs, other IDs or order']);
    const toggles = [...html.matchAll(/<button[^>]*aria-pressed="true"[^>]*>(.*?)<\/button>/g)].map((m) =>
      (m[1] as string).replace(/<!-- -->/g, ''),
    );
    expect(toggles).toEqual(['Findings (1)', 'Drift and lists (1)', 'Events (1)']);
  });

  it('breaks long IDs after their slashes, not mid-word, and keeps their text', () => {
    const id =
      'azure:///subscriptions/6f0a/resourceGroups/prod-weu/providers/Microsoft.Compute/virtualMachineScaleSets/spot/virtualMachines/1';
    const entries = [
      entry(
        'event.UnexpectedVMDeletion',
        null,
        'AzureMachinePool/spot',
        `Warning: VM 1 (${id}) was deleted outside of CAPZ`,
      ),
      entry('condition.amp.Ready', 'True', 'False/ScaleSetModelOutOfDate'),
    ];
    const html = renderToStaticMarkup(<ChangesList entries={entries} total={entries.length} />);
    expect(html).not.toContain('break-all');
    const r = rows(html);
    expect(r[0]?.[3]).toBe('False/ScaleSetModelOutOfDate');
    expect(r[1]?.[4]).toBe(`Warning: VM 1 (${id}) was deleted outside of CAPZ`);
    // A break opportunity after each slash of the ID, none inside its words.
    expect(html).toContain('virtualMachineScaleSets/<wbr/>spot/<wbr/>virtualMachines/<wbr/>1');
    expect(html).toContain('False/<wbr/>ScaleSetModelOutOfDate');
  });
});

describe('older changes', () => {
  const e = (at: string, field: string): TimelineEntry => ({ at, poolKey: 'ctx/ns/pool', field, from: null, to: 'x' });
  const T1 = '2026-12-04T10:00:01.000Z';
  const T2 = '2026-12-04T10:00:02.000Z';
  it("leave out the oldest instant's changes the list shows, whichever they are", () => {
    // Shown oldest first: the last two of T1's three changes, then T2's.
    const shown = [e(T1, 'b'), e(T1, 'c'), e(T2, 'd')];
    // A page up to T1, newest first: T1's three (c, b, a), then older ones.
    const page = [e(T1, 'c'), e(T1, 'b'), e(T1, 'a'), e('2026-12-04T10:00:00.000Z', 'z')];
    expect(olderThanShown(shown, page).map((x) => x.field)).toEqual(['a', 'z']);
    expect(olderThanShown([], page)).toEqual(page);
  });
  it('can be loaded when the window holds more than the list was given', () => {
    const shown = [e(T1, 'b'), e(T2, 'd')];
    const source = { apiPath: '/api/pools/c/n/p', from: T1, to: T2 };
    expect(renderToStaticMarkup(<ChangesList entries={shown} total={5} source={source} />)).toContain(
      'Load older changes',
    );
    expect(renderToStaticMarkup(<ChangesList entries={shown} total={2} source={source} />)).not.toContain(
      'Load older changes',
    );
  });
});
