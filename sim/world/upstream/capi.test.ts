// Every row of sim/world/upstream/capi-cases.ts run against the simulated CAPI MachinePool controller's functions,
// each as its own case named after its upstream source. A row that does not apply is listed as skipped, with the
// reason; what a row leaves out of upstream's assertions is said in its name.

import { describe, expect, it } from 'vitest';
import {
  getNodeReferences,
  nodesByProviderId,
  patchNodes,
  reconcileInfrastructure,
  reconcileNodeRefs,
  reconcileNormal,
  reconcilePhase,
  type CapiNode,
  type MachinePoolState,
} from '../capi-behaviour';
import { setReplicas } from '../capi-status';
import {
  NODE_REFERENCE_CASES,
  NODE_REFERENCE_NODES,
  PATCH_NODES,
  PATCH_NODES_CASES,
  RECONCILE_CASES,
  SET_REPLICAS_CASES,
  sourceName,
  type ReconcileCase,
  type ReconcileExpect,
  type UpstreamSource,
} from './capi-cases';

/** One row: skipped with its reason when it does not apply, else run. */
function row(c: { source: UpstreamSource; notApplicable?: string; notModelled?: string }, run: () => void): void {
  const name = sourceName(c.source) + (c.notModelled ? ` (not modelled: ${c.notModelled})` : '');
  if (c.notApplicable) it.skip(`${name} — not applicable: ${c.notApplicable}`, () => {});
  else it(name, run);
}

interface Outcome {
  mp: MachinePoolState;
  errors: string[];
  requeueAfter: number;
  nodes: CapiNode[] | null;
}

/** What the upstream test calls, in the simulator's terms; the Nodes it deletes are gone from the result. */
function reconcile(
  c: ReconcileCase,
  mp: MachinePoolState,
  bootstrapDataSecretCreated: boolean,
  nodes: CapiNode[] | null,
): Outcome {
  const now = c.given.now ?? Date.now();
  if (c.calls === 'reconcileInfrastructure') {
    const r = reconcileInfrastructure(mp, c.given.infra, nodes !== null);
    return { mp: r.mp, errors: r.error ? [r.error] : [], requeueAfter: 0, nodes };
  }
  const r =
    c.calls === 'reconcileNodeRefs'
      ? (({ error, ...rest }) => ({ ...rest, errors: error ? [error] : [] }))(reconcileNodeRefs(mp, nodes, now))
      : reconcileNormal({ mp, bootstrapDataSecretCreated, infra: c.given.infra, nodes, now });
  return {
    mp: r.mp,
    errors: r.errors,
    requeueAfter: r.requeueAfter,
    nodes: nodes && nodes.filter((n) => !r.deleteNodes.includes(n.name)),
  };
}

function check(got: Outcome, phase: string, e: ReconcileExpect): void {
  if (e.error !== undefined) expect(got.errors.length > 0, `error (${got.errors.join('; ')})`).toBe(e.error);
  if (e.requeue !== undefined) expect(got.requeueAfter > 0, 'requeue').toBe(e.requeue);
  if (e.phase !== undefined) expect(phase, 'status.phase').toBe(e.phase);
  if (e.infrastructureProvisioned !== undefined)
    expect(got.mp.infrastructureProvisioned, 'infrastructureProvisioned').toBe(e.infrastructureProvisioned);
  if (e.bootstrapDataSecretCreated !== undefined)
    expect(got.mp.bootstrapDataSecretCreated, 'bootstrapDataSecretCreated').toBe(e.bootstrapDataSecretCreated);
  if (e.providerIDList !== undefined)
    expect(got.mp.providerIDList, 'spec.providerIDList').toEqual(e.providerIDList ?? undefined);
  if (e.statusReplicas !== undefined)
    expect(got.mp.statusReplicas, 'status.replicas').toBe(e.statusReplicas ?? undefined);
  if (e.v1beta1) expect(got.mp.v1beta1, 'status.deprecated.v1beta1 counters').toEqual(e.v1beta1);
  if (e.nodeRefs)
    expect(
      got.mp.nodeRefs.map((r) => r.name),
      'status.nodeRefs',
    ).toEqual(e.nodeRefs);
  if (e.replicasReady !== undefined) expect(got.mp.replicasReady, 'ReplicasReady').toBe(e.replicasReady ?? undefined);
  const left = (got.nodes ?? []).map((n) => n.name);
  for (const n of e.nodesKept ?? []) expect(left, `Node ${n} kept`).toContain(n);
  for (const n of e.nodesDeleted ?? []) expect(left, `Node ${n} deleted`).not.toContain(n);
}

describe('CAPI MachinePool reconcile and reconcilePhase, as upstream holds them', () => {
  for (const c of RECONCILE_CASES) {
    row(c, () => {
      const first = reconcile(c, c.given.mp, c.given.bootstrapDataSecretCreated, c.given.nodes);
      const set = c.thenSet ?? {};
      const mp: MachinePoolState = {
        ...first.mp,
        ...(set.specReplicas !== undefined ? { specReplicas: set.specReplicas } : {}),
        ...(set.v1beta1ReadyReplicas !== undefined
          ? { v1beta1: { readyReplicas: set.v1beta1ReadyReplicas, availableReplicas: 0, unavailableReplicas: 0 } }
          : {}),
      };
      const phase = reconcilePhase(mp);
      check({ ...first, mp }, phase, c.expect);
      if (!c.again) return;
      const second = reconcile(c, { ...mp, phase }, c.again.bootstrapDataSecretCreated, first.nodes);
      check(second, reconcilePhase(second.mp), c.again.expect);
    });
  }
});

describe('CAPI getNodeReferences, as upstream holds it', () => {
  const byId = nodesByProviderId(NODE_REFERENCE_NODES);
  for (const c of NODE_REFERENCE_CASES) {
    row(c, () => {
      const got = getNodeReferences(c.providerIDList, c.minReadySeconds, byId, Date.now());
      if (c.expect === null) {
        expect(got).toBeNull();
        return;
      }
      expect(
        got && { references: got.references.map((r) => r.name), ready: got.ready, available: got.available },
      ).toEqual(c.expect);
    });
  }
});

describe('CAPI patchNodes, as upstream holds it', () => {
  for (const c of PATCH_NODES_CASES) {
    row(c, () => {
      const patched = patchNodes(
        c.nodeRefs.map((name) => ({ name })),
        PATCH_NODES,
        c.mp,
      );
      for (const e of c.expect) {
        const before = PATCH_NODES.find((n) => n.name === e.name);
        const after = patched.find((p) => p.name === e.name) ?? {
          annotations: before?.annotations ?? {},
          taints: before?.taints ?? [],
        };
        expect({ name: e.name, annotations: after.annotations, taints: after.taints }).toEqual(e);
      }
    });
  }
});

describe('CAPI setReplicas (v1beta2 counters), as upstream holds it', () => {
  for (const c of SET_REPLICAS_CASES) {
    row(c, () => {
      const got = setReplicas(c.mp, c.hasMachinePoolMachines, c.machines, c.nodes);
      for (const k of ['readyReplicas', 'availableReplicas', 'upToDateReplicas'] as const) {
        if (c.expect[k] !== undefined) expect(got[k], `status.${k}`).toBe(c.expect[k]);
      }
      if (c.expect.versions !== undefined)
        expect(got.versions, 'status.versions').toEqual(c.expect.versions ?? undefined);
    });
  }
});
