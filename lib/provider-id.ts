// Azure providerIDs as CAPI, CAPZ, cloud-provider-azure and cluster-autoscaler write and compare them
// (docs/domain.md, "Azure providerIDs"). Parsing never throws: a malformed ID is a value the caller can show.

import { intern } from './slim';

type ProviderIdKind = 'vmss-instance' | 'vm' | 'vmss';

export interface ParsedProviderId {
  ok: true;
  raw: string;
  kind: ProviderIdKind;
  subscriptionId: string;
  resourceGroup: string;
  /** Scale set name: for `vmss` and `vmss-instance`; null for a standalone (Flexible) VM ID. */
  scaleSet: string | null;
  /** Uniform instance id ("0", "17"); null otherwise. */
  instanceId: string | null;
  /** Flexible member VM name ("pool1_1a2b3c4d"); null otherwise. */
  vmName: string | null;
}

interface MalformedProviderId {
  ok: false;
  raw: string;
  reason: string;
}

export type ProviderIdParse = ParsedProviderId | MalformedProviderId;

const PREFIX = 'azure://';

function malformed(raw: string, reason: string): MalformedProviderId {
  return { ok: false, raw, reason };
}

// The well-formed shapes in one pass; anything else goes through the slow path that explains what is wrong.
const FAST =
  /^azure:\/\/\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Compute\/(?:virtualMachineScaleSets\/([^/]+)(?:\/virtualMachines\/([^/]+))?|virtualMachines\/([^/]+))$/i;
const NUMERIC = /^\d+$/;

/**
 * What a well-formed ID shares with the other IDs of its scale set (or, for a flexible VM, of its resource group):
 * its kind, subscription, group and scale set as spelled, and its {@link scaleSetKeyOf}. The member — an instance
 * id or a VM name — is the ID's last segment, read when a full parse is asked for.
 */
class IdBase {
  constructor(
    readonly kind: ProviderIdKind,
    readonly subscriptionId: string,
    readonly resourceGroup: string,
    readonly scaleSet: string | null,
    readonly key: string,
  ) {}
}

/**
 * Recent IDs, each with its base (shared: a fleet's hundred thousand IDs have a thousand), or, for an ID that is
 * malformed or parsed by the slow path, its whole parse. A pool's lists are checked, and their IDs filed by scale
 * set, at each change of them; a parse object of its own per ID (8 fields) was ~9 MB at 100k VMs. Bounded
 * (cleared when full).
 */
const parsed = new Map<string, IdBase | ProviderIdParse>();
const PARSE_CACHE_LIMIT = 200_000;
/** The bases, by kind and spelling (bounded like the IDs). */
const bases = new Map<string, IdBase>();
const BASES_LIMIT = 20_000;

/** The parse cache's size and bound, and a way to empty it (for benchmarks, like lib/slim's internTable). */
export function parseCache(): { size: number; limit: number; clear: () => void } {
  return { size: parsed.size, limit: PARSE_CACHE_LIMIT, clear: () => parsed.clear() };
}

/** Drops an ID's cached parse (lib/forget: a deleted VM's). */
export function forgetParse(raw: string): void {
  parsed.delete(raw);
}

/**
 * Parses `azure:///subscriptions/<sub>/resourceGroups/<rg>/providers/Microsoft.Compute/…`.
 * Accepts the three shapes CAPZ produces: a Uniform instance (`…/virtualMachineScaleSets/<ss>/virtualMachines/<id>`),
 * a Flexible member (`…/virtualMachines/<name>`) and the scale set itself (`…/virtualMachineScaleSets/<ss>`).
 * Path segment names are matched case-insensitively, as ARM does; the values keep their case. A well-formed ID's
 * parse is a new object each time (the caller's); its parts are shared strings.
 */
export function parseProviderId(raw: unknown): ProviderIdParse {
  if (typeof raw !== 'string') return malformed(String(raw), 'not a string');
  const c = cachedParse(raw);
  if (!(c instanceof IdBase)) return c;
  const { kind, subscriptionId, resourceGroup, scaleSet } = c;
  if (kind === 'vmss')
    return { ok: true, raw, subscriptionId, resourceGroup, kind, scaleSet, instanceId: null, vmName: null };
  const member = raw.slice(raw.lastIndexOf('/') + 1);
  if (kind === 'vm')
    return { ok: true, raw, subscriptionId, resourceGroup, kind, scaleSet: null, instanceId: null, vmName: member };
  const uniform = NUMERIC.test(member);
  return {
    ok: true,
    raw,
    subscriptionId,
    resourceGroup,
    kind,
    scaleSet,
    instanceId: uniform ? member : null,
    vmName: uniform ? null : member,
  };
}

/** Why an ID is not a providerID poolscope can read, or null when it is one (nothing is built). */
export function providerIdProblem(raw: unknown): string | null {
  if (typeof raw !== 'string') return 'not a string';
  const c = cachedParse(raw);
  return c instanceof IdBase || c.ok ? null : c.reason;
}

function cachedParse(raw: string): IdBase | ProviderIdParse {
  let c = parsed.get(raw);
  if (c) return c;
  const m = FAST.exec(raw);
  if (m) {
    const [, sub = '', rg = '', ss, member, vm] = m;
    const kind: ProviderIdKind = vm !== undefined ? 'vm' : member === undefined ? 'vmss' : 'vmss-instance';
    c = baseOf(kind, sub, rg, kind === 'vm' ? null : (ss ?? null));
  } else c = Object.freeze(parseSlow(raw));
  if (parsed.size >= PARSE_CACHE_LIMIT) parsed.clear();
  parsed.set(raw, c);
  return c;
}

function baseOf(kind: ProviderIdKind, sub: string, rg: string, ss: string | null): IdBase {
  const k = `${kind}|${sub}|${rg}|${ss ?? ''}`;
  let b = bases.get(k);
  if (!b) {
    // The parts are shared strings: a fleet's IDs repeat the same few subscriptions, groups and scale sets.
    b = new IdBase(
      kind,
      intern(sub),
      intern(rg),
      intern(ss),
      keyOfScaleSet(sub, rg, kind === 'vm' ? FLEX : (ss ?? '')),
    );
    if (bases.size >= BASES_LIMIT) bases.clear();
    bases.set(k, b);
  }
  return b;
}

function keyOfScaleSet(sub: string, rg: string, name: string): string {
  return intern(`${sub}/${rg}/${name}`.toLowerCase());
}

/** Explains why an ID that failed the fast path is malformed (or parses an oddly spelled one). */
function parseSlow(raw: string): ProviderIdParse {
  if (raw.length === 0) return malformed(raw, 'empty');
  if (!raw.toLowerCase().startsWith(PREFIX)) return malformed(raw, 'does not start with azure://');
  const path = raw.slice(PREFIX.length);
  if (!path.startsWith('/')) return malformed(raw, 'expected azure:/// followed by an ARM resource ID');
  const seg = path.slice(1).split('/');
  if (seg.some((s) => s.length === 0)) return malformed(raw, 'empty path segment');
  const lower = seg.map((s) => s.toLowerCase());
  if (lower[0] !== 'subscriptions' || lower[2] !== 'resourcegroups' || lower[4] !== 'providers') {
    return malformed(raw, 'expected /subscriptions/<id>/resourceGroups/<name>/providers/…');
  }
  if (lower[5] !== 'microsoft.compute') return malformed(raw, 'not a Microsoft.Compute resource');
  const subscriptionId = seg[1] as string;
  const resourceGroup = seg[3] as string;
  const base = { ok: true as const, raw, subscriptionId, resourceGroup };

  if (lower[6] === 'virtualmachinescalesets' && seg.length === 8) {
    return { ...base, kind: 'vmss', scaleSet: seg[7] as string, instanceId: null, vmName: null };
  }
  if (lower[6] === 'virtualmachinescalesets' && seg.length === 10 && lower[8] === 'virtualmachines') {
    const member = seg[9] as string;
    // Uniform instances are numbered; a nested Flexible member (as the VMSS-VMs API lists it) has a VM name.
    const uniform = /^\d+$/.test(member);
    return {
      ...base,
      kind: 'vmss-instance',
      scaleSet: seg[7] as string,
      instanceId: uniform ? member : null,
      vmName: uniform ? null : member,
    };
  }
  if (lower[6] === 'virtualmachines' && seg.length === 8) {
    return { ...base, kind: 'vm', scaleSet: null, instanceId: null, vmName: seg[7] as string };
  }
  return malformed(raw, 'expected a scale set, a scale set instance or a virtual machine');
}

/**
 * The join key poolscope uses to line sources up: the ID without `azure://`, lower-cased.
 * Two IDs with the same key but different raw strings are case drift (CAPI and CAPZ compare exactly).
 */
export function joinKey(raw: string): string {
  const lower = raw.toLowerCase();
  return lower.startsWith(PREFIX) ? lower.slice(PREFIX.length) : lower;
}

export type ProviderIdMatch = 'exact' | 'case-insensitive' | 'none';

export function compareProviderIds(a: string, b: string): ProviderIdMatch {
  if (a === b) return 'exact';
  return joinKey(a) === joinKey(b) ? 'case-insensitive' : 'none';
}

/**
 * cluster-autoscaler's `normalizedProviderString` (clusterapi_utils.go): an `azure://` ID that contains
 * `virtualMachineScaleSets` is kept whole and case-sensitive; anything else is cut to its last path segment.
 * So Flexible IDs reduce to the VM name. This is what the autoscaler uses to map a Node to a node group.
 */
export function autoscalerKey(raw: string): string {
  if (raw.startsWith(PREFIX) && raw.includes('virtualMachineScaleSets')) return raw;
  const i = raw.lastIndexOf('/');
  return i >= 0 ? raw.slice(i + 1) : raw;
}

/**
 * The providerID CAPZ and cloud-provider-azure derive from an ARM ID: `azure://` + the ID with only the
 * resource-group segment lower-cased. A nested Flexible member ID is first turned into the standalone VM ID.
 */
const RG_SEGMENT = /^(\/subscriptions\/[^/]+\/resourceGroups\/)([^/]+)(\/.*)$/i;
const NESTED_FLEX =
  /^(.*\/providers\/Microsoft\.Compute\/)virtualMachineScaleSets\/[^/]+\/virtualMachines\/([^/]*[^/\d][^/]*)$/i;

export function providerIdFromArmId(armId: string): string {
  const m = RG_SEGMENT.exec(armId);
  if (m) {
    const id = `${m[1]}${(m[2] as string).toLowerCase()}${m[3]}`;
    const flex = NESTED_FLEX.exec(id);
    return PREFIX + (flex ? `${flex[1]}virtualMachines/${flex[2]}` : id);
  }
  return providerIdFromArmIdSlow(armId);
}

function providerIdFromArmIdSlow(armId: string): string {
  const seg = armId.split('/');
  // ['', 'subscriptions', sub, 'resourceGroups', rg, 'providers', 'Microsoft.Compute', ...]
  if (seg.length > 4 && seg[3]?.toLowerCase() === 'resourcegroups') seg[4] = (seg[4] as string).toLowerCase();
  if (
    seg.length === 11 &&
    seg[7]?.toLowerCase() === 'virtualmachinescalesets' &&
    seg[9]?.toLowerCase() === 'virtualmachines' &&
    !/^\d+$/.test(seg[10] as string)
  ) {
    return PREFIX + [...seg.slice(0, 7), 'virtualMachines', seg[10]].join('/');
  }
  return PREFIX + seg.join('/');
}

/** True when `candidate` (a VM or instance providerID) belongs to the scale set `vmss` (its providerID). */
export function belongsToScaleSet(candidate: ParsedProviderId, vmss: ParsedProviderId): boolean {
  if (candidate.subscriptionId.toLowerCase() !== vmss.subscriptionId.toLowerCase()) return false;
  if (candidate.resourceGroup.toLowerCase() !== vmss.resourceGroup.toLowerCase()) return false;
  const ss = (vmss.scaleSet ?? '').toLowerCase();
  if (candidate.kind === 'vmss-instance') return (candidate.scaleSet ?? '').toLowerCase() === ss;
  // Flexible members are named `<scale set>_<suffix>` by Azure.
  if (candidate.kind === 'vm') return (candidate.vmName ?? '').toLowerCase().startsWith(`${ss}_`);
  return false;
}

/**
 * The scale set a providerID names, as scaleSetKeyOf keys a scale set's own ID (`sub/rg/scaleset`, lower case): a
 * flexible member's is the prefix of its name (Azure names them `<scale set>_<suffix>`). Null when it names none.
 */
export function namedScaleSetKey(providerID: string): string | null {
  const p = parseProviderId(providerID);
  if (!p.ok) return null;
  const name =
    p.kind === 'vm' ? (p.vmName?.includes('_') ? p.vmName.slice(0, p.vmName.lastIndexOf('_')) : null) : p.scaleSet;
  return name ? keyOfScaleSet(p.subscriptionId, p.resourceGroup, name) : null;
}

/** scaleSetKeyOf's answer for a providerID that names no scale set it can read. */
export const OTHER_SCALE_SET = '~other';

/**
 * Where a providerID points, as an index key: `sub/rg/scaleset` (lower case) for a scale set or one of its
 * uniform instances, `sub/rg/~flex` for a flexible-orchestration VM (its scale set is only a name prefix),
 * OTHER_SCALE_SET when it cannot be read.
 */
export function scaleSetKeyOf(providerID: unknown): string {
  if (typeof providerID !== 'string') return OTHER_SCALE_SET;
  // Kept with the ID's base (the collector asks it of every ID of a pool's lists at each update of them).
  const c = cachedParse(providerID);
  if (c instanceof IdBase) return c.key;
  if (!c.ok) return OTHER_SCALE_SET;
  return keyOfScaleSet(c.subscriptionId, c.resourceGroup, c.kind === 'vm' ? FLEX : (c.scaleSet ?? ''));
}

/** A flexible-orchestration VM's stand-in for its scale set's name (`~` is not allowed in an Azure resource name). */
const FLEX = '~flex';

/** The scale set (as a lower-cased VMSS providerID) of the first scale-set instance a list names; null when none. */
export function scaleSetOfList(list: unknown): string | null {
  for (const id of Array.isArray(list) ? list : []) {
    const p = parseProviderId(id);
    if (p.ok && p.kind === 'vmss-instance' && p.scaleSet)
      return `azure:///subscriptions/${p.subscriptionId}/resourceGroups/${p.resourceGroup}/providers/Microsoft.Compute/virtualMachineScaleSets/${p.scaleSet}`.toLowerCase();
  }
  return null;
}
