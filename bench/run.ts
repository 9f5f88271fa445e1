// `npm run bench`: runs every benchmark suite and prints one JSON report on stdout.
// Usage: npm run bench [-- suite...]   (suites: analyze, memory, store, cycle, prune, sim-kube, collector, server, api,
// crowd)

import os from 'node:os';
import { benchAnalyze } from './analyze';
import { benchApi } from './api';
import { benchCollector } from './collector';
import { benchCrowd } from './crowd';
import { benchCycle } from './cycle';
import { benchMemory } from './memory';
import { benchPrune } from './prune';
import { benchServer } from './server';
import { benchSimKube } from './sim-kube';
import { benchStore } from './store';

const suites: Record<string, () => Record<string, unknown> | Promise<Record<string, unknown>>> = {
  analyze: benchAnalyze,
  memory: benchMemory,
  store: benchStore,
  cycle: benchCycle,
  prune: benchPrune,
  'sim-kube': benchSimKube,
  collector: benchCollector,
  server: benchServer,
  api: benchApi,
  crowd: benchCrowd,
};

const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !(w in suites));
if (unknown.length) {
  console.error(`Unknown bench suite(s): ${unknown.join(', ')}. Known: ${Object.keys(suites).join(', ')}.`);
  process.exit(2);
}

const report: Record<string, unknown> = {
  machine: {
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    totalMemGiB: Math.round(os.totalmem() / 2 ** 30),
  },
  startedAt: new Date().toISOString(),
};
for (const name of wanted.length ? wanted : Object.keys(suites)) {
  report[name] = await (suites[name] as () => Promise<Record<string, unknown>>)();
}
console.log(JSON.stringify(report, null, 2));
