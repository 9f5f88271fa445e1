// Where the collector's heap goes, for the collector benchmark's report: lib/'s process-wide tables, and the
// breakdown by owner (POOLSCOPE_BENCH_BREAKDOWN=1), apart because it tears the collector's state down to measure it.

import { parseCache } from '../lib/provider-id';
import { rowPlaces } from '../lib/row-order';
import { internTable } from '../lib/slim';
import type { Collector } from '../server/collector/collector';

/** The process-wide bounded tables of lib/: shared strings, parsed providerIDs, the instance table's places. */
export function sharedTables() {
  return { interned: internTable(), parsedProviderIds: parseCache(), rowPlaces: rowPlaces() };
}

/**
 * Where the collector's heap goes (POOLSCOPE_BENCH_BREAKDOWN=1, at the end of a run): the heap after a full GC,
 * then again after dropping, in turn, the previous analyses, the Azure reads and the Kubernetes sources
 * (informers and their caches). Destroys the collector's state, so it runs last.
 */
export async function heapBreakdown(
  col: Pick<Collector, 'forBenchmarks'>,
  tables: ReturnType<typeof sharedTables>,
): Promise<Record<string, unknown>> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('POOLSCOPE_BENCH_BREAKDOWN needs node --expose-gc');
  const used = () => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  const c = col.forBenchmarks;
  const mb = (n: number) => Math.round(n / 2 ** 20);
  const total = used();
  const { sample, detailBytes, analysisShape } = sampleAnalyses(c.kept());
  // WeakRef targets stay alive until the job that created the refs ends: collect in a later tick.
  const tick = () => new Promise((r) => setTimeout(r, 0));
  await tick();
  c.drop('analyses');
  await tick();
  const afterPrevious = used();
  const alive = () => sample.filter((w) => w.deref() !== undefined).length;
  const aliveAfterPrevious = alive();
  c.drop('azure');
  await tick();
  const afterAzure = used();
  c.drop('sources');
  await new Promise((r) => setTimeout(r, 500));
  const afterSources = used();
  // The shared tables, and the strings only they still hold (the sources' IDs and names among them).
  for (const t of Object.values(tables)) t.clear();
  const afterTables = used();
  // POOLSCOPE_BENCH_HEAP_SNAPSHOT=<file>: what is left (the "rest"), for Chrome DevTools' Memory tab.
  if (process.env.POOLSCOPE_BENCH_HEAP_SNAPSHOT) {
    const { writeHeapSnapshot } = await import('node:v8');
    writeHeapSnapshot(process.env.POOLSCOPE_BENCH_HEAP_SNAPSHOT);
  }
  return {
    heapUsed: mb(total),
    previousAnalyses: mb(total - afterPrevious),
    azureReads: mb(afterPrevious - afterAzure),
    kubeSources: mb(afterAzure - afterSources),
    sharedTables: mb(afterSources - afterTables),
    rest: mb(afterTables),
    analysisJsonBytesPerPool: detailBytes,
    analysisShape,
    sampledAnalysesAliveAfterClearingPrevious: aliveAfterPrevious,
    sampledAnalysesAliveAtEnd: alive(),
    sampled: sample.length,
  };
}

/** Up to 50 of the previous analyses: WeakRefs to them, and what they are made of. */
function sampleAnalyses(previous: ReadonlyMap<string, object>) {
  // Whether the analyses are held by anything besides `previous` (WeakRefs to a sample of them).
  const sampled = [...previous.values()].slice(0, 50) as unknown as Record<string, unknown>[];
  const sample = sampled.map((d) => new WeakRef(d));
  const detailBytes = Math.round(JSON.stringify(sampled).length / Math.max(1, sampled.length));
  // By part (the instance tables are not kept: the store has them), and how many drift items and findings.
  const bytesByPart: Record<string, number> = {};
  for (const d of sampled)
    for (const [k, v] of Object.entries(d))
      bytesByPart[k] = (bytesByPart[k] ?? 0) + Math.round(JSON.stringify(v ?? null).length / sampled.length);
  const perPool = (k: string) =>
    Math.round(
      (sampled.reduce((n, d) => n + (Array.isArray(d[k]) ? (d[k] as unknown[]).length : 0), 0) /
        Math.max(1, sampled.length)) *
        10,
    ) / 10;
  const analysisShape = { bytesByPart, driftItemsPerPool: perPool('drift'), findingsPerPool: perPool('findings') };
  // Not held while the heap is measured.
  sampled.length = 0;
  return { sample, detailBytes, analysisShape };
}
