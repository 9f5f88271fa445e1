// Scenario files (sim/scenarios/*.yaml): the initial world — Kubernetes objects per cluster and Azure scale
// sets and VMs in REST form, or compact pool specs that expand to them — whether the controllers run (and
// which CAPZ behaviour), and timed steps. Errors name the file, the line and what is wrong.

import { readFileSync } from 'node:fs';
import { LineCounter, parseDocument, type Document } from 'yaml';
import { buildPool, type PoolSpec } from '../../lib/fixtures/pool';
import { NOW } from '../../lib/fixtures/objects';
import { SCENARIOS } from '../../lib/fixtures/scenarios';
import type { KubeObject } from '../../lib/unstructured';
import { findByKind } from '../kube/resources';
import { CAPZ_BEHAVIOURS, type CapzBehaviour } from './capz-behaviour';

export class ScenarioError extends Error {}

interface PoolRef {
  cluster: string;
  namespace?: string;
  name: string;
}

export type Step =
  | { at: number; line: number; apply: { cluster: string; object: KubeObject } }
  | {
      at: number;
      line: number;
      mergePatch: {
        cluster: string;
        apiVersion: string;
        kind: string;
        namespace?: string;
        name: string;
        patch: Record<string, unknown>;
      };
    }
  | {
      at: number;
      line: number;
      delete: { cluster: string; apiVersion: string; kind: string; namespace?: string; name: string };
    }
  | { at: number; line: number; setAzure: { vmss: Record<string, unknown>; vms?: Record<string, unknown>[] } }
  | { at: number; line: number; deleteAzure: { scaleSet: string } }
  | { at: number; line: number; scale: PoolRef & { replicas: number } }
  | { at: number; line: number; failInstances: PoolRef & { count: number; errorCode: string } }
  | { at: number; line: number; deleteVm: PoolRef & { member: string } }
  | { at: number; line: number; nodeJoins: PoolRef & { enabled: boolean } }
  | { at: number; line: number; pauseCluster: { cluster: string; namespace?: string; name: string; paused: boolean } }
  | { at: number; line: number; throttle: { subscription: string; seconds: number } }
  | { at: number; line: number; unreachable: { workload: string; unreachable: boolean } };

const STEP_KINDS = [
  'apply',
  'mergePatch',
  'delete',
  'setAzure',
  'deleteAzure',
  'scale',
  'failInstances',
  'deleteVm',
  'nodeJoins',
  'pauseCluster',
  'throttle',
  'unreachable',
] as const;

interface ScenarioAzureScaleSet {
  vmss: Record<string, unknown>;
  vms: Record<string, unknown>[];
}

export interface Scenario {
  file: string;
  name: string;
  description: string;
  controllers: boolean;
  /** CAPZ behaviour of every management cluster, or per management cluster. */
  capz: CapzBehaviour | Record<string, CapzBehaviour>;
  /** Simulated seconds per real second. */
  speed: number;
  /** Simulated seconds for VM provisioning and deletion, Node join and readiness. */
  delays: Partial<Record<'provision' | 'delete' | 'join' | 'ready' | 'capzRequeue' | 'nodeGone', number>>;
  management: Map<string, KubeObject[]>;
  workload: Map<string, KubeObject[]>;
  azure: ScenarioAzureScaleSet[];
  /** Subscriptions throttled from the start, and workload clusters unreachable from the start. */
  throttled: { subscription: string; seconds: number }[];
  unreachable: string[];
  steps: Step[];
  /** Fraction of all instances replaced per simulated minute (deleted out of band; the controllers recreate them). */
  churnPerMinute?: number;
  /** The churn spread over each simulated minute (a second's share every second) instead of all at the minute. */
  churnSpread?: boolean;
}

/** "30s", "2m", "1m30s", "1h", or a number of seconds. */
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

function parseDuration(v: unknown): number | null {
  if (typeof v === 'number' && v >= 0) return v;
  if (typeof v !== 'string') return null;
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s)?$/.exec(v.trim());
  if (!m || v.trim() === '') return null;
  return Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
}

/** Moves every RFC 3339 timestamp in `value` by `deltaMs` (compact pool fixtures are built at a fixed instant). */
export function shiftTimes<T>(value: T, deltaMs: number): T {
  const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string' && iso.test(v))
      return new Date(Date.parse(v) + deltaMs).toISOString().replace(/\.000Z$/, 'Z');
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value) as T;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function parseScenario(text: string, file: string, now = Date.now()): Scenario {
  const lc = new LineCounter();
  const doc: Document = parseDocument(text, { lineCounter: lc, prettyErrors: false });
  if (doc.errors.length) {
    const e = doc.errors[0] as { message: string; pos: [number, number] };
    throw new ScenarioError(`${file}:${lc.linePos(e.pos[0]).line}: invalid YAML: ${e.message.split('\n')[0]}`);
  }
  function lineOf(path: (string | number)[]): number {
    const node = doc.getIn(path, true) as { range?: [number, number] } | undefined;
    return node?.range ? lc.linePos(node.range[0]).line : 1;
  }
  function fail(path: (string | number)[], msg: string): never {
    throw new ScenarioError(`${file}:${lineOf(path)}: ${msg}`);
  }
  const root = doc.toJS() as unknown;
  if (!isObj(root)) fail([], 'a scenario is a YAML mapping');
  const r = root as Record<string, unknown>;
  const known = new Set([
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
    'steps',
  ]);
  for (const k of Object.keys(r))
    if (!known.has(k)) fail([k], `unknown field "${k}" (expected one of ${[...known].join(', ')})`);

  const controllers =
    r.controllers === undefined
      ? false
      : r.controllers === true || r.controllers === 'on'
        ? true
        : r.controllers === false || r.controllers === 'off'
          ? false
          : fail(['controllers'], 'controllers must be on or off');
  const capz = (r.capz ?? 'main') as Scenario['capz'];
  const checkCapz = (v: unknown, at: string[]) => {
    if (!CAPZ_BEHAVIOURS.includes(v as CapzBehaviour)) fail(at, `capz must be one of ${CAPZ_BEHAVIOURS.join(', ')}`);
  };
  if (isObj(capz)) for (const [k, v] of Object.entries(capz)) checkCapz(v, ['capz', k]);
  else checkCapz(capz, ['capz']);
  const speed = r.speed === undefined ? 1 : Number(r.speed);
  if (!(speed > 0)) fail(['speed'], 'speed must be a positive number');

  const delays: Scenario['delays'] = {};
  if (r.delays !== undefined) {
    if (!isObj(r.delays))
      fail(['delays'], 'delays maps provision, delete, join, ready, capzRequeue and nodeGone to durations');
    for (const [k, v] of Object.entries(r.delays as Record<string, unknown>)) {
      if (!['provision', 'delete', 'join', 'ready', 'capzRequeue', 'nodeGone'].includes(k))
        fail(['delays', k], `unknown delay "${k}" (provision, delete, join, ready, capzRequeue, nodeGone)`);
      const d = parseDuration(v);
      if (d === null) fail(['delays', k], `${k} must be a duration like 20s`);
      delays[k as keyof Scenario['delays']] = d;
    }
  }
  const churn = r.churn === undefined ? 0 : Number(r.churn);
  if (!(churn >= 0 && churn <= 1))
    fail(['churn'], 'churn is the fraction of instances replaced per simulated minute, between 0 and 1');
  const scenario: Scenario = {
    file,
    name: String(r.name ?? file),
    description: String(r.description ?? ''),
    controllers,
    capz,
    speed,
    delays,
    churnPerMinute: churn,
    management: new Map(),
    workload: new Map(),
    azure: [],
    throttled: [],
    unreachable: [],
    steps: [],
  };

  const objects = (section: 'management' | 'workload') => {
    const v = r[section];
    if (v === undefined) return;
    if (!isObj(v)) fail([section], `${section} maps cluster names to lists of objects`);
    for (const [cluster, list] of Object.entries(v as Record<string, unknown>)) {
      if (!Array.isArray(list)) fail([section, cluster], `${section}.${cluster} must be a list of Kubernetes objects`);
      const out = scenario[section].get(cluster) ?? [];
      (list as unknown[]).forEach((o, i) => {
        if (!isObj(o) || typeof o.apiVersion !== 'string' || typeof o.kind !== 'string')
          fail([section, cluster, i], 'expected a Kubernetes object with apiVersion and kind');
        const obj = o as KubeObject;
        if (!findByKind(obj.apiVersion as string, obj.kind as string))
          fail([section, cluster, i], `unknown kind ${obj.apiVersion} ${obj.kind}`);
        if (!obj.metadata?.name) fail([section, cluster, i], `${obj.kind} without metadata.name`);
        out.push(obj);
      });
      scenario[section].set(cluster, out);
    }
  };
  objects('management');
  objects('workload');

  const az = r.azure;
  if (az !== undefined) {
    if (!isObj(az) || !Array.isArray(az.scaleSets)) fail(['azure'], 'azure must have a scaleSets list');
    (az as { scaleSets: unknown[] }).scaleSets.forEach((s, i) => {
      if (!isObj(s) || !isObj(s.vmss) || typeof s.vmss.id !== 'string')
        fail(['azure', 'scaleSets', i], 'each scale set needs vmss (as the REST API returns it, with id)');
      const ss = s as { vmss: Record<string, unknown>; vms?: unknown };
      if (ss.vms !== undefined && !Array.isArray(ss.vms)) fail(['azure', 'scaleSets', i, 'vms'], 'vms must be a list');
      scenario.azure.push({ vmss: ss.vmss, vms: (ss.vms as Record<string, unknown>[] | undefined) ?? [] });
    });
  }

  // Compact pools: the same specs the unit fixtures use, moved to the present.
  if (r.pools !== undefined) {
    if (!Array.isArray(r.pools)) fail(['pools'], 'pools must be a list');
    (r.pools as unknown[]).forEach((p, i) => {
      if (!isObj(p) || typeof p.management !== 'string' || (!isObj(p.spec) && typeof p.fixture !== 'string')) {
        fail(
          ['pools', i],
          'each pool needs management (a cluster name) and spec, or fixture (an id from lib/fixtures/scenarios.ts)',
        );
      }
      if (typeof p.fixture === 'string') {
        const f = SCENARIOS.find((x) => x.id === p.fixture);
        if (!f)
          fail(
            ['pools', i, 'fixture'],
            `unknown fixture "${p.fixture}" (one of ${SCENARIOS.map((x) => x.id).join(', ')})`,
          );
        p.spec = { ...f.spec, ...(isObj(p.spec) ? p.spec : {}) } as unknown as Record<string, unknown>;
      }
      let built;
      try {
        built = buildPool(p.spec as unknown as PoolSpec);
      } catch (e) {
        fail(['pools', i, 'spec'], `invalid pool spec: ${(e as Error).message}`);
      }
      const input = shiftTimes(built!.input, now - Date.parse(NOW));
      const mgmt = scenario.management.get(p.management as string) ?? [];
      mgmt.push(
        ...[
          input.cluster,
          input.machinePool,
          input.azureMachinePool,
          ...(input.azureMachinePoolMachines ?? []),
          ...(input.machines ?? []),
        ]
          .filter((o): o is KubeObject => !!o)
          .filter(
            (o) =>
              o.kind !== 'Cluster' ||
              !mgmt.some(
                (x) =>
                  x.kind === 'Cluster' &&
                  x.metadata?.name === o.metadata?.name &&
                  x.metadata?.namespace === o.metadata?.namespace,
              ),
          ),
      );
      scenario.management.set(p.management as string, mgmt);
      const wl = String((p.spec as unknown as PoolSpec).cluster ?? 'prod-weu');
      const nodes = scenario.workload.get(wl) ?? [];
      if (input.workload?.state === 'ok') nodes.push(...input.workload.nodes);
      else if (input.workload?.state === 'unreachable') scenario.unreachable.push(wl);
      scenario.workload.set(wl, nodes);
      if (input.azure?.state === 'ok')
        scenario.azure.push({
          vmss: input.azure.vmss as Record<string, unknown>,
          vms: input.azure.vms as Record<string, unknown>[],
        });
      if (input.azure?.state === 'throttled') {
        scenario.throttled.push({
          subscription: String(
            (p.spec as unknown as PoolSpec).az?.subscriptionId ?? '6f0a3c1e-2b4d-4e8f-9a1b-7c5d3e2f1a0b',
          ),
          seconds: input.azure.retryAfterSeconds ?? 60,
        });
        const full = buildPool({ ...(p.spec as unknown as PoolSpec), azure: 'ok' }).input.azure;
        if (full?.state === 'ok')
          scenario.azure.push({
            vmss: shiftTimes(full.vmss as Record<string, unknown>, now - Date.parse(NOW)),
            vms: shiftTimes(full.vms as Record<string, unknown>[], now - Date.parse(NOW)),
          });
      }
    });
  }

  if (r.steps !== undefined) {
    if (!Array.isArray(r.steps)) fail(['steps'], 'steps must be a list');
    (r.steps as unknown[]).forEach((s, i) => {
      if (!isObj(s)) fail(['steps', i], 'a step is a mapping with at and one action');
      const at = parseDuration(s.at);
      if (at === null) fail(['steps', i, 'at'], `at must be a duration like 30s or 2m, got ${JSON.stringify(s.at)}`);
      const kinds = Object.keys(s).filter((k) => k !== 'at');
      if (kinds.length !== 1 || !(STEP_KINDS as readonly string[]).includes(kinds[0] as string)) {
        fail(
          ['steps', i],
          `a step needs exactly one action (${STEP_KINDS.join(', ')}); got ${kinds.join(', ') || 'none'}`,
        );
      }
      const kind = kinds[0] as (typeof STEP_KINDS)[number];
      const body = s[kind];
      if (!isObj(body)) fail(['steps', i, kind], `${kind} needs a mapping`);
      const b = body as Record<string, unknown>;
      const need = (...fields: string[]) => {
        for (const f of fields) if (b[f] === undefined) fail(['steps', i, kind], `${kind} needs ${f}`);
      };
      switch (kind) {
        case 'apply':
          need('cluster', 'object');
          break;
        case 'mergePatch':
          need('cluster', 'apiVersion', 'kind', 'name', 'patch');
          break;
        case 'delete':
          need('cluster', 'apiVersion', 'kind', 'name');
          break;
        case 'setAzure':
          need('vmss');
          break;
        case 'deleteAzure':
          need('scaleSet');
          break;
        case 'scale':
          need('cluster', 'name', 'replicas');
          break;
        case 'failInstances':
          need('cluster', 'name', 'count', 'errorCode');
          break;
        case 'deleteVm':
          need('cluster', 'name', 'member');
          break;
        case 'nodeJoins':
          need('cluster', 'name', 'enabled');
          break;
        case 'pauseCluster':
          need('cluster', 'name', 'paused');
          break;
        case 'throttle':
          need('subscription', 'seconds');
          break;
        case 'unreachable':
          need('workload', 'unreachable');
          break;
      }
      if ((kind === 'mergePatch' || kind === 'delete') && !findByKind(String(b.apiVersion), String(b.kind)))
        fail(['steps', i, kind], `unknown kind ${String(b.apiVersion)} ${String(b.kind)}`);
      if (kind === 'apply') {
        const o = b.object as KubeObject;
        if (!isObj(o) || !findByKind(String(o.apiVersion), String(o.kind)))
          fail(['steps', i, kind, 'object'], `unknown kind ${String(o?.apiVersion)} ${String(o?.kind)}`);
      }
      if (
        'cluster' in b &&
        kind !== 'apply' &&
        kind !== 'mergePatch' &&
        kind !== 'delete' &&
        !scenario.management.has(String(b.cluster))
      ) {
        fail(['steps', i, kind, 'cluster'], `no management cluster named "${String(b.cluster)}" in this scenario`);
      }
      if (
        (kind === 'apply' || kind === 'mergePatch' || kind === 'delete') &&
        !scenario.management.has(String(b.cluster)) &&
        !scenario.workload.has(String(b.cluster))
      ) {
        fail(['steps', i, kind, 'cluster'], `no cluster named "${String(b.cluster)}" in this scenario`);
      }
      if (kind === 'unreachable' && !scenario.workload.has(String(b.workload)))
        fail(['steps', i, kind, 'workload'], `no workload cluster named "${String(b.workload)}"`);
      scenario.steps.push({ at, line: lineOf(['steps', i]), [kind]: b } as unknown as Step);
    });
    scenario.steps.sort((a, b) => a.at - b.at);
  }
  if (scenario.management.size === 0)
    fail([], 'a scenario needs at least one management cluster (management: or pools:)');
  // A step's pool must exist at the start, or be applied by an earlier step.
  for (const st of scenario.steps) {
    const ref =
      ('scale' in st && st.scale) ||
      ('failInstances' in st && st.failInstances) ||
      ('deleteVm' in st && st.deleteVm) ||
      ('nodeJoins' in st && st.nodeJoins);
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
        `${file}:${st.line}: step refers to MachinePool ${ref.namespace ?? 'default'}/${ref.name} in ${ref.cluster}, which the scenario does not have`,
      );
  }
  return scenario;
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
