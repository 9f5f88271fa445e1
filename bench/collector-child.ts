// Entry of the collector benchmark's measuring process (see bench/collector.ts), bundled by default.
// The server's modules run as production runs them (`node server.js`): without source maps. tsx (the
// POOLSCOPE_BENCH_LOADER=tsx run) turns them on, and Node then keeps every module's map, sources included
// (~12 MB of a 100k run's heap).
process.setSourceMapsEnabled(false);
const { measureInChild } = await import('./collector-measure');

await measureInChild();
process.exit(0);

export {};
