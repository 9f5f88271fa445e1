import { route, otherMethods } from '@/server/http/route';
import { metrics } from '@/server/metrics';
import { registry } from '@/server/metrics-registry';

export const dynamic = 'force-dynamic';

/** Prometheus text format: pools, collector, Azure, HTTP and process metrics. */
export const GET = route(
  {},
  async () =>
    new Response(await metrics().render(), {
      headers: { 'content-type': registry().contentType, 'cache-control': 'no-store' },
    }),
);

export const { POST, PUT, PATCH, DELETE } = otherMethods('GET');
