// Every row of sim/world/upstream/capz-cases.ts run against the simulated CAPZ's behaviour functions, each as its
// own case named after its upstream source. A row that does not apply is listed as skipped, with the reason.

import { describe, expect, it } from 'vitest';
import { buildScenario, SCENARIOS } from '../../../lib/fixtures/scenarios';
import type { KubeObject } from '../../../lib/unstructured';
import {
  capzLabelValue,
  capzProvisioningState,
  capzReadySummary,
  capzReplicasAndProviderIds,
  givenOrder,
  type CacheOrder,
  type CapzCondition,
} from '../capz-behaviour';
import {
  LABEL_VALUE_CASES,
  PROVISIONING_CASES,
  REPLICAS_CASES,
  SUMMARY_CASES,
  sourceName,
  type AmpmFact,
  type ExpectedCondition,
} from './capz-cases';

/** A row's machine as the API server holds it. */
const ampmObject = (a: AmpmFact): KubeObject => ({
  apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
  kind: 'AzureMachinePoolMachine',
  metadata: { name: a.name, namespace: a.namespace, labels: a.labels },
  spec: { providerID: a.providerID },
  status: { ready: a.ready, provisioningState: 'Succeeded' },
});

/** The cache hands the objects back in the row's order (indexes into what it holds). */
const fixedOrder =
  (order: readonly number[]): CacheOrder =>
  <T>(items: readonly T[]) =>
    order.map((i) => items[i] as T);

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
      if (row.expect.provisioningState !== undefined)
        expect(got.provisioningState, 'status.provisioningState').toBe(row.expect.provisioningState);
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

describe('CAPZ updateReplicasAndProviderIDs, as upstream holds it', () => {
  for (const row of REPLICAS_CASES) {
    const name = `[${row.behaviour}] ${sourceName(row.source)}`;
    if (row.notApplicable) {
      it.skip(`${name} — not applicable: ${row.notApplicable}`, () => {});
      continue;
    }
    it(name, () => {
      const order = row.input.cacheOrder ? fixedOrder(row.input.cacheOrder) : givenOrder;
      const got = capzReplicasAndProviderIds(row.behaviour, row.input.pool, row.input.ampms.map(ampmObject), order);
      if (row.expect.replicas !== undefined) expect(got.replicas, 'status.replicas').toBe(row.expect.replicas);
      if (row.expect.providerIDList)
        expect(got.providerIDList, 'spec.providerIDList').toEqual(row.expect.providerIDList);
      if (row.expect.providerIDs)
        expect([...got.providerIDList].sort(), 'spec.providerIDList (any order)').toEqual(
          [...row.expect.providerIDs].sort(),
        );
    });
  }
});

describe('the MachinePool name as a label value (CAPI format.MustFormatValue), as upstream holds it', () => {
  for (const row of LABEL_VALUE_CASES) {
    it(sourceName(row.source), () => {
      expect(capzLabelValue(row.name)).toBe(row.expect);
    });
  }
});

describe('the AzureMachinePools of lib/fixtures carry the severity CAPZ writes', () => {
  // Every generation marks its ScaleSet conditions False with severity Info (PROVISIONING_CASES above), and the
  // Ready summary of Info conditions is Info.
  for (const s of SCENARIOS) {
    it(`${s.id}: every False ScaleSet or Ready condition is Info`, () => {
      const amp = buildScenario(s.id).input.azureMachinePool;
      const conditions = (amp?.status?.conditions as CapzCondition[] | undefined) ?? [];
      const scaleSet = conditions.filter(
        (c) => c.status === 'False' && (c.type === 'Ready' || c.type.startsWith('ScaleSet')),
      );
      expect(scaleSet.map((c) => [c.type, c.reason, c.severity])).toEqual(
        scaleSet.map((c) => [c.type, c.reason, 'Info']),
      );
    });
  }
});
