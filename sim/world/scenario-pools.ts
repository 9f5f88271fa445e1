// A scenario's compact pools (`pools:`): the specs the unit fixtures use (or a fixture by id), built into the
// objects, Nodes and scale sets they stand for and moved to the present.

import { buildPool, type PoolSpec } from '../../lib/fixtures/pool';
import { NOW } from '../../lib/fixtures/objects';
import { SCENARIOS } from '../../lib/fixtures/scenarios';
import type { PoolInput } from '../../lib/pool-model';
import type { KubeObject } from '../../lib/unstructured';
import { isObj, shiftTimes, type Reader } from './scenario-types';

/** Reads `pools:` into the scenario's clusters and Azure. */
export function readPools(rd: Reader): void {
  const pools = rd.root.pools;
  if (pools === undefined) return;
  if (!Array.isArray(pools)) rd.fail(['pools'], 'pools must be a list');
  (pools as unknown[]).forEach((p, i) => {
    const spec = poolSpec(rd, p, i);
    let built;
    try {
      built = buildPool(spec);
    } catch (e) {
      rd.fail(['pools', i, 'spec'], `invalid pool spec: ${(e as Error).message}`);
    }
    const input = shiftTimes(built.input, rd.now - Date.parse(NOW));
    addObjects(rd, (p as { management: string }).management, input);
    addWorkload(rd, String(spec.cluster ?? 'prod-weu'), input);
    addAzure(rd, spec, input);
  });
}

/** A pool's spec: its own, over its fixture's when it names one. */
function poolSpec(rd: Reader, p: unknown, i: number): PoolSpec {
  if (!isObj(p) || typeof p.management !== 'string' || (!isObj(p.spec) && typeof p.fixture !== 'string')) {
    rd.fail(
      ['pools', i],
      'each pool needs management (a cluster name) and spec, or fixture (an id from lib/fixtures/scenarios.ts)',
    );
  }
  if (typeof p.fixture !== 'string') return p.spec as unknown as PoolSpec;
  const f = SCENARIOS.find((x) => x.id === p.fixture);
  if (!f)
    rd.fail(
      ['pools', i, 'fixture'],
      `unknown fixture "${p.fixture}" (one of ${SCENARIOS.map((x) => x.id).join(', ')})`,
    );
  return { ...f.spec, ...(isObj(p.spec) ? p.spec : {}) } as unknown as PoolSpec;
}

/** The pool's management objects (its Cluster once per cluster). */
export function addObjects(rd: Reader, management: string, input: PoolInput): void {
  const mgmt = rd.scenario.management.get(management) ?? [];
  const aso = input.aks?.asoAgentPool;
  const objects = [
    input.cluster,
    input.machinePool,
    input.azureMachinePool,
    input.aks?.infra,
    aso && 'kind' in aso ? aso : null,
    ...(input.azureMachinePoolMachines ?? []),
    ...(input.machines ?? []),
  ].filter((o): o is KubeObject => !!o);
  const known = (o: KubeObject) =>
    mgmt.some(
      (x) =>
        x.kind === 'Cluster' &&
        x.metadata?.name === o.metadata?.name &&
        x.metadata?.namespace === o.metadata?.namespace,
    );
  mgmt.push(...objects.filter((o) => o.kind !== 'Cluster' || !known(o)));
  rd.scenario.management.set(management, mgmt);
}

/** The pool's Nodes in its workload cluster, or that cluster unreachable. */
export function addWorkload(rd: Reader, cluster: string, input: PoolInput): void {
  const nodes = rd.scenario.workload.get(cluster) ?? [];
  if (input.workload?.state === 'ok') nodes.push(...input.workload.nodes);
  else if (input.workload?.state === 'unreachable') rd.scenario.unreachable.push(cluster);
  rd.scenario.workload.set(cluster, nodes);
}

/** The pool's scale set; a throttled one is served in full behind its subscription's throttle. */
function addAzure(rd: Reader, spec: PoolSpec, input: PoolInput): void {
  const { scenario } = rd;
  const azure = input.azure;
  if (azure?.state === 'ok')
    scenario.azure.push({ vmss: azure.vmss as Record<string, unknown>, vms: azure.vms as Record<string, unknown>[] });
  if (azure?.state !== 'throttled') return;
  scenario.throttled.push({
    subscription: String(spec.az?.subscriptionId ?? '6f0a3c1e-2b4d-4e8f-9a1b-7c5d3e2f1a0b'),
    seconds: azure.retryAfterSeconds ?? 60,
  });
  const full = buildPool({ ...spec, azure: 'ok' }).input.azure;
  if (full?.state === 'ok')
    scenario.azure.push({
      vmss: shiftTimes(full.vmss as Record<string, unknown>, rd.now - Date.parse(NOW)),
      vms: shiftTimes(full.vms as Record<string, unknown>[], rd.now - Date.parse(NOW)),
    });
}
