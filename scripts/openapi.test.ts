// openapi.json says what the code does: it is what `npm run openapi` makes of the routes' zod schemas and the
// answer types, it names every route handler and method there is (and no other), and every schema in it compiles.

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { componentRef, loadOpenApi, OPENAPI_PATH, openApiAjv } from '@/server/testing/openapi';
import { openApiText } from './openapi';

const API = path.resolve(import.meta.dirname, '..', 'app', 'api');

/**
 * Every route handler under app/api as `METHOD /api/…` with `{param}` for `[param]`. The handlers that only answer
 * 405 or 404 (`otherMethods`, `noSuchEndpoint`: exported as `export const { POST, … } =`) are not operations.
 */
function handlers(dir = API): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...handlers(p));
    else if (e.name === 'route.ts') {
      const route = `/api/${path
        .relative(API, dir)
        .split(path.sep)
        .map((s) => s.replace(/^\[(.+)\]$/, '{$1}'))
        .join('/')}`;
      for (const m of readFileSync(p, 'utf8').matchAll(/^export const (GET|POST|PUT|PATCH|DELETE) =/gm))
        out.push(`${m[1]} ${route}`);
    }
  }
  return out.sort();
}

describe('openapi.json', () => {
  it('is what `npm run openapi` makes of the code', () => {
    // A stale file fails here: run `npm run openapi` and commit openapi.json.
    expect(readFileSync(OPENAPI_PATH, 'utf8')).toBe(openApiText());
  }, 60_000);

  it('describes every route handler and method, and nothing else', () => {
    const doc = loadOpenApi();
    const described = Object.entries(doc.paths)
      .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`))
      .sort();
    const routes = handlers();
    expect(routes.length).toBeGreaterThanOrEqual(9);
    expect(described).toEqual(routes);
  });

  it('has schemas that compile (JSON Schema 2020-12, strict), answers and parameters alike', () => {
    const doc = loadOpenApi();
    const ajv = openApiAjv(doc);
    for (const name of Object.keys(doc.components.schemas))
      expect(ajv.getSchema(componentRef(name)), name).toBeTypeOf('function');
    for (const ops of Object.values(doc.paths)) {
      for (const op of Object.values(ops)) {
        for (const p of op.parameters ?? []) expect(() => ajv.compile(p.schema)).not.toThrow();
        for (const c of Object.values(op.requestBody?.content ?? {})) expect(() => ajv.compile(c.schema)).not.toThrow();
      }
    }
    // The answer types are all there, with the doc comments of lib/api-types.ts as descriptions.
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining([
        'FleetResponse',
        'PoolResponse',
        'TimelineResponse',
        'ResyncStatus',
        'ResyncResult',
        'ApiError',
        'InstanceRow',
        'DriftItem',
      ]),
    );
  });
});
