// The meta.k8s.io/v1 Table form of objects that kubectl asks for (`Accept: ...;as=Table`), with the
// resource's printer columns and kubectl-style ages.

import type { KubeObject } from '../../lib/unstructured';
import type { Req } from './http';
import { evalJsonPath } from './jsonpath';
import type { ResourceDef } from './resources';

function age(ts: unknown): string {
  const ms = Date.now() - Date.parse(String(ts));
  if (!Number.isFinite(ms)) return '<unknown>';
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 120) return `${m}m`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h}h` : `${Math.floor(h / 24)}d`;
}

export function wantsTable(req: Req): boolean {
  return /as=Table/.test(req.headers.accept ?? '');
}

export function tableFor(r: ResourceDef, items: KubeObject[], rv: string, cont?: string): Record<string, unknown> {
  const cols = r.printerColumns ?? [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }];
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion: rv, ...(cont ? { continue: cont } : {}) },
    columnDefinitions: [
      {
        name: 'Name',
        type: 'string',
        format: 'name',
        description: 'Name must be unique within a namespace.',
        priority: 0,
      },
      ...cols.map((c) => ({
        name: c.name,
        type: c.type === 'date' ? 'string' : c.type,
        format: '',
        description: c.jsonPath,
        priority: c.priority ?? 0,
      })),
    ],
    rows: items.map((o) => ({
      cells: [
        o.metadata?.name ?? '',
        ...cols.map((c) => {
          const v = evalJsonPath(o, c.jsonPath);
          if (c.type === 'date') return v === undefined ? '<unknown>' : age(v);
          return v === undefined ? '' : Array.isArray(v) ? v.join(',') : v;
        }),
      ],
      object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata },
    })),
  };
}
