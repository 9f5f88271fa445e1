// Lines up every providerID a pool knows of across Azure, the two lists (the infra pool's in the `amp` slot,
// whichever its kind), AMPMs, Machines and Nodes, keyed case-insensitively
// (docs/domain.md, "How poolscope joins providerIDs") so that case drift shows up as one row with two spellings.

import type { IdSource } from './api-types';
import type { InstanceModel } from './azure-model';
import type { MachineModel, NodeModel } from './capi-model';
import type { AmpmModel } from './capz-model';
import { infraList } from './pool-lists';
import type { PoolModel } from './pool-model';
import { belongsToScaleSet, joinKey, parseProviderId } from './provider-id';

export interface JoinedId {
  key: string;
  /** The exact string each source holds (the first one, if a source holds several spellings). */
  raw: Record<IdSource, string | null>;
  instance: InstanceModel | null;
  ampm: AmpmModel | null;
  machine: MachineModel | null;
  node: NodeModel | null;
  /** True when sources spell this ID differently (case only, since the key is case-insensitive). */
  caseVariants: boolean;
}

function emptyRaw(): Record<IdSource, string | null> {
  return { azure: null, amp: null, mp: null, ampm: null, machine: null, node: null };
}

export function joinSources(model: PoolModel): JoinedId[] {
  const byKey = new Map<string, JoinedId>();
  // Sources nearly always agree exactly, so look the raw string up first and lower-case only on a miss.
  const byRaw = new Map<string, JoinedId>();
  // The key of the last string `find` found no entry for: `entry`, which asks `find` first, adds it under that key
  // (lower-casing a 150-character ID once per pool's ID, not twice, at every analysis).
  let missedKey = '';
  const find = (raw: string): JoinedId | undefined => {
    let e = byRaw.get(raw);
    if (!e) {
      const key = joinKey(raw);
      e = byKey.get(key);
      if (e) {
        e.caseVariants = true;
        byRaw.set(raw, e);
      } else {
        missedKey = key;
      }
    }
    return e;
  };
  const entry = (raw: string): JoinedId => {
    let e = find(raw);
    if (!e) {
      e = {
        key: missedKey,
        raw: emptyRaw(),
        instance: null,
        ampm: null,
        machine: null,
        node: null,
        caseVariants: false,
      };
      byKey.set(missedKey, e);
      byRaw.set(raw, e);
    }
    return e;
  };

  if (model.azure.state === 'ok') {
    for (const inst of model.azure.instances) {
      const e = entry(inst.providerID);
      if (e.raw.azure === null) {
        e.raw.azure = inst.providerID;
        e.instance = inst;
      }
    }
  }
  for (const id of infraList(model) ?? []) {
    const e = entry(id);
    if (e.raw.amp === null) e.raw.amp = id;
  }
  for (const id of model.mp.providerIDList) {
    const e = entry(id);
    if (e.raw.mp === null) e.raw.mp = id;
  }
  for (const ampm of model.ampms) {
    if (!ampm.providerID) continue;
    const e = entry(ampm.providerID);
    if (e.raw.ampm === null) {
      e.raw.ampm = ampm.providerID;
      e.ampm = ampm;
    }
  }
  for (const m of model.machines) {
    if (!m.providerID) continue;
    const e = entry(m.providerID);
    if (e.raw.machine === null) {
      e.raw.machine = m.providerID;
      e.machine = m;
    }
  }
  if (model.workload.state === 'ok') {
    for (const n of model.workload.nodes) {
      if (!n.providerID) continue;
      // The workload cluster has other pools' Nodes too: keep the ones this pool knows of, that point into its
      // scale set, or (AKS) that carry its agent pool's label.
      let e = find(n.providerID);
      if (!e) {
        if (!ownNode(n, n.providerID, model)) continue;
        e = entry(n.providerID);
      }
      if (e.raw.node === null) {
        e.raw.node = n.providerID;
        e.node = n;
      }
    }
  }
  return [...byKey.values()];
}

/** Whether a Node no list names is this pool's all the same: in its scale set, or labelled with its AKS pool. */
function ownNode(n: NodeModel, providerID: string, model: PoolModel): boolean {
  const agentPool = model.aks?.infra?.agentPoolName ?? null;
  if (agentPool !== null && n.agentPool === agentPool) return true;
  const parsed = parseProviderId(providerID);
  return model.scaleSet !== null && parsed.ok && belongsToScaleSet(parsed, model.scaleSet);
}

/** The distinct spellings of one joined ID across sources. */
export function spellings(j: JoinedId): string[] {
  const out: string[] = [];
  for (const v of Object.values(j.raw)) if (v !== null && !out.includes(v)) out.push(v);
  return out;
}

/** The spelling to show: Azure's if any, else the first source that has one. */
export function displayId(j: JoinedId): string {
  return j.raw.azure ?? j.raw.amp ?? j.raw.mp ?? j.raw.ampm ?? j.raw.machine ?? j.raw.node ?? j.key;
}
