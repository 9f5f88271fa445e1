// Scenario files (sim/scenarios/*.yaml): the initial world — Kubernetes objects per cluster and Azure scale
// sets and VMs in REST form, or compact pool specs that expand to them — whether the controllers run (and
// which CAPZ behaviour), and timed steps. Errors name the file, the line and what is wrong.

import { readFileSync } from 'node:fs';
import { LineCounter, parseDocument, type Document } from 'yaml';
import type { KubeObject } from '../../lib/unstructured';
import { findByKind } from '../kube/resources';
import { CAPZ_BEHAVIOURS, type CapzBehaviour } from './capz-behaviour';
import { readAksPools } from './scenario-aks-pools';
import { readPools } from './scenario-pools';
import { checkStepPools, readSteps } from './scenario-steps';
import { isObj, parseDuration, ScenarioError, type Reader, type Scenario } from './scenario-types';

export { ScenarioError, shiftTimes, type Scenario, type Step } from './scenario-types';

/** The CAPZ behaviour a management cluster runs under a scenario (`main` for one its map leaves out). */
export function capzOf(scenario: Pick<Scenario, 'capz'>, cluster: string): CapzBehaviour {
  return typeof scenario.capz === 'string' ? scenario.capz : (scenario.capz[cluster] ?? 'main');
}

/** The CAPZ of the management clusters, for people: `pre-1.20` when all run one, else `pre-1.20 on mgmt-weu, main on mgmt-neu`. */
export function capzSummary(scenario: Pick<Scenario, 'capz' | 'management'>): string {
  const each = [...scenario.management.keys()].map((c) => [c, capzOf(scenario, c)] as const);
  const distinct = [...new Set(each.map(([, b]) => b))];
  if (distinct.length > 1) return each.map(([c, b]) => `${b} on ${c}`).join(', ');
  return distinct[0] ?? capzOf(scenario, '');
}

const FIELDS = [
  'name',
  'description',
  'controllers',
  'capz',
  'speed',
  'delays',
  'churn',
  'management',
  'workload',
  'azure',
  'pools',
  'aksPools',
  'aksControllers',
  'steps',
];
const DELAYS = ['provision', 'delete', 'join', 'ready', 'capzRequeue', 'asoSync', 'aksUpgrade', 'nodeGone'];

export function parseScenario(text: string, file: string, now = Date.now()): Scenario {
  const { root, fail, lineOf } = readYaml(text, file);
  const rd: Reader = { file, root, fail, lineOf, scenario: readSettings(root, file, fail), now };
  readObjects(rd, 'management');
  readObjects(rd, 'workload');
  readAzure(rd);
  readPools(rd);
  readAksPools(rd);
  readSteps(rd);
  if (rd.scenario.management.size === 0)
    fail([], 'a scenario needs at least one management cluster (management: or pools:)');
  checkStepPools(rd.scenario);
  return rd.scenario;
}

/** The document's root mapping, and how to name the line of a path in it. */
function readYaml(text: string, file: string): Pick<Reader, 'root' | 'fail' | 'lineOf'> {
  const lc = new LineCounter();
  const doc: Document = parseDocument(text, { lineCounter: lc, prettyErrors: false });
  if (doc.errors.length) {
    const e = doc.errors[0] as { message: string; pos: [number, number] };
    throw new ScenarioError(`${file}:${lc.linePos(e.pos[0]).line}: invalid YAML: ${e.message.split('\n')[0]}`);
  }
  const lineOf = (path: (string | number)[]): number => {
    const node = doc.getIn(path, true) as { range?: [number, number] } | undefined;
    return node?.range ? lc.linePos(node.range[0]).line : 1;
  };
  const fail = (path: (string | number)[], msg: string): never => {
    throw new ScenarioError(`${file}:${lineOf(path)}: ${msg}`);
  };
  const root = doc.toJS() as unknown;
  if (!isObj(root)) fail([], 'a scenario is a YAML mapping');
  for (const k of Object.keys(root as object))
    if (!FIELDS.includes(k)) fail([k], `unknown field "${k}" (expected one of ${FIELDS.join(', ')})`);
  return { root: root as Record<string, unknown>, fail, lineOf };
}

/** The scenario's settings (controllers, CAPZ, speed, delays, churn), its worlds empty. */
function readSettings(r: Record<string, unknown>, file: string, fail: Reader['fail']): Scenario {
  const controllers =
    r.controllers === undefined
      ? false
      : r.controllers === true || r.controllers === 'on'
        ? true
        : r.controllers === false || r.controllers === 'off'
          ? false
          : fail(['controllers'], 'controllers must be on or off');
  if (r.aksControllers !== undefined && typeof r.aksControllers !== 'boolean')
    fail(['aksControllers'], 'aksControllers must be true or false');
  const aksControllers = r.aksControllers === true;
  if (aksControllers && !controllers) fail(['aksControllers'], 'aksControllers needs controllers: on');
  const capz = (r.capz ?? 'main') as Scenario['capz'];
  const checkCapz = (v: unknown, at: string[]) => {
    if (!CAPZ_BEHAVIOURS.includes(v as CapzBehaviour)) fail(at, `capz must be one of ${CAPZ_BEHAVIOURS.join(', ')}`);
  };
  if (isObj(capz)) for (const [k, v] of Object.entries(capz)) checkCapz(v, ['capz', k]);
  else checkCapz(capz, ['capz']);
  const speed = r.speed === undefined ? 1 : Number(r.speed);
  if (!(speed > 0)) fail(['speed'], 'speed must be a positive number');
  const churn = r.churn === undefined ? 0 : Number(r.churn);
  const delays = readDelays(r, fail);
  if (!(churn >= 0 && churn <= 1))
    fail(['churn'], 'churn is the fraction of instances replaced per simulated minute, between 0 and 1');
  return {
    file,
    name: String(r.name ?? file),
    description: String(r.description ?? ''),
    controllers,
    aksControllers,
    capz,
    speed,
    delays,
    churnPerMinute: churn,
    management: new Map(),
    workload: new Map(),
    azure: [],
    aksAgentPools: [],
    throttled: [],
    unreachable: [],
    steps: [],
  };
}

function readDelays(r: Record<string, unknown>, fail: Reader['fail']): Scenario['delays'] {
  const delays: Scenario['delays'] = {};
  if (r.delays === undefined) return delays;
  if (!isObj(r.delays))
    fail(
      ['delays'],
      'delays maps provision, delete, join, ready, capzRequeue, asoSync, aksUpgrade and nodeGone to durations',
    );
  for (const [k, v] of Object.entries(r.delays as Record<string, unknown>)) {
    if (!DELAYS.includes(k)) fail(['delays', k], `unknown delay "${k}" (${DELAYS.join(', ')})`);
    const d = parseDuration(v);
    if (d === null) fail(['delays', k], `${k} must be a duration like 20s`);
    delays[k as keyof Scenario['delays']] = d;
  }
  return delays;
}

/** `management:` or `workload:`: cluster names to lists of Kubernetes objects of kinds the API servers serve. */
function readObjects(rd: Reader, section: 'management' | 'workload'): void {
  const { scenario } = rd;
  const v = rd.root[section];
  if (v === undefined) return;
  if (!isObj(v)) rd.fail([section], `${section} maps cluster names to lists of objects`);
  for (const [cluster, list] of Object.entries(v)) {
    if (!Array.isArray(list)) rd.fail([section, cluster], `${section}.${cluster} must be a list of Kubernetes objects`);
    const out = scenario[section].get(cluster) ?? [];
    (list as unknown[]).forEach((o, i) => {
      if (!isObj(o) || typeof o.apiVersion !== 'string' || typeof o.kind !== 'string')
        rd.fail([section, cluster, i], 'expected a Kubernetes object with apiVersion and kind');
      const obj = o as KubeObject;
      if (!findByKind(obj.apiVersion as string, obj.kind as string))
        rd.fail([section, cluster, i], `unknown kind ${obj.apiVersion} ${obj.kind}`);
      if (!obj.metadata?.name) rd.fail([section, cluster, i], `${obj.kind} without metadata.name`);
      out.push(obj);
    });
    scenario[section].set(cluster, out);
  }
}

/** `azure.scaleSets:` in REST form. */
function readAzure(rd: Reader): void {
  const az = rd.root.azure;
  if (az === undefined) return;
  if (!isObj(az) || !Array.isArray(az.scaleSets)) rd.fail(['azure'], 'azure must have a scaleSets list');
  (az as { scaleSets: unknown[] }).scaleSets.forEach((s, i) => {
    if (!isObj(s) || !isObj(s.vmss) || typeof s.vmss.id !== 'string')
      rd.fail(['azure', 'scaleSets', i], 'each scale set needs vmss (as the REST API returns it, with id)');
    const ss = s as { vmss: Record<string, unknown>; vms?: unknown };
    if (ss.vms !== undefined && !Array.isArray(ss.vms)) rd.fail(['azure', 'scaleSets', i, 'vms'], 'vms must be a list');
    rd.scenario.azure.push({ vmss: ss.vmss, vms: (ss.vms as Record<string, unknown>[] | undefined) ?? [] });
  });
}

export function readScenario(file: string, now = Date.now()): Scenario {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ScenarioError(`${file}: cannot read: ${(e as Error).message}`);
  }
  return parseScenario(text, file, now);
}
