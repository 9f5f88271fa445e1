// From a request's path, method and query to what it asks for: the resource, version, namespace, name and
// subresource, the Kubernetes verb (or a 405 for a method a resource refuses), and the label and field selectors.

import { ApiError, badRequest } from './errors';
import type { Req, Res } from './http';
import { findByPlural, type ResourceDef } from './resources';
import {
  parseFieldSelector,
  parseLabelSelector,
  SelectorError,
  type FieldRequirement,
  type LabelRequirement,
} from './selectors';

export interface Route {
  resource: ResourceDef;
  version: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

export function parseRoute(path: string): Route | undefined {
  let group = '';
  let version: string;
  let rest: string[];
  const segs = path.split('/').filter(Boolean);
  if (segs[0] === 'api' && segs.length >= 3) {
    version = segs[1] as string;
    rest = segs.slice(2);
  } else if (segs[0] === 'apis' && segs.length >= 4) {
    group = segs[1] as string;
    version = segs[2] as string;
    rest = segs.slice(3);
  } else return undefined;
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3 && rest[2] !== 'status' && rest[2] !== 'finalize') {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [plural, name, subresource, ...extra] = rest;
  if (!plural || extra.length) return undefined;
  const resource = findByPlural(group, version, plural);
  if (!resource) return undefined;
  if (namespace && !resource.namespaced) return undefined;
  if (
    subresource &&
    !((subresource === 'status' && resource.statusSubresource) || (subresource === 'scale' && resource.scale))
  )
    return undefined;
  return { resource, version, namespace, name, subresource };
}

/** The verb of a request to `route`; a 405 when the resource (or subresource) does not take it. */
export function verbOf(method: string, route: Route, q: URLSearchParams): string {
  const r = route.resource;
  const isCollection = route.name === undefined;
  let verb: string;
  if (method === 'GET')
    verb = isCollection ? (q.get('watch') === 'true' || q.get('watch') === '1' ? 'watch' : 'list') : 'get';
  else if (method === 'POST' && isCollection) verb = 'create';
  else if (method === 'PUT' && !isCollection) verb = 'update';
  else if (method === 'PATCH' && !isCollection) verb = 'patch';
  else if (method === 'DELETE') verb = isCollection ? 'deletecollection' : 'delete';
  else throw new ApiError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`);
  // A subresource (status, scale) is read, replaced and patched, nothing else.
  if (route.subresource && !['get', 'update', 'patch'].includes(verb))
    throw new ApiError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`);
  if (!r.verbs.includes(verb))
    throw new ApiError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`);
  return verb;
}

/** One request to a resource, as the verb handlers take it: the exchange, its route, query and selectors. */
export interface RestCall {
  req: Req;
  res: Res;
  route: Route;
  q: URLSearchParams;
  labels: LabelRequirement[];
  fields: FieldRequirement[];
}

/** The label and field selectors of a request's query; a malformed one is a 400. */
export function selectorsOf(q: URLSearchParams): { labels: LabelRequirement[]; fields: FieldRequirement[] } {
  let labels;
  let fields;
  try {
    labels = parseLabelSelector(q.get('labelSelector'));
    fields = parseFieldSelector(q.get('fieldSelector'));
  } catch (e) {
    if (e instanceof SelectorError) throw badRequest(e.message);
    throw e;
  }
  return { labels, fields };
}
