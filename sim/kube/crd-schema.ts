// Validates objects against the OpenAPI v3 schemas of upstream CRDs (CAPI, CAPZ), the way an API server
// with strict field validation would: types, enums, required fields, formats, and unknown fields.
// The CRD files live outside the repository (../shared/upstream in CI); a user's clone may lack them.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';

type Schema = Record<string, unknown>;

export interface CrdVersionSchema {
  group: string;
  version: string;
  kind: string;
  plural: string;
  served: boolean;
  storage: boolean;
  validate: ValidateFunction;
}

export interface SchemaError {
  /** JSON path of the offending field, e.g. `.spec.replicas`. */
  path: string;
  message: string;
}

/** Where the upstream folder is, if anywhere: POOLSCOPE_UPSTREAM_DIR, else ../shared/upstream beside the repo. */
export function findUpstreamDir(repoRoot: string): string | null {
  const candidates = [process.env.POOLSCOPE_UPSTREAM_DIR, path.resolve(repoRoot, '..', 'shared', 'upstream')];
  for (const c of candidates) if (c && existsSync(path.join(c, 'cluster-api', 'crds'))) return c;
  return null;
}

/**
 * Makes unknown fields an error, as `kubectl --validate=strict` and server-side strict field validation
 * do, except where the schema preserves unknown fields or declares its own additionalProperties.
 */
function strictify(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(strictify);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const s = node as Schema;
  if (s.properties && s.additionalProperties === undefined && s['x-kubernetes-preserve-unknown-fields'] !== true) {
    s.additionalProperties = false;
  }
  for (const v of Object.values(s)) strictify(v);
}

function makeAjv(): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addFormat('int32', {
    type: 'number',
    validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31,
  });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
  // Kubernetes' int-or-string fields have no `type`; nothing more to add for them.
  return ajv;
}

export function loadCrdSchemas(upstreamDir: string): Map<string, CrdVersionSchema> {
  const ajv = makeAjv();
  const out = new Map<string, CrdVersionSchema>();
  for (const sub of ['cluster-api', 'capz']) {
    const dir = path.join(upstreamDir, sub, 'crds');
    if (!existsSync(dir)) continue;
    for (const file of readdirSync(dir)
      .filter((f) => f.endsWith('.yaml'))
      .sort()) {
      const crd = parse(readFileSync(path.join(dir, file), 'utf8')) as Schema;
      const spec = crd.spec as { group: string; names: { kind: string; plural: string }; versions: Schema[] };
      for (const v of spec.versions) {
        const schema = structuredClone((v.schema as Schema).openAPIV3Schema) as Schema;
        // metadata is validated by the API machinery, not the CRD schema.
        const props = schema.properties as Schema;
        props.metadata = { type: 'object' };
        strictify(props.spec);
        strictify(props.status);
        out.set(schemaKey(spec.group, String(v.name), spec.names.kind), {
          group: spec.group,
          version: String(v.name),
          kind: spec.names.kind,
          plural: spec.names.plural,
          served: v.served === true,
          storage: v.storage === true,
          validate: ajv.compile(schema),
        });
      }
    }
  }
  return out;
}

function schemaKey(group: string, version: string, kind: string): string {
  return `${group}/${version}/${kind}`;
}

function describe(e: ErrorObject): SchemaError {
  const at = e.instancePath.replace(/\//g, '.') || '.';
  if (e.keyword === 'additionalProperties') {
    return {
      path: `${at === '.' ? '' : at}.${String(e.params.additionalProperty)}`,
      message: 'field not declared in schema',
    };
  }
  if (e.keyword === 'enum')
    return { path: at, message: `Unsupported value: must be one of ${JSON.stringify(e.params.allowedValues)}` };
  if (e.keyword === 'required')
    return { path: `${at === '.' ? '' : at}.${String(e.params.missingProperty)}`, message: 'Required value' };
  return { path: at, message: e.message ?? e.keyword };
}

/** Validates one object; returns null when its group/version/kind has no loaded schema. */
export function validateAgainstCrd(
  schemas: Map<string, CrdVersionSchema>,
  obj: { apiVersion?: string; kind?: string },
): SchemaError[] | null {
  const [group, version] = (obj.apiVersion ?? '').split('/');
  if (!group || !version || !obj.kind) return null;
  const s = schemas.get(schemaKey(group, version, obj.kind));
  if (!s) return null;
  return s.validate(obj) ? [] : (s.validate.errors ?? []).map(describe);
}
