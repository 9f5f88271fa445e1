import 'server-only';
// The process's Prometheus registry (one per process, kept on globalThis across dev hot reloads) with the
// default process metrics and the API's request-duration histogram.

import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

const KEY = Symbol.for('poolscope.metrics.registry');
type Holder = { [KEY]?: { registry: Registry; http: Histogram; shed: Counter } };

function holder(): NonNullable<Holder[typeof KEY]> {
  const g = globalThis as Holder;
  if (!g[KEY]) {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    const http = new Histogram({
      name: 'poolscope_http_request_duration_seconds',
      help: 'API request duration by route, method and status.',
      labelNames: ['route', 'method', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });
    const shed = new Counter({
      name: 'poolscope_http_shed_total',
      help: 'Reads answered 503 under load: the queue was full, the client had too many queued, or a read waited or ran too long.',
      labelNames: ['reason'],
      registers: [registry],
    });
    g[KEY] = { registry, http, shed };
  }
  return g[KEY];
}

export function registry(): Registry {
  return holder().registry;
}

/** The API's routes, as the `route` label names them. */
const ROUTES = new Set([
  '/api/pools',
  '/api/sources',
  '/api/stream',
  '/api/healthz',
  '/api/readyz',
  '/api/metrics',
  '/api/openapi.json',
]);
const POOL_ROUTES = new Set(['', 'timeline', 'changes', 'resync']);

/**
 * A request's route label: its route's pattern (pool segments replaced), so the label's values stay few; any path
 * no route serves is `/api/*`, so that scanners cannot add series without end.
 */
export function routeLabel(pathname: string): string {
  const parts = pathname.split('/').filter(Boolean);
  if (
    parts[0] === 'api' &&
    parts[1] === 'pools' &&
    (parts.length === 5 || parts.length === 6) &&
    POOL_ROUTES.has(parts[5] ?? '')
  ) {
    return ['/api/pools/:context/:namespace/:name', ...parts.slice(5)].join('/');
  }
  const path = `/${parts.join('/')}`;
  return ROUTES.has(path) ? path : '/api/*';
}

export function observeRequest(pathname: string, method: string, status: number, seconds: number): void {
  holder().http.observe({ route: routeLabel(pathname), method, status: String(status) }, seconds);
}

/** Counts a read shed under overload (answered 503 with Retry-After), by why. */
export function countShed(reason: string): void {
  holder().shed.inc({ reason });
}
