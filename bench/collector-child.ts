// Entry of the collector benchmark's measuring process (see bench/collector.ts).
// The server's modules run as production runs them (`node server.js`): without source maps. tsx turns them on,
// and Node then keeps every module's map, sources included (~12 MB of a 100k run's heap).
process.setSourceMapsEnabled(false);
const { measureInChild } = await import('./collector');

await measureInChild();
process.exit(0);

export {};
