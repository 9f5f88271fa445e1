// CAPI's MachinePool status (core/reconcilers/machinepool/machinepool_controller_status.go at ae7ff04): the v1beta2
// replica counters from the pool's Machines, and status.versions from its Nodes or Machines. Pure functions, checked
// against upstream's rows in ./upstream/capi-cases.ts.

import { indexOf, type CapiNode, type MachinePoolState, type NodeRef } from './capi-behaviour';

export interface StatusVersion {
  version: string;
  replicas: number;
}

/** A MachinePool Machine, as far as the counters read it. */
export interface MachineView {
  name: string;
  creationTimestamp?: string;
  /** spec.version */
  version?: string;
  /** status.nodeInfo.kubeletVersion */
  kubeletVersion?: string;
  conditions: readonly { type: string; status: string }[];
}

export interface ReplicaCounters {
  readyReplicas?: number;
  availableReplicas?: number;
  upToDateReplicas?: number;
  versions?: StatusVersion[];
}

const semver = (v: string) =>
  /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(v.trim());

/** Semantic versions first, in version order (a pre-release before its release), then the rest by name. */
function versionLess(a: string, b: string): number {
  const [pa, pb] = [semver(a), semver(b)];
  if (pa && pb) {
    for (const i of [1, 2, 3]) {
      const d = Number(pa[i] ?? 0) - Number(pb[i] ?? 0);
      if (d !== 0) return d;
    }
    if (pa[4] !== pb[4]) return pa[4] === undefined ? 1 : pb[4] === undefined ? -1 : pa[4] < pb[4] ? -1 : 1;
  } else if (pa || pb) {
    return pa ? -1 : 1;
  }
  return a === b ? 0 : a < b ? -1 : 1;
}

/** Counts per version, in first-seen order, then sorted by version (stable); undefined when there are none. */
function aggregate(versions: readonly (string | undefined)[]): StatusVersion[] | undefined {
  const out: StatusVersion[] = [];
  for (const v of versions) {
    if (!v) continue;
    const hit = out.find((x) => x.version === v);
    if (hit) hit.replicas++;
    else out.push({ version: v, replicas: 1 });
  }
  return out.length ? out.sort((x, y) => versionLess(x.version, y.version)) : undefined;
}

/** Kubelet versions of the nodeRefs' Nodes (none without nodeRefs or without the Nodes, e.g. unreachable). */
function versionsFromNodeRefs(
  nodeRefs: readonly NodeRef[],
  nodes: readonly CapiNode[] | null,
): StatusVersion[] | undefined {
  if (!nodeRefs.length || !nodes?.length) return undefined;
  const { byName } = indexOf(nodes);
  return aggregate(nodeRefs.map((r) => byName.get(r.name)?.kubeletVersion));
}

/** Each Machine's kubelet version, else its spec.version, oldest Machine first. */
function versionsFromMachines(machines: readonly MachineView[]): StatusVersion[] | undefined {
  const sorted = [...machines].sort(
    (a, b) => (a.creationTimestamp ?? '').localeCompare(b.creationTimestamp ?? '') || a.name.localeCompare(b.name),
  );
  return aggregate(sorted.map((m) => m.kubeletVersion || m.version));
}

const isTrue = (m: MachineView, type: string) => m.conditions.some((c) => c.type === type && c.status === 'True');

/**
 * setReplicas (status.go): without MachinePool Machines ready = available = status.replicas and upToDate =
 * spec.replicas, versions from the nodeRefs' Nodes; with them, the Machines whose Ready, Available and UpToDate
 * conditions are True, versions from the Machines. A field left undefined is not written.
 */
export function setReplicas(
  mp: Pick<MachinePoolState, 'specReplicas' | 'statusReplicas' | 'nodeRefs'>,
  hasMachinePoolMachines: boolean,
  machines: readonly MachineView[],
  nodes: readonly CapiNode[] | null,
): ReplicaCounters {
  if (!hasMachinePoolMachines) {
    return {
      readyReplicas: mp.statusReplicas,
      availableReplicas: mp.statusReplicas,
      upToDateReplicas: mp.specReplicas ?? undefined,
      versions: versionsFromNodeRefs(mp.nodeRefs, nodes),
    };
  }
  return {
    readyReplicas: machines.filter((m) => isTrue(m, 'Ready')).length,
    availableReplicas: machines.filter((m) => isTrue(m, 'Available')).length,
    upToDateReplicas: machines.filter((m) => isTrue(m, 'UpToDate')).length,
    versions: versionsFromMachines(machines),
  };
}
