// What the HTTP API takes, as zod schemas: the route handlers validate their path, query and body with them, and
// `npm run openapi` describes them in openapi.json (with `.meta` descriptions), so the two cannot disagree.

import { z } from 'zod';
import type { Position } from '../store/store';
import {
  FLAVOURS,
  FLEET_GROUPS,
  futureAtError,
  RANGES,
  readInstant,
  SEVERITIES,
  SORT_KEYS,
  type Params,
  type RangeName,
} from '@/lib/url-state';

/** Zod's issues as a 400 answer words them: which parameter, and what is wrong with it. */
export function describeIssues(issues: readonly z.core.$ZodIssue[], where: 'path' | 'query'): string {
  return issues
    .map((i) => {
      if (i.code === 'unrecognized_keys')
        return `unknown ${where} parameter${i.keys.length > 1 ? 's' : ''} ${i.keys.map((k) => `"${k}"`).join(', ')}`;
      const name = i.path.length ? `"${i.path.join('.')}"` : where;
      return `${name}: ${i.message}`;
    })
    .join('; ');
}

/** An RFC 3339 instant, normalised to UTC ISO (the same rule the pages apply to their links). */
const instant = z
  .string()
  .transform((s, ctx) => {
    const r = readInstant(s);
    if (!r.ok) {
      ctx.addIssue({ code: 'custom', message: r.error });
      return z.NEVER;
    }
    return r.iso;
  })
  .meta({ format: 'date-time', examples: ['2026-11-29T10:15:00Z'] });

/** An `at` instant: one that has happened, give or take a minute of clock skew (checked against this server's clock). */
const atInstant = instant.superRefine((iso, ctx) => {
  const error = futureAtError(iso, Date.now());
  if (error) ctx.addIssue({ code: 'custom', message: error });
});

/** A boolean query flag: `1`/`true`/`0`/`false`. */
const flag = z
  .enum(['1', 'true', '0', 'false'], { message: 'must be 1, true, 0 or false' })
  .transform((v) => v === '1' || v === 'true');

/** Path parameters of a pool: a kubeconfig context, a namespace and a MachinePool name. */
export const poolParams = z.object({
  context: z.string().min(1).max(253).meta({ description: 'The kubeconfig context of the management cluster.' }),
  namespace: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'must be a Kubernetes namespace name')
    .meta({ description: "The MachinePool's namespace." }),
  name: z
    .string()
    .regex(/^[a-z0-9]([-.a-z0-9]{0,251}[a-z0-9])?$/, 'must be a Kubernetes object name')
    .meta({ description: "The MachinePool's name." }),
});

/** `sort` of the fleet list: a key, `-` first for descending. */
const SORTS = SORT_KEYS.flatMap((k) => [k, `-${k}`]);

export const fleetQuery = z.strictObject({
  context: z.string().min(1).optional().meta({ description: 'Only pools of this kubeconfig context.' }),
  namespace: z.string().min(1).optional().meta({ description: 'Only pools in this namespace.' }),
  drifting: flag.optional().meta({ description: 'Only pools with providerID drift.' }),
  notReady: flag.optional().meta({ description: 'Only pools whose AzureMachinePool is not ready.' }),
  deleted: flag.optional().meta({
    description:
      "Pools that left poolscope's view too: their MachinePool deleted (`summary.deletedAt`) or their context no longer watched (`summary.unwatchedSince`); kept until retention passes that time. Hidden by default.",
  }),
  q: z.string().max(200).optional().meta({
    description:
      "Text to look for, case-insensitively, in the pool, namespace, context and cluster names and the worst finding's summary.",
  }),
  severity: z
    .enum(SEVERITIES, { message: `must be one of ${SEVERITIES.join(', ')}` })
    .optional()
    .meta({
      description:
        'Only pools whose worst finding has this severity (`info` includes `healthy`); pools with no finding have none.',
    }),
  kind: z
    .enum(FLAVOURS, { message: `must be one of ${FLAVOURS.join(', ')}` })
    .optional()
    .meta({
      description:
        'Only pools of this flavour: `self-managed` (AzureMachinePool), `aks-managed` (AzureManagedMachinePool) or `aks-aso` (AzureASOManagedMachinePool).',
    }),
  sort: z
    .enum(SORTS as [string, ...string[]], {
      message: `must be one of ${SORT_KEYS.join(', ')}, optionally prefixed with - for descending`,
    })
    .optional()
    .meta({ description: 'Sort key, `-` first for descending (default `finding`: worst first).' }),
});

/** The fleet page's own parameters: the API's, and the grouping, which only the page does. */
const fleetPageQuery = fleetQuery.extend({
  group: z.enum(FLEET_GROUPS, { message: `must be one of ${FLEET_GROUPS.join(', ')}` }).optional(),
});

/**
 * The fleet page's parameters checked by the rules of GET /api/pools (this schema, with the page's `group`): null
 * when they hold, else what is wrong and the link's query without the parameters at fault. The page takes a
 * parameter's first value, trimmed, and an empty one as absent (as a form leaves it), so it checks those.
 */
export function fleetParamsProblem(p: Params): { message: string; without: string } | null {
  const entries =
    p instanceof URLSearchParams
      ? [...p.keys()].map((k) => [k, p.get(k)] as const)
      : Object.entries(p).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v] as const);
  const raw: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [k, v] of entries) if (v !== undefined && v !== null && v.trim() !== '') raw[k] = v.trim();
  const r = fleetPageQuery.safeParse(raw);
  if (r.success) return null;
  const bad = new Set(r.error.issues.flatMap((i) => (i.code === 'unrecognized_keys' ? i.keys : [String(i.path[0])])));
  const without = new URLSearchParams(Object.entries(raw).filter(([k]) => !bad.has(k))).toString();
  return { message: describeIssues(r.error.issues, 'query'), without };
}

export const poolQuery = z.strictObject({
  at: atInstant.optional().meta({
    description:
      "The pool's state as of this instant (default: now); not in the future (a minute of clock skew allowed).",
  }),
});

export const timelineQuery = z
  .strictObject({
    from: instant.optional().meta({ description: 'Start of the window (default: 6 hours before `to`).' }),
    to: instant.optional().meta({
      description: 'End of the window (default: now). A window spans at most 31 days, whichever ends are given.',
    }),
    range: z
      .enum(Object.keys(RANGES) as [RangeName, ...RangeName[]], {
        message: `must be one of ${Object.keys(RANGES).join(', ')}`,
      })
      .optional()
      .meta({
        description:
          'Instead of from/to: this span ending now. Readers of the same range share one answer until the pool stores a change, for 5 s at most (a long window: about a pixel of its chart, up to a minute), so its `to` may be that old.',
      }),
    at: atInstant.optional().meta({
      description:
        "Instead of a window: the pool's full state at this instant (answered as a PoolResponse); not in the future (a minute of clock skew allowed).",
    }),
  })
  .refine((q) => [q.at, q.range, q.from || q.to].filter(Boolean).length <= 1, {
    message:
      'give one of "at" (the state at an instant), "range" (a span ending now) or "from"/"to" (a window), not several',
  });

/** Where a page of changes ends, as its `next` says it: `<instant>~<id>` (read as opaque by clients). */
export const cursorOf = (p: Position): string => `${p.at}~${p.id}`;

/** A page's `next`, read back (cursorOf's inverse). */
const cursor = z
  .string()
  .max(80)
  .transform((raw, ctx) => {
    const m = /^(.+)~(\d{1,15})$/.exec(raw);
    const at = m ? readInstant(m[1] as string) : null;
    if (!m || !at?.ok) {
      ctx.addIssue({ code: 'custom', message: "must be a previous page's `next`" });
      return z.NEVER;
    }
    return { at: at.iso, id: Number(m[2]) } satisfies Position;
  })
  .meta({ description: 'Where to go on: the `next` of the page before (older changes follow it).' });

export const changesQuery = z.strictObject({
  from: instant.optional().meta({ description: 'Start of the window (default: 6 hours before `to`).' }),
  to: instant.optional().meta({
    description: 'End of the window (default: now). A window spans at most 31 days, whichever ends are given.',
  }),
  before: cursor.optional(),
  limit: z
    .string()
    .regex(/^\d{1,4}$/, 'must be a whole number from 1 to 1000')
    .transform(Number)
    .refine((n) => n >= 1 && n <= 1000, 'must be a whole number from 1 to 1000')
    .optional()
    .meta({ description: 'Changes per page, 1 to 1000 (default 200).' }),
});

export const resyncBody = z.strictObject({
  mode: z.enum(['reconcile', 'sync-provider-ids'], { message: 'must be "reconcile" or "sync-provider-ids"' }).meta({
    description:
      '`reconcile`: annotate the AzureMachinePool and MachinePool so their controllers reconcile now; `sync-provider-ids`: copy the AzureMachinePool providerIDList into the MachinePool (only while the readiness gate keeps it frozen).',
  }),
  dryRun: z
    .boolean({ message: 'must be true or false' })
    .optional()
    .meta({ description: 'Say what would be done, change nothing.' }),
  verdictDigest: z
    .string({ message: 'must be a string' })
    .regex(/^[0-9a-f]{32}$/, 'must be the verdictDigest of a preview or a fresh status (32 hexadecimal digits)')
    .optional()
    .meta({
      description:
        'The `verdictDigest` of the preview being confirmed (a dry run, or `GET …/resync?fresh=1`). When the verdict on the fresh state differs, nothing is done: 409 `verdict-changed` with the new preview.',
    }),
});

export const resyncStatusQuery = z.strictObject({
  fresh: flag.optional().meta({
    description:
      '`1` or `true`: the verdict from fresh reads of the cluster and Azure (for a caller the cluster permits a mode), with its `verdictDigest`.',
  }),
});
