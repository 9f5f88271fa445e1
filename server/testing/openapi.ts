// Checks an answer of the HTTP API against openapi.json: the schema of the operation's answer for that status,
// with every component schema the document has (JSON Schema 2020-12, strict: a keyword Ajv does not know fails).

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

type Content = Record<string, { schema: object }>;

/** What the checks read of openapi.json. */
interface Doc {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { schema: object }[];
        requestBody?: { content: Content };
        responses: Record<string, { description?: string; content?: Content }>;
      }
    >
  >;
  components: { schemas: Record<string, object> };
}

export const OPENAPI_PATH = path.resolve(import.meta.dirname, '..', '..', 'openapi.json');

export function loadOpenApi(): Doc {
  return JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')) as Doc;
}

/** References to `#/components/schemas/X` in JSON text as references to `<base>/$defs/X`. */
function toDefs(text: string, base: string): string {
  return text.replaceAll('"#/components/schemas/', `"${base}/$defs/`);
}

/** The schema of component `name`, by reference, for an Ajv from {@link openApiAjv}. */
export const componentRef = (name: string) => `openapi#/$defs/${name}`;

/** Ajv with the document's component schemas registered (see {@link componentRef}). */
export function openApiAjv(doc: Doc = loadOpenApi()): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  // Registered as one schema's `$defs` (what JSON Schema resolves references into); references rewritten to match.
  ajv.addSchema({ $id: 'openapi', $defs: JSON.parse(toDefs(JSON.stringify(doc.components.schemas), '#')) as object });
  return ajv;
}

/** Validates JSON answers of the API by operation (path template as in openapi.json, method, status). */
export function answerChecker(): (template: string, method: string, status: number, body: unknown) => string[] {
  const doc = loadOpenApi();
  const ajv = openApiAjv(doc);
  const compiled = new Map<string, ValidateFunction>();
  return (template, method, status, body) => {
    const op = doc.paths[template]?.[method.toLowerCase()];
    if (!op) return [`openapi.json has no ${method} ${template}`];
    const answer = op.responses[String(status)];
    const schema = answer?.content?.['application/json']?.schema;
    if (!schema) return [`openapi.json has no JSON answer ${status} for ${method} ${template}`];
    // An error's code is one the operation names for that status.
    const code = (body as { error?: { code?: unknown } } | null)?.error?.code;
    if (status >= 400 && typeof code === 'string' && !answer.description?.includes(`\`${code}\``))
      return [`openapi.json does not name error code "${code}" for ${status} of ${method} ${template}`];
    const key = `${method} ${template} ${status}`;
    let validate = compiled.get(key);
    if (!validate) {
      // The answer's schema refers to components: resolved against the registered document.
      const rewritten = JSON.parse(toDefs(JSON.stringify(schema), 'openapi#')) as object;
      validate = ajv.compile(rewritten);
      compiled.set(key, validate);
    }
    if (validate(body)) return [];
    return (validate.errors ?? [])
      .slice(0, 10)
      .map(
        (e) => `${e.instancePath || '(answer)'} ${e.message ?? ''}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`,
      );
  };
}
