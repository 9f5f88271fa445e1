// Every row of sim/world/upstream/capz-cases.ts run against the simulated CAPZ's behaviour functions, each as its
// own case named after its upstream source. A row that does not apply is listed as skipped, with the reason.

import { describe, expect, it } from 'vitest';
import { capzProvisioningState, capzReadySummary, type CapzCondition } from '../capz-behaviour';
import { PROVISIONING_CASES, SUMMARY_CASES, sourceName, type ExpectedCondition } from './capz-cases';

function expectConditions(actual: readonly CapzCondition[], expected: readonly ExpectedCondition[]): void {
  for (const e of expected) {
    const got = actual.find((c) => c.type === e.type);
    if ('absent' in e) {
      expect(got, e.type).toBeUndefined();
      continue;
    }
    expect(got, e.type).toBeDefined();
    const { type, ...fields } = e;
    expect(got, type).toMatchObject(fields);
  }
}

describe('CAPZ setProvisioningStateAndConditions, as upstream holds it', () => {
  for (const row of PROVISIONING_CASES) {
    const name = `[${row.behaviour}] ${sourceName(row.source)}`;
    if (row.notApplicable) {
      it.skip(`${name} — not applicable: ${row.notApplicable}`, () => {});
      continue;
    }
    it(name, () => {
      const got = capzProvisioningState(row.behaviour, row.input);
      if (row.expect.ready !== undefined) expect(got.ready, 'status.ready').toBe(row.expect.ready);
      if (row.expect.provisioningState !== undefined) expect(got.provisioningState, 'status.provisioningState').toBe(row.expect.provisioningState);
      expectConditions(got.conditions, row.expect.conditions ?? []);
    });
  }
});

describe('CAPZ Ready summary (CAPI SetSummary), as upstream holds it', () => {
  for (const row of SUMMARY_CASES) {
    const name = sourceName(row.source);
    if (row.notApplicable) {
      it.skip(`${name} — not applicable: ${row.notApplicable}`, () => {});
      continue;
    }
    it(name, () => {
      expect(capzReadySummary(row.conditions)).toEqual(row.expect);
    });
  }
});
