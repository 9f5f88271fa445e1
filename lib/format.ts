// Small text helpers shared by the diagnosis and the UI.

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** "14 min", "2 h 5 min", "3 d 4 h": coarse, for operators. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

/**
 * A pool's next planned Azure read, in words, as of `nowMs`: when, and what it waits for when that is not just its
 * lane's period (the scheduler's plan: PoolResponse.azureNextRead).
 */
export function nextReadText(
  plan: { at: string; waitingFor: 'interval' | 'budget' | 'throttled'; of?: 'scale-set' | 'agent-pool' },
  nowMs: number,
): string {
  const aks = plan.of === 'agent-pool';
  const left = Date.parse(plan.at) - nowMs;
  if (plan.waitingFor === 'throttled')
    return `next read in ${formatDuration(Math.max(left, 0))}: ${aks ? 'AKS throttles this subscription' : 'Azure throttles this subscription and region'}`;
  if (left < 1000) return 'next read due now';
  const when = `next read in ~${formatDuration(left)}`;
  if (plan.waitingFor !== 'budget') return when;
  return `${when}, waiting its turn at ${aks ? "the subscription's AKS read budget" : "the region's Compute read budget"}`;
}

/** Lists up to `max` items and says how many more there are. */
export function listSome(items: readonly string[], max = 3): string {
  if (items.length <= max) return items.join(', ');
  return `${items.slice(0, max).join(', ')} and ${items.length - max} more`;
}

/**
 * A drift item's key (`<kind>:<join key>`, as timeline entries name it) in a few words: its kind and the last two
 * parts of the providerID (`virtualmachines/4`), enough to tell the instances of one pool apart.
 */
export function driftKeyText(key: string, labels: Readonly<Record<string, string>> = {}): string {
  const colon = key.indexOf(':');
  if (colon < 0) return key;
  const kind = key.slice(0, colon);
  const id = key.slice(colon + 1);
  const instance = id.split('/').filter(Boolean).slice(-2).join('/');
  return instance ? `${labels[kind] ?? kind}: ${instance}` : (labels[kind] ?? kind);
}

/**
 * Text cut after each `/` and `=`, where a line may break in a long condition name
 * ("ScaleSetDesiredReplicas=False/ScaleSetScalingUp") or path; the pieces joined are the text.
 */
export function breakPieces(text: string): string[] {
  return text.split(/(?<=[/=])/);
}
