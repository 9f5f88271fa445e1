import { describe, expect, it } from 'vitest';
import { analyzePool, isUnsettled } from './analyze';
import { buildScenario } from './fixtures/scenarios';
import { NOW, minutesBefore } from './fixtures/objects';
import { diffDetails, sameDetail } from './transitions';

const later = minutesBefore(NOW, -1);

describe('transitions', () => {
  it('records every field of a first analysis as a change from nothing', () => {
    const b = buildScenario('s05-flexible');
    const d = analyzePool(b.input, { now: b.now });
    const t = diffDetails(null, d, NOW);
    expect(t.map((x) => x.field)).toEqual(
      expect.arrayContaining([
        'amp.provisioningState',
        'amp.ready',
        'mp.phase',
        'replicas.desired',
        'list.mp',
        'condition.amp.Ready',
        'finding.healthy',
      ]),
    );
    expect(t.every((x) => x.from === null && x.at === NOW && x.poolKey === 'mgmt-weu/default/pool0')).toBe(true);
  });

  it('records a MachinePool deleted, and back, only then', () => {
    const b = buildScenario('s05-flexible');
    const d = analyzePool(b.input, { now: b.now });
    expect(diffDetails(null, d, NOW).filter((x) => x.field === 'pool')).toEqual([]);
    const gone = { ...d, summary: { ...d.summary, deletedAt: NOW } };
    expect(diffDetails(d, gone, NOW)).toEqual([
      { at: NOW, poolKey: d.summary.key, field: 'pool', from: 'present', to: 'deleted' },
    ]);
    expect(diffDetails(gone, d, NOW)).toEqual([
      { at: NOW, poolKey: d.summary.key, field: 'pool', from: 'deleted', to: 'present' },
    ]);
    const unwatched = { ...d, summary: { ...d.summary, unwatchedSince: NOW } };
    expect(diffDetails(d, unwatched, NOW)).toEqual([
      { at: NOW, poolKey: d.summary.key, field: 'pool', from: 'present', to: 'unwatched' },
    ]);
    expect(diffDetails(unwatched, d, NOW).map((e) => `${e.from}→${e.to}`)).toEqual(['unwatched→present']);
    expect(diffDetails(unwatched, unwatched, NOW)).toEqual([]);
  });

  it('records nothing when nothing changed, even as time passes', () => {
    const b = buildScenario('s01-scale-up-pre-fix');
    const a = analyzePool(b.input, { now: b.now });
    const c = analyzePool(b.input, { now: later, previous: a });
    expect(diffDetails(a, c, later)).toEqual([]);
    expect(sameDetail(a, c)).toBe(true);
  });

  it('records the freeze ending: ready flips, the list changes, drift clears, the finding ends', () => {
    const frozen = buildScenario('s01-scale-up-pre-fix');
    const a = analyzePool(frozen.input, { now: frozen.now });
    const healed = buildScenario('s01-scale-up-pre-fix', { amp: { ready: true }, mp: {} });
    const c = analyzePool(healed.input, { now: later, previous: a });
    const t = diffDetails(a, c, later);
    const by = (f: string) => t.filter((x) => x.field === f).map((x) => [x.from, x.to]);
    expect(by('amp.ready')).toEqual([['false', 'true']]);
    expect(by('finding.readiness-gate-frozen')).toEqual([['critical', null]]);
    expect(by('drift').map(([from, to]) => [from?.split('/').pop(), to])).toEqual([
      ['3', null],
      ['4', null],
    ]);
    expect(by('list.mp')).toHaveLength(1);
    expect(sameDetail(a, c)).toBe(false);
  });
});

describe('isUnsettled', () => {
  it('is false for a healthy pool and true for a frozen, a scaling or a drifting one', () => {
    const d = (id: string) => {
      const b = buildScenario(id);
      return analyzePool(b.input, { now: b.now });
    };
    expect(isUnsettled(d('s05-flexible'))).toBe(false);
    expect(isUnsettled(d('s01-scale-up-pre-fix'))).toBe(true);
    expect(isUnsettled(d('s02-scale-up-post-fix'))).toBe(true);
    expect(isUnsettled(d('s12-order-churn'))).toBe(true);
  });
});

describe('drift entries', () => {
  it('name each item by its kind and the ID as a source spells it, not the lower-cased join key', () => {
    const b = buildScenario('s06-case-mismatch');
    const d = analyzePool(b.input, { now: b.now });
    const item = d.drift.find((x) => x.kind === 'case-mismatch');
    expect(item?.providerID).toMatch(/[A-Z]/);
    const appeared = diffDetails({ ...d, drift: [] }, d, later).filter((x) => x.field === 'drift');
    expect(appeared.map((x) => x.to)).toContain(`case-mismatch:${item?.providerID}`);
    expect(appeared.every((x) => x.to !== x.to?.toLowerCase())).toBe(true);
    // A cleared item says what it was, spellings included.
    const cleared = diffDetails(d, { ...d, drift: [] }, later).find((x) => x.from?.startsWith('case-mismatch:'));
    expect(cleared).toMatchObject({ to: null, detail: item?.summary });
    expect(cleared?.detail).toMatch(/Spellings: /);
  });
});
