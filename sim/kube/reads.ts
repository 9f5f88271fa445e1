// The read verbs on a resource: get, list (paged, as a list or a Table) and watch, a stream of events
// with a timeout, BOOKMARKs when asked for, and an ERROR event for a resourceVersion too old.

import type { ServerResponse } from 'node:http';
import { ApiError, badRequest } from './errors';
import { send, type Res } from './http';
import { apiVersionOf, storageVersion } from './resources';
import type { RestCall } from './route';
import type { ClusterStore, StoredEvent } from './store';
import { tableFor, wantsTable } from './table';

/** What the read verbs need of the server that serves them. */
export interface ReadHost {
  store: ClusterStore;
  /** Open watch streams, each with what closes it (the server ends them all at stop). */
  openStreams: Map<Res, () => void>;
  /** Every watch request received, with its query (newest last, bounded). */
  watchRequests: { resource: string; query: Record<string, string> }[];
  /** How often watches with allowWatchBookmarks get a BOOKMARK (ms). */
  bookmarkIntervalMs?: number;
}

/** Serves a get, list or watch. */
export function serveRead(host: ReadHost, verb: string, call: RestCall): void {
  const { req, res, route } = call;
  const r = route.resource;
  switch (verb) {
    case 'get': {
      const obj = host.store.get(r, route.namespace, route.name as string, route.version);
      send(res, 200, wantsTable(req) ? tableFor(r, [obj], host.store.resourceVersion) : obj);
      return;
    }
    case 'list':
      serveList(host.store, call);
      return;
    case 'watch':
      serveWatch(host, call);
      return;
  }
}

function serveList(store: ClusterStore, { req, res, route, q, labels, fields }: RestCall): void {
  const r = route.resource;
  const limitRaw = q.get('limit');
  const limit = limitRaw === null ? undefined : Number(limitRaw);
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) throw badRequest(`invalid limit "${limitRaw}"`);
  const page = store.list(
    r,
    { namespace: route.namespace, labels, fields, limit: limit || undefined, continueToken: q.get('continue') },
    route.version,
  );
  if (wantsTable(req)) {
    send(res, 200, tableFor(r, page.items, page.resourceVersion, page.continueToken));
    return;
  }
  send(res, 200, {
    kind: r.listKind,
    apiVersion: apiVersionOf(r.group, route.version),
    metadata: {
      resourceVersion: page.resourceVersion,
      ...(page.continueToken ? { continue: page.continueToken, remainingItemCount: page.remaining } : {}),
    },
    items: page.items,
  });
}

function serveWatch(host: ReadHost, { req, res, route, q, labels, fields }: RestCall): void {
  const r = route.resource;
  host.watchRequests.push({ resource: r.plural, query: Object.fromEntries(q) });
  if (host.watchRequests.length > 1000) host.watchRequests.shift();
  const table = wantsTable(req);
  const encode = (e: StoredEvent) => {
    const obj = r.convert && route.version !== storageVersion(r) ? r.convert(e.object, route.version) : e.object;
    return `${JSON.stringify({ type: e.type, object: table ? tableFor(r, [obj], String(e.rv)) : obj })}\n`;
  };
  const timeoutSec = q.get('timeoutSeconds') ? Number(q.get('timeoutSeconds')) : 1800;
  if (!Number.isFinite(timeoutSec) || timeoutSec < 0)
    throw badRequest(`invalid timeoutSeconds "${q.get('timeoutSeconds')}"`);
  // No Content-Length: chunked over HTTP/1.1, DATA frames over HTTP/2 (which has no Transfer-Encoding).
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  // The headers go out now (a client waits for them before reading events); HTTP/2's writeHead sends them itself.
  if ('flushHeaders' in res) res.flushHeaders();
  let unsubscribe: (() => void) | undefined;
  const timers: NodeJS.Timeout[] = [];
  const close = () => {
    unsubscribe?.();
    for (const t of timers) clearTimeout(t);
    host.openStreams.delete(res);
    if (!res.writableEnded) res.end();
  };
  const write = (text: string) => {
    // Both kinds of response take a string (their overloads differ only in the callback's type).
    if (!res.writableEnded && !res.destroyed) (res as ServerResponse).write(text);
  };
  host.openStreams.set(res, close);
  req.on('close', close);
  res.on('close', close);
  try {
    unsubscribe = host.store.watch(
      { resource: r, namespace: route.namespace ?? null, labels, fields, send: (e) => write(encode(e)) },
      q.get('resourceVersion'),
    );
  } catch (e) {
    if (e instanceof ApiError) {
      write(`${JSON.stringify({ type: 'ERROR', object: e.toStatus() })}\n`);
      close();
      return;
    }
    throw e;
  }
  if (timeoutSec > 0) timers.push(setTimeout(close, timeoutSec * 1000));
  if (q.get('allowWatchBookmarks') === 'true') {
    const tick = () => {
      if (res.writableEnded) return;
      write(
        `${JSON.stringify({ type: 'BOOKMARK', object: { kind: r.kind, apiVersion: apiVersionOf(r.group, route.version), metadata: { resourceVersion: host.store.resourceVersion } } })}\n`,
      );
      timers.push(setTimeout(tick, host.bookmarkIntervalMs ?? 60_000));
    };
    timers.push(setTimeout(tick, host.bookmarkIntervalMs ?? 60_000));
  }
}
