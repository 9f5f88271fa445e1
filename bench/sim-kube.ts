// Load test of the simulated API server: 10,000 objects listed with pagination, and 100 concurrent
// watchers each receiving one change. Reported, not asserted (issue #3).

import type { ClientRequest } from 'node:http';
import https from 'node:https';
import { makeAmpm } from '../lib/fixtures/objects';
import { findByKind, type ResourceDef } from '../sim/kube/resources';
import { startKubeSimulator } from '../sim/kube/simulator';

function get(url: string, ca: string, token: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    https
      .get(url, { ca, headers: { Authorization: `Bearer ${token}` } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>));
      })
      .on('error', reject);
  });
}

export async function benchSimKube(): Promise<Record<string, unknown>> {
  const sim = await startKubeSimulator({
    clusters: [{ name: 'load', role: 'management' }],
    upstreamDir: null,
    log: () => {},
  });
  const token = sim.tokens.get('admin') as string;
  const server = sim.cluster('load');
  const AMPM = findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureMachinePoolMachine') as ResourceDef;
  const N = 10_000;
  const t0 = performance.now();
  const objects = Array.from({ length: N }, (_, i) =>
    makeAmpm({
      ampName: `pool${Math.floor(i / 100)}`,
      mpName: `pool${Math.floor(i / 100)}`,
      namespace: `ns${i % 10}`,
      clusterName: 'c',
      providerID: `azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/pool${Math.floor(i / 100)}/virtualMachines/${i % 100}`,
      member: String(i % 100),
      ready: true,
      machineName: `m${i}`,
    }),
  );
  sim.load('load', objects);
  const loadMs = performance.now() - t0;

  const base = `${server.url}/apis/infrastructure.cluster.x-k8s.io/v1beta1/azuremachinepoolmachines?limit=500`;
  const t1 = performance.now();
  let pages = 0;
  let items = 0;
  let cont = '';
  for (;;) {
    const page = await get(cont ? `${base}&continue=${cont}` : base, sim.tls.caPem, token);
    pages++;
    items += (page.items as unknown[]).length;
    cont = String((page.metadata as { continue?: string }).continue ?? '');
    if (!cont) break;
  }
  const listMs = performance.now() - t1;

  // 100 watchers on one namespace; one change; time until every watcher got it.
  const W = 100;
  const rv = server.store.resourceVersion;
  const received: number[] = [];
  let changedAt = 0;
  const reqs: ClientRequest[] = [];
  await Promise.all(
    Array.from(
      { length: W },
      () =>
        new Promise<void>((ready) => {
          const req = https.get(
            `${server.url}/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/ns0/azuremachinepoolmachines?watch=true&resourceVersion=${rv}`,
            { ca: sim.tls.caPem, headers: { Authorization: `Bearer ${token}` }, agent: false },
            (res) => {
              ready();
              res.on('data', () => received.push(performance.now() - changedAt));
            },
          );
          reqs.push(req);
        }),
    ),
  );
  while (server.store.watcherCount < W) await new Promise((r) => setTimeout(r, 5));
  changedAt = performance.now();
  const first = objects.find((o) => o.metadata?.namespace === 'ns0');
  server.store.patch(AMPM, 'ns0', first?.metadata?.name ?? '', 'merge', { metadata: { annotations: { bench: '1' } } });
  while (received.length < W && performance.now() - changedAt < 10_000) await new Promise((r) => setTimeout(r, 1));
  for (const r of reqs) r.destroy();
  received.sort((a, b) => a - b);
  await sim.stop();
  return {
    objects: N,
    loadMs: Math.round(loadMs),
    paginatedList: {
      pageSize: 500,
      pages,
      items,
      totalMs: Math.round(listMs),
      msPerPage: Math.round((listMs / pages) * 10) / 10,
    },
    watchers: {
      count: W,
      delivered: received.length,
      p50Ms: Math.round((received[Math.floor(W / 2)] ?? NaN) * 10) / 10,
      maxMs: Math.round((received.at(-1) ?? NaN) * 10) / 10,
    },
  };
}
