// S4's three findings read as one headline: the frozen list because the scale set is Failed because an instance
// failed. Others stand alone.

import { describe, expect, it } from 'vitest';
import { analyzePool } from './analyze';
import type { Finding } from './api-types';
import { groupFindings } from './finding-groups';
import { buildScenario } from './fixtures/scenarios';

const f = (code: Finding['code'], cause?: Finding['code']): Finding => ({
  code,
  severity: 'warning',
  summary: code,
  detail: '',
  suggestedAction: '',
  ...(cause ? { cause } : {}),
});
const codes = (gs: ReturnType<typeof groupFindings>) => gs.map((g) => [g.head.code, ...g.because.map((b) => b.code)]);

describe('groupFindings', () => {
  it('makes S4 one headline with its evidence, the rest on their own', () => {
    const b = buildScenario('s04-one-vm-failed-main');
    const d = analyzePool(b.input, { now: b.now });
    expect(codes(groupFindings(d.findings))[0]).toEqual(['readiness-gate-frozen', 'vmss-failed', 'instance-failed']);
    expect(groupFindings(d.findings).flatMap((g) => [g.head, ...g.because])).toHaveLength(d.findings.length);
  });

  it('leaves a finding whose cause is not among the findings alone, and survives a loop', () => {
    expect(codes(groupFindings([f('readiness-gate-frozen', 'vmss-failed'), f('paused')]))).toEqual([
      ['readiness-gate-frozen'],
      ['paused'],
    ]);
    expect(codes(groupFindings([f('vmss-failed', 'instance-failed'), f('instance-failed', 'vmss-failed')]))).toEqual([
      ['vmss-failed'],
      ['instance-failed'],
    ]);
  });
});
