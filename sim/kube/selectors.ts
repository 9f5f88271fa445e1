// Label selectors (equality- and set-based) and field selectors, parsed and matched as the API server does.

export type LabelRequirement =
  { key: string; op: 'exists' | 'notexists' } | { key: string; op: 'in' | 'notin'; values: string[] };

export class SelectorError extends Error {}

const KEY = /^([a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?\/)?[a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?$/;
const VALUE = /^(([a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?)?)$/;

function checkKey(key: string): string {
  if (!KEY.test(key) || key.length > 316) throw new SelectorError(`invalid label key "${key}"`);
  return key;
}

function checkValue(v: string): string {
  if (!VALUE.test(v) || v.length > 63) throw new SelectorError(`invalid label value: "${v}"`);
  return v;
}

/** Splits on commas that are not inside parentheses. */
function splitTop(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const c of s) {
    if (c === '(') depth++;
    if (c === ')') depth--;
    if (c === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

export function parseLabelSelector(raw: string | null | undefined): LabelRequirement[] {
  if (!raw || !raw.trim()) return [];
  return splitTop(raw).map((part) => {
    const p = part.trim();
    if (!p) throw new SelectorError(`found '', expected: identifier in selector "${raw}"`);
    let m = /^!\s*(\S+)$/.exec(p);
    if (m) return { key: checkKey(m[1] as string), op: 'notexists' as const };
    m = /^(\S+?)\s+(in|notin)\s+\((.*)\)$/.exec(p);
    if (m) {
      const values = (m[3] as string).split(',').map((v) => checkValue(v.trim()));
      return { key: checkKey(m[1] as string), op: m[2] as 'in' | 'notin', values };
    }
    m = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(p);
    if (m) {
      const key = checkKey(m[1] as string);
      const value = checkValue(m[3] as string);
      return m[2] === '!='
        ? { key, op: 'notin' as const, values: [value] }
        : { key, op: 'in' as const, values: [value] };
    }
    if (/^\S+$/.test(p) && !/[=!()]/.test(p)) return { key: checkKey(p), op: 'exists' as const };
    throw new SelectorError(`unable to parse requirement: "${p}"`);
  });
}

export function matchLabels(reqs: readonly LabelRequirement[], labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  return reqs.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    switch (r.op) {
      case 'exists':
        return has;
      case 'notexists':
        return !has;
      case 'in':
        return has && r.values.includes(l[r.key] as string);
      case 'notin':
        return !has || !r.values.includes(l[r.key] as string);
    }
  });
}

export interface FieldRequirement {
  field: 'metadata.name' | 'metadata.namespace';
  op: '=' | '!=';
  value: string;
}

export function parseFieldSelector(raw: string | null | undefined): FieldRequirement[] {
  if (!raw || !raw.trim()) return [];
  return raw.split(',').map((part) => {
    const m = /^\s*([^=!\s]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(part);
    if (!m) throw new SelectorError(`invalid selector: '${raw}'; can't understand '${part}'`);
    const field = m[1] as string;
    if (field !== 'metadata.name' && field !== 'metadata.namespace') {
      throw new SelectorError(`field label not supported: ${field}`);
    }
    return { field, op: m[2] === '!=' ? '!=' : '=', value: m[3] as string };
  });
}

export function matchFields(
  reqs: readonly FieldRequirement[],
  meta: { name?: string; namespace?: string } | undefined,
): boolean {
  return reqs.every((r) => {
    const v = (r.field === 'metadata.name' ? meta?.name : meta?.namespace) ?? '';
    return r.op === '=' ? v === r.value : v !== r.value;
  });
}
