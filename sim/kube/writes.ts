// The write verbs on a resource: create, update, patch, delete (with its DeleteOptions body) and
// deletecollection, their options (dryRun, fieldValidation, Warning headers), and the /scale subresource.

import type { KubeObject } from '../../lib/unstructured';
import { badRequest } from './errors';
import { BUILT_IN_GROUPS, patchTypeOf, readBody, readBytes, send, type Req } from './http';
import { applyPatch } from './patch';
import { apiVersionOf, type ResourceDef } from './resources';
import type { RestCall } from './route';
import { applyScale, scaleOf } from './scale';
import type { ClusterStore, WriteOptions } from './store';

/** A request's write options, from its query, and the Warning headers its answer carries (filled by the store). */
export interface WriteParams {
  opts: Required<WriteOptions>;
  warningHeaders: () => Record<string, string>;
}

/** The write options of a request in `version`; a dryRun other than All, or an unknown fieldValidation, is a 400. */
export function writeParamsOf(q: URLSearchParams, version: string): WriteParams {
  const dryRunValues = q.getAll('dryRun');
  if (dryRunValues.some((v) => v !== 'All')) throw badRequest(`Invalid dryRun value: ${dryRunValues.join(',')}`);
  const dryRun = dryRunValues.includes('All');
  const fv = q.get('fieldValidation');
  if (fv && !['Strict', 'Warn', 'Ignore'].includes(fv))
    throw badRequest(`fieldValidation must be one of Strict, Warn, Ignore; got "${fv}"`);
  const warnings: string[] = [];
  const writeOpts = {
    dryRun,
    version,
    fieldValidation: (fv ?? 'Warn') as 'Strict' | 'Warn' | 'Ignore',
    warnings,
  };
  const warningHeaders = (): Record<string, string> =>
    warnings.length ? { Warning: warnings.map((w) => `299 - "${w.replace(/"/g, '\\"')}"`).join(', ') } : {};
  return { opts: writeOpts, warningHeaders };
}

/** Serves a create, update, patch, delete or deletecollection. */
export async function serveWrite(store: ClusterStore, verb: string, call: RestCall, w: WriteParams): Promise<void> {
  const { req, res, route, labels, fields } = call;
  const r = route.resource;
  const { opts: writeOpts, warningHeaders } = w;
  switch (verb) {
    case 'create': {
      const body = (await readBody(req, BUILT_IN_GROUPS.has(r.group))) as KubeObject;
      const obj = store.create(r, route.namespace, body, writeOpts);
      send(res, 201, obj, warningHeaders());
      return;
    }
    case 'update': {
      const body = (await readBody(req, BUILT_IN_GROUPS.has(r.group))) as KubeObject;
      const obj = store.update(r, route.namespace, route.name as string, body, {
        ...writeOpts,
        subresource: route.subresource as 'status' | undefined,
      });
      send(res, 200, obj, warningHeaders());
      return;
    }
    case 'patch': {
      const type = patchTypeOf(req, r);
      const body = await readBody(req);
      const obj = store.patch(r, route.namespace, route.name as string, type, body, {
        ...writeOpts,
        subresource: route.subresource as 'status' | undefined,
      });
      send(res, 200, obj, warningHeaders());
      return;
    }
    case 'delete': {
      const pre = await readDeleteOptions(req, writeOpts);
      const obj = store.delete(r, route.namespace, route.name as string, { ...writeOpts, preconditionRv: pre });
      send(res, 200, obj);
      return;
    }
    case 'deletecollection': {
      const page = store.list(r, { namespace: route.namespace, labels, fields });
      for (const o of page.items) store.delete(r, o.metadata?.namespace, o.metadata?.name ?? '', writeOpts);
      send(res, 200, {
        kind: r.listKind,
        apiVersion: apiVersionOf(r.group, route.version),
        metadata: { resourceVersion: store.resourceVersion },
        items: page.items,
      });
      return;
    }
  }
}

/**
 * A delete's optional DeleteOptions body: returns its resourceVersion precondition, and turns `writeOpts`
 * into a dry run when the body asks for one.
 */
async function readDeleteOptions(req: Req, writeOpts: WriteOptions): Promise<string | undefined> {
  let pre: string | undefined;
  const text = (await readBytes(req)).toString('utf8').trim();
  if (text) {
    let opts: { preconditions?: { resourceVersion?: string }; dryRun?: string[] };
    try {
      opts = JSON.parse(text) as typeof opts;
    } catch (e) {
      throw badRequest(`the request body could not be decoded: ${(e as Error).message}`);
    }
    pre = opts.preconditions?.resourceVersion;
    if (opts.dryRun?.includes('All')) writeOpts.dryRun = true;
  }
  return pre;
}

/**
 * The /scale subresource: GET reads the Scale; PUT and PATCH write one (a patch applies to the current Scale),
 * which becomes an update of the object itself, so generation, resourceVersion, conflicts and watch events are
 * the object's own. Answers the Scale as it is after the write.
 */
export async function serveScale(
  store: ClusterStore,
  verb: string,
  { req, route }: RestCall,
  writeOpts: WriteOptions,
): Promise<unknown> {
  const r = route.resource;
  const paths = r.scale as NonNullable<ResourceDef['scale']>;
  const name = route.name as string;
  const current = store.get(r, route.namespace, name, route.version);
  if (verb === 'get') return scaleOf(current, paths);
  let written: unknown;
  if (verb === 'update') written = await readBody(req, true);
  else {
    const type = patchTypeOf(req, r);
    written = applyPatch(type, scaleOf(current, paths, true), await readBody(req));
  }
  const obj = store.update(r, route.namespace, name, applyScale(current, written, paths, name), writeOpts);
  return scaleOf(obj, paths);
}
