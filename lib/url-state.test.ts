import { describe, expect, it } from 'vitest';
import { analyzePool } from './analyze';
import type { FindingCode, PoolSummary } from './api-types';
import { buildScenario } from './fixtures/scenarios';
import {
  explicitWindow,
  fleetQuery,
  parseFleetParams,
  parseInstant,
  parseWindow,
  poolPath,
  readInstant,
  selectPools,
  severityCounts,
  zoomQuery,
  windowQuery,
  withoutSeverity,
} from './url-state';

const NOW = Date.parse('2026-11-29T12:00:00.000Z');

describe('fleet filters in the URL', () => {
  it('round-trips every filter and the sort', () => {
    const q =
      'context=mgmt-weu&namespace=default&drifting=1&notReady=1&q=work&severity=critical&sort=-lastChange&group=cluster';
    const f = parseFleetParams(new URLSearchParams(q));
    expect(f).toEqual({
      context: 'mgmt-weu',
      namespace: 'default',
      drifting: true,
      notReady: true,
      deleted: false,
      q: 'work',
      severity: 'critical',
      sort: 'lastChange',
      desc: true,
      group: 'cluster',
    });
    expect(fleetQuery(f)).toBe(q);
    // The grouping is the page's: the API is read without it, and an unknown one is none.
    expect(fleetQuery(withoutSeverity(f))).not.toContain('group');
    expect(parseFleetParams({ group: 'region' }).group).toBeUndefined();
  });
  it('falls back to defaults for an old or wrong sort, and keeps default links empty', () => {
    expect(parseFleetParams({ sort: 'bogus', severity: 'high' })).toEqual({
      drifting: false,
      notReady: false,
      deleted: false,
      sort: 'finding',
      desc: false,
    });
    expect(fleetQuery(parseFleetParams({}))).toBe('');
  });

  it('filters drifting and not-ready pools, by text, and sorts worst first', () => {
    const frozen = analyzePool(buildScenario('s01-scale-up-pre-fix').input, {
      now: '2026-11-29T10:00:00.000Z',
    }).summary;
    const flex = analyzePool(buildScenario('s05-flexible').input, { now: '2026-11-29T10:00:00.000Z' }).summary;
    const calm = { ...flex, key: 'mgmt-neu/default/calm', ref: { ...flex.ref, context: 'mgmt-neu', name: 'calm' } };
    const pools = [calm, frozen];
    expect(selectPools(pools, parseFleetParams({ drifting: '1' })).map((p) => p.key)).toEqual(
      [calm, frozen].filter((p) => Object.keys(p.driftCounts).length > 0).map((p) => p.key),
    );
    expect(selectPools(pools, parseFleetParams({ notReady: '1' })).map((p) => p.key)).toEqual([frozen.key]);
    expect(selectPools(pools, parseFleetParams({ q: 'CALM' })).map((p) => p.key)).toEqual([calm.key]);
    expect(selectPools(pools, parseFleetParams({})).map((p) => p.key)[0]).toBe(frozen.key);
    expect(selectPools(pools, parseFleetParams({ sort: 'pool' })).map((p) => p.ref.name)).toEqual(['calm', 'pool0']);
    expect(selectPools(pools, parseFleetParams({ sort: '-pool' })).map((p) => p.ref.name)).toEqual(['pool0', 'calm']);
  });

  it("filters by the worst finding's severity, counts each, and reads the fleet without it", () => {
    const flex = analyzePool(buildScenario('s05-flexible').input, { now: '2026-11-29T10:00:00.000Z' }).summary;
    const pool = (name: string, worstFinding: PoolSummary['worstFinding']): PoolSummary => ({
      ...flex,
      key: `mgmt-weu/default/${name}`,
      ref: { ...flex.ref, name },
      worstFinding,
    });
    const all = [
      pool('a', { code: 'readiness-gate-frozen', severity: 'critical', summary: 'frozen' }),
      pool('b', { code: 'instance-failed', severity: 'warning', summary: 'failed' }),
      pool('c', { code: 'healthy', severity: 'info', summary: 'healthy' }),
      pool('d', { code: 'vmss-failed', severity: 'critical', summary: 'failed' }),
      pool('e', null),
    ];
    expect(selectPools(all, parseFleetParams({ severity: 'critical', sort: 'pool' })).map((p) => p.ref.name)).toEqual([
      'a',
      'd',
    ]);
    expect(selectPools(all, parseFleetParams({ severity: 'info' })).map((p) => p.ref.name)).toEqual(['c']);
    expect(severityCounts(all)).toEqual({ critical: 2, warning: 1, info: 1, none: 1, healthy: 1 });
    expect(severityCounts([])).toEqual({ critical: 0, warning: 0, info: 0, none: 0, healthy: 0 });
    const f = parseFleetParams({ severity: 'warning', drifting: '1' });
    expect(withoutSeverity(f)).toEqual({
      drifting: true,
      notReady: false,
      deleted: false,
      sort: 'finding',
      desc: false,
    });
    expect(fleetQuery(withoutSeverity(f))).toBe('drifting=1');
  });

  it('puts, within a severity, the pools that need a look first: a finding but healthy, not ready, then the most drift', () => {
    const flex = analyzePool(buildScenario('s05-flexible').input, { now: '2026-11-29T10:00:00.000Z' }).summary;
    const info = (code: FindingCode) => ({ code, severity: 'info' as const, summary: code });
    const pool = (name: string, over: Partial<PoolSummary>): PoolSummary => ({
      ...flex,
      key: `mgmt-weu/default/${name}`,
      ref: { ...flex.ref, name },
      ...over,
    });
    const healthy = pool('a-healthy', { worstFinding: info('healthy'), ampReady: true, driftCounts: {} });
    const scaling = pool('b-scaling', {
      worstFinding: info('scaling'),
      ampReady: true,
      driftCounts: { 'missing-from-machinepool': 1 },
    });
    const scalingMore = pool('c-scaling', {
      worstFinding: info('scaling'),
      ampReady: true,
      driftCounts: { 'missing-from-machinepool': 2, 'instance-without-node': 1 },
    });
    const notReady = pool('d-not-ready', { worstFinding: info('scaling'), ampReady: false, driftCounts: {} });
    const warning = pool('e-warning', {
      worstFinding: { code: 'instance-failed' as const, severity: 'warning' as const, summary: 'x' },
      ampReady: true,
      driftCounts: {},
    });
    const all = [healthy, scaling, scalingMore, notReady, warning];
    expect(selectPools(all, parseFleetParams({})).map((p) => p.ref.name)).toEqual([
      'e-warning',
      'd-not-ready',
      'c-scaling',
      'b-scaling',
      'a-healthy',
    ]);
    expect(selectPools(all, parseFleetParams({ sort: '-finding' })).map((p) => p.ref.name)).toEqual([
      'a-healthy',
      'b-scaling',
      'c-scaling',
      'd-not-ready',
      'e-warning',
    ]);
  });

  it('hides deleted pools unless asked for, in the link too', () => {
    const flex = analyzePool(buildScenario('s05-flexible').input, { now: '2026-11-29T10:00:00.000Z' }).summary;
    const gone = {
      ...flex,
      key: 'mgmt-weu/default/gone',
      ref: { ...flex.ref, name: 'gone' },
      deletedAt: '2026-11-29T11:00:00.000Z',
    };
    const away = {
      ...flex,
      key: 'other/default/away',
      ref: { ...flex.ref, context: 'other', name: 'away' },
      unwatchedSince: '2026-11-29T11:00:00.000Z',
    };
    expect(selectPools([flex, gone, away], parseFleetParams({})).map((p) => p.ref.name)).toEqual(['pool0']);
    expect(
      selectPools([flex, gone, away], parseFleetParams({ deleted: '1', sort: 'pool' })).map((p) => p.ref.name),
    ).toEqual(['away', 'gone', 'pool0']);
    const shown = parseFleetParams({ deleted: '1', sort: 'pool' });
    expect(shown.deleted).toBe(true);
    expect(selectPools([flex, gone], shown).map((p) => p.ref.name)).toEqual(['gone', 'pool0']);
    expect(fleetQuery(shown)).toBe('deleted=1&sort=pool');
  });
});

describe('pool page time window', () => {
  it('defaults to the last 6 hours', () => {
    expect(parseWindow({}, NOW)).toEqual({
      ok: true,
      window: { from: '2026-11-29T06:00:00.000Z', to: '2026-11-29T12:00:00.000Z', at: null, range: '6h' },
    });
  });
  it('ends a named range at `at`, and takes explicit from/to in any offset', () => {
    expect(parseWindow({ range: '1h', at: '2026-11-29T10:30:00+01:00' }, NOW)).toEqual({
      ok: true,
      window: {
        from: '2026-11-29T08:30:00.000Z',
        to: '2026-11-29T09:30:00.000Z',
        at: '2026-11-29T09:30:00.000Z',
        range: '1h',
      },
    });
    expect(parseWindow({ from: '2026-11-29T10:00:00Z', to: '2026-11-29T11:00:00Z' }, NOW)).toEqual({
      ok: true,
      window: { from: '2026-11-29T10:00:00.000Z', to: '2026-11-29T11:00:00.000Z', at: null, range: null },
    });
  });
  it.each([
    [{ at: 'yesterday' }, /"at" must be an RFC 3339 instant/],
    [{ at: '2026-13-45T99:00:00Z' }, /"at" names a month that does not exist \(13; months run 01 to 12\)/],
    [{ range: '2w' }, /"range" must be one of 1h, 6h, 24h, 7d, 30d; got "2w"/],
    [{ from: '2026-11-29T11:00:00Z', to: '2026-11-29T10:00:00Z' }, /"from" .* must be before "to"/],
    [{ from: 'x' }, /"from" must be an RFC 3339 instant/],
    [{ from: '2026-01-01T00:00:00Z', to: '2026-11-29T10:00:00Z' }, /at most 31 days/],
  ])('rejects %j with a message saying what is expected', (params, message) => {
    const r = parseWindow(params, NOW);
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.error).toMatch(message);
  });
  it.each(['toString', '__proto__', 'constructor', 'hasOwnProperty', 'valueOf'])(
    'refuses range=%s, a key every object inherits, as an unknown range',
    (range) => {
      expect(parseWindow({ range }, NOW)).toEqual({
        ok: false,
        error: `"range" must be one of 1h, 6h, 24h, 7d, 30d; got "${range}".`,
      });
      expect(parseWindow(new URLSearchParams({ range }), NOW).ok).toBe(false);
    },
  );
  it.each([
    ['2026-02-30T10:00:00Z', 'names a day that does not exist (February 2026 has 28 days)'],
    ['2026-04-31T10:00:00Z', 'names a day that does not exist (April 2026 has 30 days)'],
    ['2026-00-10T10:00:00Z', 'names a month that does not exist (00; months run 01 to 12)'],
    [
      '2026-11-29T25:00:00Z',
      'names a time of day that does not exist (hours run 00 to 23, minutes and seconds 00 to 59)',
    ],
    [
      '2026-11-29T24:00:00Z',
      'names a time of day that does not exist (hours run 00 to 23, minutes and seconds 00 to 59)',
    ],
    [
      '2026-11-29T10:60:00Z',
      'names a time of day that does not exist (hours run 00 to 23, minutes and seconds 00 to 59)',
    ],
    ['2026-11-29T10:00:00+24:00', 'has a UTC offset that does not exist (at most ±23:59)'],
  ])('refuses %s, which Date would roll over into another instant', (at, why) => {
    expect(readInstant(at)).toEqual({ ok: false, error: why });
    expect(parseInstant(at)).toBeNull();
    expect(parseWindow({ at }, NOW)).toEqual({ ok: false, error: `"at" ${why}; got "${at}".` });
  });
  it('takes every real day, 29 February of a leap year included, and any offset', () => {
    expect(readInstant('2028-02-29T23:59:59.5+01:30')).toEqual({ ok: true, iso: '2028-02-29T22:29:59.500Z' });
    expect(readInstant('2000-02-29T00:00:00Z')).toEqual({ ok: true, iso: '2000-02-29T00:00:00.000Z' });
    expect(readInstant('1900-02-29T00:00:00Z').ok).toBe(false);
    expect(readInstant('2026-12-31T00:00:00-23:59')).toEqual({ ok: true, iso: '2026-12-31T23:59:00.000Z' });
  });
  it('refuses an `at` in the future beyond a minute of clock skew', () => {
    const soon = new Date(NOW + 59_000).toISOString();
    expect(parseWindow({ at: soon }, NOW)).toMatchObject({ ok: true, window: { at: soon } });
    expect(parseWindow({ at: '2026-11-29T12:02:00Z', range: '1h' }, NOW)).toEqual({
      ok: false,
      error:
        '"at": 2026-11-29T12:02:00.000Z is in the future (it is now 2026-11-29T12:00:00.000Z): poolscope shows a pool as it is or was, not as it will be.',
    });
  });
  it('caps the window whichever ends are given: from alone ends now, to alone starts the default range before', () => {
    expect(parseWindow({ from: '0001-01-01T00:00:00Z' }, NOW)).toEqual({
      ok: false,
      error: expect.stringMatching(
        /^A time range can span at most 31 days; "from" \(0001-01-01T00:00:00.000Z\) to "to" \(2026-11-29T12:00:00.000Z, now\) spans more\.$/,
      ),
    });
    expect(parseWindow({ from: '2026-11-29T11:00:00Z' }, NOW)).toEqual({
      ok: true,
      window: { from: '2026-11-29T11:00:00.000Z', to: '2026-11-29T12:00:00.000Z', at: null, range: null },
    });
    expect(parseWindow({ to: '2026-11-29T11:00:00Z' }, NOW)).toEqual({
      ok: true,
      window: { from: '2026-11-29T05:00:00.000Z', to: '2026-11-29T11:00:00.000Z', at: null, range: null },
    });
    expect(parseWindow({ from: '2026-11-29T13:00:00Z' }, NOW)).toEqual({
      ok: false,
      error: '"from" (2026-11-29T13:00:00.000Z) must be before "to" (2026-11-29T12:00:00.000Z, now).',
    });
    expect(explicitWindow(undefined, undefined, NOW)).toEqual({
      ok: true,
      from: '2026-11-29T06:00:00.000Z',
      to: '2026-11-29T12:00:00.000Z',
    });
  });
  it('writes short links', () => {
    expect(windowQuery({ range: '6h', from: '', to: '', at: null })).toBe('');
    expect(windowQuery({ range: '24h', from: '', to: '', at: '2026-11-29T10:00:00.000Z' })).toBe(
      'range=24h&at=2026-11-29T10%3A00%3A00.000Z',
    );
    expect(poolPath({ context: 'mgmt/weu', namespace: 'default', name: 'p' })).toBe('/pools/mgmt%2Fweu/default/p');
  });
});

describe('zoomQuery', () => {
  it('puts the zoomed span in whole seconds, outward, and keeps the instant shown only inside it', () => {
    const q = (at: string | null) =>
      new URLSearchParams(zoomQuery({ at }, '2026-12-06T06:00:00.400Z', '2026-12-06T06:10:00.200Z'));
    expect(Object.fromEntries(q(null))).toEqual({ from: '2026-12-06T06:00:00.000Z', to: '2026-12-06T06:10:01.000Z' });
    expect(q('2026-12-06T06:05:00.000Z').get('at')).toBe('2026-12-06T06:05:00.000Z');
    expect(q('2026-12-06T07:00:00.000Z').get('at')).toBeNull();
  });
});
