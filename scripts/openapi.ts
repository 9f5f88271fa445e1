// openapi.json: the HTTP API as an OpenAPI 3.1 document. Parameters and request bodies come from the zod schemas
// the route handlers validate with (server/http/api-schemas.ts); answers from the TypeScript types the handlers
// return (lib/api-types.ts, lib/timeline.ts: ts-json-schema-generator, their doc comments as descriptions); what
// each operation does and which errors it answers is written here. `npm run openapi` writes the file;
// `npm run openapi -- --check` fails when it is not what the code says (scripts/openapi.test.ts checks the same).
// ~480 lines, most of them the text of each operation (what it does, its errors): the API's document, in one
// place.

import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createGenerator } from 'ts-json-schema-generator';
import { z } from 'zod';
import {
  changesQuery,
  fleetQuery,
  poolParams,
  poolQuery,
  resyncBody,
  resyncStatusQuery,
  timelineQuery,
} from '../server/http/api-schemas';

const ROOT = path.resolve(import.meta.dirname, '..');
export const OPENAPI_FILE = path.join(ROOT, 'openapi.json');

/** The answer types the handlers return, by the file that declares them. */
const TYPES: Record<string, string[]> = {
  'lib/api-types.ts': [
    'FleetResponse',
    'PoolResponse',
    'SourcesReport',
    'ResyncStatus',
    'ResyncResult',
    'ResyncVerdictChanged',
    'ApiError',
  ],
  'lib/timeline.ts': ['TimelineResponse', 'ChangesPage'],
};

type Json = Record<string, unknown>;

/** A JSON Schema of ts-json-schema-generator's (draft 7) as OpenAPI 3.1 takes it (JSON Schema 2020-12). */
function to2020(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(to2020);
  if (v === null || typeof v !== 'object') return v;
  const out: Json = {};
  for (const [k, x] of Object.entries(v as Json)) {
    if (k === '$ref' && typeof x === 'string') out[k] = x.replace('#/definitions/', '#/components/schemas/');
    // A tuple: draft 7's `items: [...]` is 2020-12's `prefixItems`.
    else if (k === 'items' && Array.isArray(x)) out.prefixItems = to2020(x);
    else out[k] = to2020(x);
  }
  // What may follow the tuple's items: draft 7's `additionalItems` (none, when it does not say: a TypeScript tuple).
  if (Array.isArray(out.prefixItems)) out.items = out.additionalItems ?? false;
  delete out.additionalItems;
  return out;
}

function answerSchemas(): Json {
  const schemas: Json = {};
  for (const [file, types] of Object.entries(TYPES)) {
    const generator = createGenerator({
      path: path.join(ROOT, file),
      tsconfig: path.join(ROOT, 'tsconfig.json'),
      expose: 'export',
      topRef: true,
      jsDoc: 'extended',
      skipTypeCheck: true,
    });
    for (const t of types) Object.assign(schemas, (generator.createSchema(t) as { definitions: Json }).definitions);
  }
  return Object.fromEntries(
    Object.entries(schemas)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, s]) => [k, to2020(s)]),
  );
}

/** The JSON Schema of what a zod schema takes (its input: before transforms), without the dialect line. */
function inputSchema(schema: z.ZodType): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
  return rest;
}

/** OpenAPI parameters from a zod object schema's properties. */
function parameters(where: 'path' | 'query', schema: z.ZodType): Json[] {
  const s = inputSchema(schema) as { properties?: Record<string, Json>; required?: string[] };
  return Object.entries(s.properties ?? {}).map(([name, p]) => {
    const { description, ...rest } = p;
    return {
      name,
      in: where,
      required: where === 'path' || (s.required ?? []).includes(name),
      ...(description ? { description } : {}),
      schema: rest,
    };
  });
}

const json = (schema: Json) => ({ 'application/json': { schema } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** An error answer: its status, the `code`s it can carry, and when. */
function errors(list: [status: number, codes: string, when: string, schema?: Json][]): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [status, codes, when, schema] of list)
    out[String(status)] = {
      description: `${when} (\`error.code\`: ${codes
        .split(' ')
        .map((c) => `\`${c}\``)
        .join(', ')}).`,
      content: json(schema ?? ref('ApiError')),
    };
  return out;
}

/** What every operation can answer besides its own. */
const COMMON = errors([
  [500, 'internal', 'An unexpected failure; the server log has the details, keyed by the `x-request-id` answer header'],
  [
    503,
    'not-configured store-failing',
    'poolscope is not configured (a setting is missing or wrong; the message names it), or its store is failing: corrupt, or it cannot be read (the message says which, and what to do)',
  ],
]);
/**
 * What the shared reads (the fleet, a pool, its timeline) answer besides: 304 for a client that holds the answer,
 * and 503 `overloaded` under load shedding, besides the common errors.
 */
const SHARED_READ: Record<string, Json> = {
  304: {
    description:
      "Not modified: `If-None-Match` names this answer's `ETag`, so the client's copy is current. Every 200 carries a strong `ETag`, `Cache-Control: private, no-cache`, and a body compressed (br or gzip) when `Accept-Encoding` allows.",
  },
  ...COMMON,
  ...errors([
    [
      503,
      'not-configured store-failing overloaded',
      'poolscope is not configured (a setting is missing or wrong; the message names it), its store is failing (the message says which, and what to do), or too many reads are waiting: `Retry-After` says when to try again',
    ],
  ]),
};
const BAD_QUERY: [number, string, string] = [
  400,
  'invalid-query invalid-path',
  'A parameter is unknown or malformed; the message names it',
];

export function openApiDocument(): Json {
  const pool = '/api/pools/{context}/{namespace}/{name}';
  const paths: Record<string, Record<string, Json>> = {
    '/api/pools': {
      get: {
        operationId: 'listPools',
        summary: 'Every pool of every watched context, filtered and sorted',
        description:
          "Each pool's summary (replica counts by source, readiness, drift counts, worst finding), the state of each source, and the last stored cycle.",
        parameters: parameters('query', fleetQuery),
        responses: {
          200: { description: 'The fleet.', content: json(ref('FleetResponse')) },
          ...errors([BAD_QUERY]),
          ...SHARED_READ,
        },
      },
    },
    '/api/sources': {
      get: {
        operationId: 'getSources',
        summary: "The state of every source, and whether the store takes the collector's writes",
        description:
          "Each management cluster, workload cluster and Azure subscription with its state, the last stored cycle, and the store: `failing` (since when, why) while it refuses the collector's writes, when nothing new is recorded. The same as `sources` in `GET /api/pools`, without reading the fleet.",
        responses: {
          200: { description: 'The sources.', content: json(ref('SourcesReport')) },
          ...errors([BAD_QUERY]),
          ...COMMON,
        },
      },
    },
    [pool]: {
      get: {
        operationId: 'getPool',
        summary: "A pool's whole state, now or as of an instant",
        description:
          'Summary, conditions, findings, the resync verdict, drift items, one row per instance joining Azure, the two providerID lists, AzureMachinePoolMachines, Machines and Nodes, and source states.',
        parameters: [...parameters('path', poolParams), ...parameters('query', poolQuery)],
        responses: {
          200: { description: 'The pool.', content: json(ref('PoolResponse')) },
          ...errors([BAD_QUERY, [404, 'pool-not-found', 'No such pool (or not yet known at `at`)']]),
          ...SHARED_READ,
        },
      },
    },
    [`${pool}/timeline`]: {
      get: {
        operationId: 'getPoolTimeline',
        summary: "A pool's changes in a window, or its full state at an instant",
        description:
          'With `range` (a span ending now, shared by its readers for a few seconds) or `from`/`to` (default: the last 6 hours): lanes of periods per field, replica counters as steps, Event and resync markers, and the newest transitions. With `at`: the state at that instant, as `GET /api/pools/{context}/{namespace}/{name}?at=` answers it.',
        parameters: [...parameters('path', poolParams), ...parameters('query', timelineQuery)],
        responses: {
          200: {
            description: 'The window (or, with `at`, the pool).',
            content: json({ oneOf: [ref('TimelineResponse'), ref('PoolResponse')] }),
          },
          ...errors([
            [
              400,
              'invalid-query invalid-path invalid-range',
              'A parameter is unknown or malformed, `at` comes with `from`/`to`, or the window is empty or longer than 31 days',
            ],
            [404, 'pool-not-found', 'No such pool (or not yet known at `at`)'],
          ]),
          ...SHARED_READ,
        },
      },
    },
    [`${pool}/changes`]: {
      get: {
        operationId: 'getPoolChanges',
        summary: "A window's changes, newest first, a page at a time",
        description:
          "The transitions the timeline's `entries` (its newest 1,000) leave out: pages of `limit`, each with the `next` to pass as `before` for the older ones. Pages hold still as changes arrive: a page's position names a change, not a count.",
        parameters: [...parameters('path', poolParams), ...parameters('query', changesQuery)],
        responses: {
          200: { description: 'A page of changes.', content: json(ref('ChangesPage')) },
          ...errors([
            [
              400,
              'invalid-query invalid-path invalid-range',
              "A parameter is unknown or malformed (`before` must be a page's `next`), or the window is empty or longer than 31 days",
            ],
            [404, 'pool-not-found', 'No such pool'],
          ]),
          ...COMMON,
        },
      },
    },
    [`${pool}/resync`]: {
      get: {
        operationId: 'getResyncStatus',
        summary: 'What the caller may do to this pool',
        description:
          "The caller's identity (or why it is not known), for each mode whether the cluster's RBAC permits it and why not, the verdict (on the latest collected state, or with `fresh` on fresh reads of the cluster and Azure), and a resync under way with its steps so far.",
        parameters: [...parameters('path', poolParams), ...parameters('query', resyncStatusQuery)],
        responses: {
          200: { description: 'The status.', content: json(ref('ResyncStatus')) },
          ...errors([
            [400, 'invalid-path invalid-query', 'A path or query parameter is malformed'],
            [
              404,
              'unknown-context pool-not-found',
              'poolscope does not watch this context, or knows no such MachinePool',
            ],
            [
              429,
              'rate-limited',
              'Too many fresh checks by this user; the `Retry-After` header says when to try again',
            ],
            [
              502,
              'cluster-error cluster-unreachable cluster-forbidden',
              "With `fresh`: the cluster failed a call, could not be reached, or refused poolscope's own service account",
            ],
          ]),
          ...COMMON,
        },
      },
      post: {
        operationId: 'resyncPool',
        summary: 'Trigger a reconcile, or copy the AzureMachinePool providerIDList into the MachinePool',
        description:
          'Every decision is made again on fresh reads of the cluster and Azure; the write is guarded (identity, RBAC, same-site, one at a time per pool, rate limits, idempotency keys, optimistic concurrency) and recorded as a Kubernetes Event and a timeline marker.',
        parameters: [
          ...parameters('path', poolParams),
          {
            name: 'X-Poolscope-Request',
            in: 'header',
            required: true,
            description: 'Must be `1`: a header a cross-site form cannot send.',
            schema: { type: 'string', const: '1' },
          },
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            description:
              'Recommended: a retry with the same key (and body) answers the first result (`replayed: true`) instead of acting twice.',
            schema: { type: 'string', minLength: 1, maxLength: 200 },
          },
        ],
        requestBody: { required: true, content: json(inputSchema(resyncBody)) },
        security: [{ bearer: [] }, {}],
        responses: {
          200: {
            description: 'Done, previewed (`dryRun`) or partly done; `objects` says what changed.',
            content: json(ref('ResyncResult')),
          },
          ...errors([
            [
              400,
              'invalid-body invalid-path invalid-idempotency-key',
              'The body, a path parameter or the Idempotency-Key is malformed',
            ],
            [401, 'not-signed-in', 'No identity: send a bearer token, or sign in through the auth proxy'],
            [
              403,
              'forbidden cross-site missing-request-header read-only',
              "The cluster's RBAC does not permit it, the request is cross-site or lacks X-Poolscope-Request, or poolscope is read-only",
            ],
            [404, 'unknown-context pool-not-found', 'No such context or MachinePool'],
            [
              409,
              'resync-refused resync-running concurrent-write verdict-changed',
              'Refused on the fresh state (the message says why), another resync is running, a controller wrote the MachinePool first (nothing was overwritten), or the verdict is no longer the one `verdictDigest` names (nothing was done; the answer is a `ResyncVerdictChanged`, with the new preview)',
              { anyOf: [ref('ApiError'), ref('ResyncVerdictChanged')] },
            ],
            [
              413,
              'body-too-large',
              'The body is over 64 KiB (a declared Content-Length is refused before anything is read)',
            ],
            [415, 'unsupported-media-type', 'The body is not `application/json`'],
            [422, 'idempotency-key-reused', 'The Idempotency-Key was used for a different request'],
            [
              429,
              'rate-limited',
              'Too many resyncs, or too many sign-ins with new bearer tokens from this client; the `Retry-After` header says when to try again',
            ],
            [
              502,
              'cluster-error cluster-unreachable cluster-forbidden',
              "The cluster failed a call, could not be reached, or refused poolscope's own service account; nothing was changed",
            ],
          ]),
          ...COMMON,
        },
      },
    },
    '/api/stream': {
      get: {
        operationId: 'stream',
        summary: 'Live changes as Server-Sent Events',
        description:
          '`hello` `{stream, seq}` first, then a `change` event `{seq, poolKey, at, fields, summary?}` per stored change (`id:` is `seq`), and a comment every 15 s. A new `stream` or a gap in `seq` means: fetch again.',
        responses: {
          200: { description: 'The event stream.', content: { 'text/event-stream': { schema: { type: 'string' } } } },
          ...COMMON,
        },
      },
    },
    '/api/metrics': {
      get: {
        operationId: 'metrics',
        summary: 'Prometheus metrics',
        description:
          'Per pool (drift, findings, frozen list age, replicas, readiness), the collector, the sources, Azure calls and budgets, and HTTP request durations (see the README).',
        responses: {
          200: { description: 'Prometheus text format.', content: { 'text/plain': { schema: { type: 'string' } } } },
          ...COMMON,
        },
      },
    },
    '/api/openapi.json': {
      get: {
        operationId: 'openapi',
        summary: 'This document',
        responses: {
          200: {
            description: 'The OpenAPI 3.1 document of this API.',
            content: json({
              type: 'object',
              properties: { openapi: { type: 'string' }, paths: { type: 'object' } },
              required: ['openapi', 'paths'],
            }),
          },
          ...COMMON,
        },
      },
    },
    '/api/healthz': {
      get: {
        operationId: 'healthz',
        summary: 'Liveness: the process answers and its store is not corrupt',
        responses: {
          200: {
            description: 'Alive.',
            content: json({
              type: 'object',
              properties: { status: { const: 'ok' } },
              required: ['status'],
              additionalProperties: false,
            }),
          },
          ...COMMON,
        },
      },
    },
    '/api/readyz': {
      get: {
        operationId: 'readyz',
        summary: 'Readiness: the store answers and a collector (this replica or the leader) has stored a cycle',
        responses: {
          200: {
            description: 'Ready.',
            content: json({
              type: 'object',
              properties: {
                status: { const: 'ready' },
                lastCycle: {
                  type: 'object',
                  properties: { id: { type: 'string' }, at: { type: 'string', format: 'date-time' } },
                  required: ['id', 'at'],
                  additionalProperties: false,
                },
                collecting: { type: 'boolean', description: 'Whether this replica runs the collector.' },
              },
              required: ['status', 'lastCycle', 'collecting'],
              additionalProperties: false,
            }),
          },
          ...errors([
            [
              503,
              'not-ready shutting-down not-configured store-failing',
              'No cycle is stored yet, the process is shutting down, poolscope is not configured, or its store is failing (corrupt, or it cannot be read)',
            ],
          ]),
          500: COMMON[500] as Json,
        },
      },
    },
  };
  const { version } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
  return {
    openapi: '3.1.0',
    info: {
      title: 'poolscope',
      version,
      description:
        'The HTTP API of poolscope: Cluster API MachinePools on Azure, their scale sets and providerID drift, with their history. Every error is `{"error":{"code","message"}}`.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: answerSchemas(),
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            "A Kubernetes bearer token (the caller's own: poolscope asks the cluster whether it may act), unless an auth proxy signs the user in.",
        },
      },
    },
  };
}

export function openApiText(): string {
  return `${JSON.stringify(openApiDocument(), null, 2)}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const text = openApiText();
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(OPENAPI_FILE, 'utf8');
    } catch {
      /* missing: differs */
    }
    if (current !== text) {
      console.error('openapi.json is not what the code says: run `npm run openapi` and commit it.');
      process.exit(1);
    }
    console.log('openapi.json is up to date.');
  } else {
    writeFileSync(OPENAPI_FILE, text);
    console.log(`wrote ${path.relative(process.cwd(), OPENAPI_FILE)}`);
  }
}
