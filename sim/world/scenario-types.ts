// A scenario's shape (sim/scenarios/*.yaml, read by ./scenario): the initial world, the controllers, timed steps,
// and what the section readers share: where to report a problem, and small value checks.

import type { KubeObject } from '../../lib/unstructured';
import type { CapzBehaviour } from './capz-behaviour';

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
  | { at: number; line: number; aksAutoscale: PoolRef & { count: number } }
  /** `code: null` ends the failure. */
  | { at: number; line: number; aksFailWrites: PoolRef & { code: string | null; message?: string } }
  /** AKS's own operation (`state`, e.g. Upgrading) on the pool for `seconds` (simulated). */
  | { at: number; line: number; aksBusy: PoolRef & { state: string; seconds: number } }
  /** The control plane of the pool's AKS cluster upgrades to `version`, reaching it after `seconds` (simulated). */
  | { at: number; line: number; aksControlPlane: PoolRef & { version: string; seconds: number } }
  /** CAPZ's desired agent pool never matches ASO's object, so CAPZ writes it at every reconcile (K7), or no longer. */
  | { at: number; line: number; aksPerpetualDiff: PoolRef & { enabled: boolean } }
  | { at: number; line: number; pauseCluster: { cluster: string; namespace?: string; name: string; paused: boolean } }
  | { at: number; line: number; throttle: { subscription: string; seconds: number } }
  | { at: number; line: number; unreachable: { workload: string; unreachable: boolean } };

interface ScenarioAzureScaleSet {
  vmss: Record<string, unknown>;
  vms: Record<string, unknown>[];
  /** The VMs of an AKS agent pool of type VirtualMachines: Compute shows no scale set (see ScaleSetRecord). */
  standalone?: boolean;
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
  delays: Partial<
    Record<'provision' | 'delete' | 'join' | 'ready' | 'capzRequeue' | 'asoSync' | 'aksUpgrade' | 'nodeGone', number>
  >;
  /** Whether AKS pools move (sim/world/world-aks.ts); else they stand as `aksPools:` put them. */
  aksControllers: boolean;
  management: Map<string, KubeObject[]>;
  workload: Map<string, KubeObject[]>;
  azure: ScenarioAzureScaleSet[];
  /** AKS agent pools, as `GET …/agentPools/{pool}` returns them. */
  aksAgentPools: Record<string, unknown>[];
  /** Subscriptions throttled from the start, and workload clusters unreachable from the start. */
  throttled: { subscription: string; seconds: number }[];
  unreachable: string[];
  steps: Step[];
  /** Fraction of all instances replaced per simulated minute (deleted out of band; the controllers recreate them). */
  churnPerMinute?: number;
  /** The churn spread over each simulated minute (a second's share every second) instead of all at the minute. */
  churnSpread?: boolean;
}

/** What a section's reader gets: the document's root, where to report a problem, and the scenario so far. */
export interface Reader {
  file: string;
  root: Record<string, unknown>;
  /** Throws a ScenarioError naming the file, the line of `path` and the problem. */
  fail(path: (string | number)[], msg: string): never;
  lineOf(path: (string | number)[]): number;
  scenario: Scenario;
  /** The instant compact pools are moved to (their fixtures are built at a fixed one). */
  now: number;
}

export const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** "30s", "2m", "1m30s", "1h", or a number of seconds. */
export function parseDuration(v: unknown): number | null {
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
