// A scenario's timed steps: each an instant and exactly one action with the fields it needs, naming clusters and
// kinds the scenario has; and the check that a step's MachinePool exists by then.

import type { KubeObject } from '../../lib/unstructured';
import { findByKind } from '../kube/resources';
import { isObj, parseDuration, ScenarioError, type Reader, type Scenario, type Step } from './scenario-types';

/** Each action and the fields it needs. */
const STEP_FIELDS = {
  apply: ['cluster', 'object'],
  mergePatch: ['cluster', 'apiVersion', 'kind', 'name', 'patch'],
  delete: ['cluster', 'apiVersion', 'kind', 'name'],
  setAzure: ['vmss'],
  deleteAzure: ['scaleSet'],
  scale: ['cluster', 'name', 'replicas'],
  failInstances: ['cluster', 'name', 'count', 'errorCode'],
  deleteVm: ['cluster', 'name', 'member'],
  nodeJoins: ['cluster', 'name', 'enabled'],
  pauseCluster: ['cluster', 'name', 'paused'],
  throttle: ['subscription', 'seconds'],
  unreachable: ['workload', 'unreachable'],
  aksAutoscale: ['cluster', 'name', 'count'],
  aksFailWrites: ['cluster', 'name', 'code'],
  aksBusy: ['cluster', 'name', 'state', 'seconds'],
  aksControlPlane: ['cluster', 'name', 'version', 'seconds'],
  aksPerpetualDiff: ['cluster', 'name', 'enabled'],
} as const;
type StepKind = keyof typeof STEP_FIELDS;
const STEP_KINDS = Object.keys(STEP_FIELDS) as StepKind[];
/** Actions on living AKS pools (sim/world/world-aks.ts). */
const AKS_STEPS: readonly StepKind[] = [
  'aksAutoscale',
  'aksFailWrites',
  'aksBusy',
  'aksControlPlane',
  'aksPerpetualDiff',
];
/** Actions on any cluster's objects (management or workload); the others name a management cluster. */
const OBJECT_STEPS: readonly StepKind[] = ['apply', 'mergePatch', 'delete'];

/** Reads `steps:` into the scenario, sorted by time. */
export function readSteps(rd: Reader): void {
  const steps = rd.root.steps;
  if (steps === undefined) return;
  if (!Array.isArray(steps)) rd.fail(['steps'], 'steps must be a list');
  (steps as unknown[]).forEach((s, i) => rd.scenario.steps.push(readStep(rd, s, i)));
  rd.scenario.steps.sort((a, b) => a.at - b.at);
}

function readStep(rd: Reader, s: unknown, i: number): Step {
  if (!isObj(s)) rd.fail(['steps', i], 'a step is a mapping with at and one action');
  const at = parseDuration(s.at);
  if (at === null) rd.fail(['steps', i, 'at'], `at must be a duration like 30s or 2m, got ${JSON.stringify(s.at)}`);
  const kinds = Object.keys(s).filter((k) => k !== 'at');
  if (kinds.length !== 1 || !(STEP_KINDS as readonly string[]).includes(kinds[0] as string)) {
    rd.fail(
      ['steps', i],
      `a step needs exactly one action (${STEP_KINDS.join(', ')}); got ${kinds.join(', ') || 'none'}`,
    );
  }
  const kind = kinds[0] as StepKind;
  const body = s[kind];
  if (!isObj(body)) rd.fail(['steps', i, kind], `${kind} needs a mapping`);
  for (const f of STEP_FIELDS[kind]) if (body[f] === undefined) rd.fail(['steps', i, kind], `${kind} needs ${f}`);
  checkKinds(rd, kind, body, i);
  checkClusters(rd, kind, body, i);
  if (AKS_STEPS.includes(kind) && !rd.scenario.aksControllers)
    rd.fail(['steps', i, kind], `${kind} needs aksControllers: true (the world moves AKS pools only then)`);
  return { at, line: rd.lineOf(['steps', i]), [kind]: body } as unknown as Step;
}

/** The kinds a step writes or deletes are ones the simulated API servers serve. */
function checkKinds(rd: Reader, kind: StepKind, b: Record<string, unknown>, i: number): void {
  if ((kind === 'mergePatch' || kind === 'delete') && !findByKind(String(b.apiVersion), String(b.kind)))
    rd.fail(['steps', i, kind], `unknown kind ${String(b.apiVersion)} ${String(b.kind)}`);
  if (kind === 'apply') {
    const o = b.object as KubeObject;
    if (!isObj(o) || !findByKind(String(o.apiVersion), String(o.kind)))
      rd.fail(['steps', i, kind, 'object'], `unknown kind ${String(o?.apiVersion)} ${String(o?.kind)}`);
  }
}

/** The clusters a step names are the scenario's. */
function checkClusters(rd: Reader, kind: StepKind, b: Record<string, unknown>, i: number): void {
  const { management, workload } = rd.scenario;
  const cluster = String(b.cluster);
  if ('cluster' in b && !OBJECT_STEPS.includes(kind) && !management.has(cluster))
    rd.fail(['steps', i, kind, 'cluster'], `no management cluster named "${cluster}" in this scenario`);
  if (OBJECT_STEPS.includes(kind) && !management.has(cluster) && !workload.has(cluster))
    rd.fail(['steps', i, kind, 'cluster'], `no cluster named "${cluster}" in this scenario`);
  if (kind === 'unreachable' && !workload.has(String(b.workload)))
    rd.fail(['steps', i, kind, 'workload'], `no workload cluster named "${String(b.workload)}"`);
}

/** A step's pool must exist at the start, or be applied by an earlier step. */
export function checkStepPools(scenario: Scenario): void {
  for (const st of scenario.steps) {
    const ref =
      ('scale' in st && st.scale) ||
      ('failInstances' in st && st.failInstances) ||
      ('deleteVm' in st && st.deleteVm) ||
      ('nodeJoins' in st && st.nodeJoins) ||
      ('aksAutoscale' in st && st.aksAutoscale) ||
      ('aksFailWrites' in st && st.aksFailWrites) ||
      ('aksBusy' in st && st.aksBusy) ||
      ('aksControlPlane' in st && st.aksControlPlane) ||
      ('aksPerpetualDiff' in st && st.aksPerpetualDiff);
    if (!ref) continue;
    const exists =
      (scenario.management.get(ref.cluster) ?? []).some(
        (o) =>
          o.kind === 'MachinePool' &&
          o.metadata?.name === ref.name &&
          (o.metadata?.namespace ?? 'default') === (ref.namespace ?? 'default'),
      ) ||
      scenario.steps.some(
        (x) =>
          'apply' in x &&
          x.apply.object.kind === 'MachinePool' &&
          x.apply.object.metadata?.name === ref.name &&
          x.at <= st.at,
      );
    if (!exists)
      throw new ScenarioError(
        `${scenario.file}:${st.line}: step refers to MachinePool ${ref.namespace ?? 'default'}/${ref.name} in ${ref.cluster}, which the scenario does not have`,
      );
  }
}
