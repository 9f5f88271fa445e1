// The crowd benchmark: a pool link pasted into an incident channel. The production server collects a simulated
// fleet that keeps changing; 200 live streams are open (dashboards left open); then 200 browser-like clients open
// the same pool page within 10 s: its HTML (the server renders it with the pool and its timeline), then the calls
// the page makes once loaded (the sources bar, the pool and its timeline again, the resync status). Meanwhile
// other pools are paused and resumed through the API server, each change timed until a live stream announces it.
// Reported: each client's page answer time (HTML plus those calls), errors, the collector's change → stored
// latency meanwhile (its own histogram, scraped before and after), change → stream, and the server's RSS before,
// during and after.
// Size: POOLSCOPE_BENCH_CROWD_FLEET (default 2x5x100,subs=2,churn=0.01,spread: changes every second),
// POOLSCOPE_BENCH_CROWD_CLIENTS (200), POOLSCOPE_BENCH_CROWD_STREAMS (200), POOLSCOPE_BENCH_CROWD_SECONDS (10: how
// the clients' arrivals are spread).

import { CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { pct } from './pct';
import { startFleet } from './fleet';
import { procStats, samples, startProductionServer, untilAllRead } from './prod-server';

const PORT = 3212;

/** The p-th percentile's upper bound from a Prometheus histogram's bucket deltas (null without observations). */
function histogramQuantile(before: Map<string, number>, after: Map<string, number>, p: number): number | null {
  const buckets = [...after.entries()]
    .filter(([l]) => l.includes('le="'))
    .map(([l, v]) => ({
      le: Number(/le="([^"]+)"/.exec(l)?.[1] === '+Inf' ? Infinity : /le="([^"]+)"/.exec(l)?.[1]),
      n: v - (before.get(l) ?? 0),
    }))
    .sort((a, b) => a.le - b.le);
  const total = buckets.at(-1)?.n ?? 0;
  if (!total) return null;
  return buckets.find((b) => b.n >= (p / 100) * total)?.le ?? null;
}

/** Opens a live stream and counts what it brings until aborted. */
function openStream(
  url: string,
  signal: AbortSignal,
  counts: { opened: number; failed: number; changes: number },
): void {
  void fetch(url, { signal })
    .then(async (res) => {
      if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
      counts.opened++;
      const decoder = new TextDecoder();
      const reader = res.body.getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        counts.changes += (decoder.decode(value).match(/event: change/g) ?? []).length;
      }
    })
    .catch((e: unknown) => {
      if ((e as Error).name !== 'AbortError') counts.failed++;
    });
}

/**
 * Kubernetes changes made while the crowd is served, and how long each took to reach a live stream: a pool paused
 * (then resumed) through the API server every `everyMs`, timed from the API server's answer to the `change`
 * message naming that pool's `paused` field. The collector stores a change before it announces it.
 */
function startProbes(
  kubeconfig: string,
  base: string,
  refs: { context: string; namespace: string; name: string }[],
  everyMs: number,
  signal: AbortSignal,
): { latenciesMs: number[]; timedOut: number; errors: string[]; done: Promise<void> } {
  const out = { latenciesMs: [] as number[], timedOut: 0, errors: [] as string[] };
  const waiting = new Map<string, (at: number) => void>();
  void fetch(`${base}/api/stream`, { signal })
    .then(async (res) => {
      const decoder = new TextDecoder();
      let buf = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const msg = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const data = /^data: (.*)$/m.exec(msg)?.[1];
          if (!/^event: change$/m.test(msg) || !data) continue;
          const c = JSON.parse(data) as { poolKey: string; fields: string[] };
          if (c.fields.includes('paused')) waiting.get(c.poolKey)?.(performance.now());
        }
      }
    })
    .catch(() => {});
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const patch = (ref: (typeof refs)[number], paused: boolean) => {
    kc.setCurrentContext(ref.context);
    return kc.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject(
      {
        group: 'cluster.x-k8s.io',
        version: 'v1beta2',
        plural: 'machinepools',
        namespace: ref.namespace,
        name: ref.name,
        body: { metadata: { annotations: { 'cluster.x-k8s.io/paused': paused ? 'true' : null } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  };
  const one = async (ref: (typeof refs)[number], paused: boolean) => {
    const key = `${ref.context}/${ref.namespace}/${ref.name}`;
    const seen = new Promise<number>((resolve) => waiting.set(key, resolve));
    try {
      await patch(ref, paused);
      const committed = performance.now();
      const at = await Promise.race([seen, new Promise<null>((r) => setTimeout(() => r(null), 10_000))]);
      if (at === null) out.timedOut++;
      else out.latenciesMs.push(Math.max(0, at - committed));
    } catch (e) {
      out.errors.push((e as Error).message);
    } finally {
      waiting.delete(key);
    }
  };
  const done = (async () => {
    for (let n = 0; !signal.aborted; n++) {
      const ref = refs[n % refs.length] as (typeof refs)[number];
      const started = performance.now();
      await one(ref, true);
      await one(ref, false);
      await new Promise((r) => setTimeout(r, Math.max(0, everyMs - (performance.now() - started))));
    }
  })();
  return { ...out, done };
}

/** One browser-like visit: the page's HTML, then the calls it makes once loaded. Its time, or why it failed. */
async function visit(
  base: string,
  pagePath: string,
  apiPath: string,
): Promise<{ ms: number; htmlMs: number; error?: string }> {
  const t0 = performance.now();
  const html = await fetch(`${base}${pagePath}`, { headers: { accept: 'text/html', 'accept-encoding': 'gzip, br' } });
  await html.text();
  const htmlMs = performance.now() - t0;
  if (!html.ok) return { ms: htmlMs, htmlMs, error: `page HTTP ${html.status}` };
  const calls = await Promise.all(
    // What the page reads once loaded: its live stream's first message makes it read everything again.
    ['/api/sources', apiPath, `${apiPath}/timeline?range=6h`, `${apiPath}/resync`].map(async (p) => {
      const r = await fetch(`${base}${p}`, { headers: { 'accept-encoding': 'gzip, br' } });
      await r.arrayBuffer();
      return r.ok ? null : `${p} HTTP ${r.status}`;
    }),
  );
  const error = calls.find((c) => c !== null);
  return { ms: performance.now() - t0, htmlMs, ...(error ? { error } : {}) };
}

export async function benchCrowd(): Promise<Record<string, unknown>> {
  const fleet = process.env.POOLSCOPE_BENCH_CROWD_FLEET ?? '2x5x100,subs=2,churn=0.01,spread';
  const clients = Number(process.env.POOLSCOPE_BENCH_CROWD_CLIENTS ?? 200);
  const streams = Number(process.env.POOLSCOPE_BENCH_CROWD_STREAMS ?? 200);
  const spread = Number(process.env.POOLSCOPE_BENCH_CROWD_SECONDS ?? 10);
  const sim = await startFleet(fleet, 'poolscope-bench-crowd-');
  const server = startProductionServer(sim, PORT);
  const abort = new AbortController();
  try {
    const warm = await untilAllRead(server, 300, 2000);
    const pid = server.process.pid as number;
    const fleetNow = (await (await fetch(`${server.base}/api/pools`)).json()) as {
      pools: { ref: { context: string; namespace: string; name: string } }[];
    };
    const ref = fleetNow.pools[0]?.ref;
    if (!ref) throw new Error('the fleet has no pool');
    const pagePath = `/pools/${ref.context}/${ref.namespace}/${ref.name}`;
    const apiPath = `/api/pools/${ref.context}/${ref.namespace}/${ref.name}`;
    // A server that has been up has served pages before: one visit to another pool's page loads the page's code
    // (its first render takes ~1 s more), and leaves the crowd's pool's answers and page unread.
    const other = fleetNow.pools.find((p) => p.ref !== ref)?.ref ?? ref;
    const warmUp = await visit(
      server.base,
      `/pools/${other.context}/${other.namespace}/${other.name}`,
      `/api/pools/${other.context}/${other.namespace}/${other.name}`,
    );
    const lag = (text: string) => samples(text, 'poolscope_collector_change_lag_seconds_bucket');
    const rss: { at: number; mb: number }[] = [];
    const sampler = setInterval(() => {
      const s = procStats(pid);
      if (s) rss.push({ at: Date.now(), mb: s.rssMB });
    }, 250);
    const before = procStats(pid)?.rssMB ?? null;
    const counts = { opened: 0, failed: 0, changes: 0 };
    for (let i = 0; i < streams; i++) openStream(`${server.base}/api/stream`, abort.signal, counts);
    await new Promise((r) => setTimeout(r, 3000));
    const lag0 = lag(await server.scrape());
    // Changes made on other pools than the crowd's, through the API server, while the crowd arrives.
    const probeStop = new AbortController();
    const others = fleetNow.pools.map((p) => p.ref).filter((r) => r !== ref);
    const probes = startProbes(sim.env.KUBECONFIG as string, server.base, others, 1000, probeStop.signal);
    const t0 = Date.now();
    const visits = await Promise.all(
      Array.from(
        { length: clients },
        (_, i) =>
          new Promise<Awaited<ReturnType<typeof visit>>>((resolve) =>
            setTimeout(
              () =>
                void visit(server.base, pagePath, apiPath).then(resolve, (e: unknown) =>
                  resolve({ ms: NaN, htmlMs: NaN, error: String(e) }),
                ),
              (i * spread * 1000) / clients,
            ),
          ),
      ),
    );
    const crowdEnd = Date.now();
    probeStop.abort();
    await probes.done;
    const lag1 = lag(await server.scrape());
    await new Promise((r) => setTimeout(r, 5000));
    clearInterval(sampler);
    const after = procStats(pid)?.rssMB ?? null;
    const during = rss.filter((s) => s.at >= t0 && s.at <= crowdEnd).map((s) => s.mb);
    const ok = visits.filter((v) => !v.error).map((v) => v.ms);
    const round = (v: number | null) => (v === null || Number.isNaN(v) ? null : Math.round(v));
    return {
      fleet,
      pools: warm.pools,
      allReadFromAzureSeconds: warm.seconds,
      page: pagePath,
      warmUpVisitMs: round(warmUp.ms),
      clients,
      spreadSeconds: spread,
      streams: { asked: streams, opened: counts.opened, failed: counts.failed, changesDelivered: counts.changes },
      pageAnswerMs: { p50: round(pct(ok, 50)), p95: round(pct(ok, 95)), max: round(Math.max(...ok)) },
      htmlMs: {
        p50: round(
          pct(
            visits.map((v) => v.htmlMs),
            50,
          ),
        ),
        p95: round(
          pct(
            visits.map((v) => v.htmlMs),
            95,
          ),
        ),
      },
      errors: visits.filter((v) => v.error).length,
      errorSamples: [...new Set(visits.flatMap((v) => (v.error ? [v.error] : [])))].slice(0, 5),
      // The collector's own histogram over the crowd: the bucket bound its p95 of change → stored falls under.
      collectorChangeToStoredP95AtMostSeconds: histogramQuantile(lag0, lag1, 95),
      // A pool paused through the API server → its change on a live stream (stored, then announced).
      changeToStreamMs: {
        probes: probes.latenciesMs.length,
        p50: round(pct(probes.latenciesMs, 50)),
        p95: round(pct(probes.latenciesMs, 95)),
        max: round(probes.latenciesMs.length ? Math.max(...probes.latenciesMs) : null),
        timedOut: probes.timedOut,
        errors: probes.errors.slice(0, 3),
      },
      rssMB: {
        before: round(before),
        duringMax: round(during.length ? Math.max(...during) : null),
        after: round(after),
      },
    };
  } finally {
    abort.abort();
    await server.stop();
    await sim.stop();
  }
}
