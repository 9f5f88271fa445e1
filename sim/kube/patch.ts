// The three patch types the API server accepts, applied to plain JSON objects.

import fjp, { type Operation } from 'fast-json-patch';
import { ApiError } from './errors';

export const PATCH_TYPES = {
  'application/merge-patch+json': 'merge',
  'application/json-patch+json': 'json',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
} as const;

export type PatchType = (typeof PATCH_TYPES)[keyof typeof PATCH_TYPES];

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Merges `patch` into `target` key by key: `null` deletes, other values merge through `recurse`. */
function mergeObjects(
  target: unknown,
  patch: Record<string, unknown>,
  recurse: (t: unknown, p: unknown) => unknown,
): Record<string, unknown> {
  const out: Record<string, unknown> = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = recurse(out[k], v);
  }
  return out;
}

/** RFC 7386 JSON merge patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  return isObj(patch) ? mergeObjects(target, patch, mergePatch) : structuredClone(patch);
}

/**
 * Strategic merge patch, with merge semantics: maps merge, `null` deletes, lists are replaced. `$patch`
 * directives other than `replace` on a map are not supported and are rejected rather than misapplied.
 */
function strategicMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return structuredClone(patch);
  if (patch.$patch === 'replace') {
    const { $patch: _p, ...rest } = patch;
    return structuredClone(rest);
  }
  if (
    '$patch' in patch ||
    Object.keys(patch).some(
      (k) => k.startsWith('$setElementOrder') || k.startsWith('$deleteFromPrimitiveList') || k === '$retainKeys',
    )
  ) {
    throw new ApiError(
      400,
      'BadRequest',
      'strategic merge patch directives other than "$patch: replace" are not supported by this server',
    );
  }
  return mergeObjects(target, patch, strategicMergePatch);
}

/** RFC 6902 JSON patch; a failed `test` is 422 Invalid, a malformed patch 400, as on a real server. */
function jsonPatch(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops))
    throw new ApiError(400, 'BadRequest', 'json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  const err = fjp.validate(ops as Operation[], structuredClone(target));
  if (err) {
    if (err.name === 'TEST_OPERATION_FAILED') {
      throw new ApiError(
        422,
        'Invalid',
        'the server rejected our request due to an error in our request: testing value failed',
      );
    }
    if (err.name === 'OPERATION_PATH_UNRESOLVABLE' || err.name === 'OPERATION_FROM_UNRESOLVABLE') {
      throw new ApiError(
        422,
        'Invalid',
        `the server rejected our request due to an error in our request: ${err.message.split('\n')[0]}`,
      );
    }
    throw new ApiError(400, 'BadRequest', `invalid JSON patch: ${err.message.split('\n')[0]}`);
  }
  return fjp.applyPatch(structuredClone(target), ops as Operation[], false, false).newDocument;
}

export function applyPatch(type: PatchType, target: unknown, patch: unknown): unknown {
  switch (type) {
    case 'merge':
      return mergePatch(target, patch);
    case 'strategic':
      return strategicMergePatch(target, patch);
    case 'json':
      return jsonPatch(target, patch);
    case 'apply':
      throw new ApiError(415, 'UnsupportedMediaType', 'server-side apply is not supported by this server');
  }
}
