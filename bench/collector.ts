// Collector benchmark: a simulated fleet (in a child process, so its memory and CPU are not counted) with
// churn; the collector in another child process, the one measured (see measuringEntry). Reports RSS, steady CPU, Kubernetes change → stored transition
// latency, ARM calls per scale set per hour beside a naive 15 s poller, 429s, and store bytes per pool per day.
// Size: POOLSCOPE_BENCH_FLEET (default 10x10x20,subs=4,churn=0.01), duration: POOLSCOPE_BENCH_SECONDS (default 90).

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { startFleet } from './fleet';
import { reportOf } from './report-line';

const ROOT = path.resolve(import.meta.dirname, '..');

/** Packages left out of the measuring process's bundle, as the standalone build leaves them (native, or workers). */
const EXTERNAL = ['better-sqlite3', 'pg', 'pg-native', 'pino', 'thread-stream'];

/**
 * The measuring process's code as production runs the server's: one minified bundle (Next bundles the
 * collector into the standalone server), not TypeScript through tsx: at 100k VMs its loader and the unminified
 * node_modules (client-node alone ~16 MB of source text in the heap) were ~97 MB of the RSS. A profile of the
 * window keeps the identifiers, so its functions keep their names. Returns the node arguments that run it.
 */
async function measuringEntry(loader: string, profiling: boolean): Promise<string[]> {
  const entry = path.join(ROOT, 'bench', 'collector-child.ts');
  if (loader === 'tsx') return ['--conditions=react-server', '--import', 'tsx', entry];
  if (loader !== 'bundle') throw new Error(`POOLSCOPE_BENCH_LOADER: expected bundle or tsx, got ${loader}`);
  const { build } = await import('esbuild');
  // Inside node_modules, so the packages left out resolve from it.
  const dir = path.join(ROOT, 'node_modules', '.cache', 'poolscope-bench');
  mkdirSync(dir, { recursive: true });
  const outfile = path.join(dir, 'collector-child.mjs');
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['react-server'],
    external: EXTERNAL,
    minifyWhitespace: true,
    minifySyntax: true,
    minifyIdentifiers: !profiling,
    tsconfig: path.join(ROOT, 'tsconfig.json'),
    logLevel: 'error',
    legalComments: 'none',
    // CommonJS packages inside an ES module bundle still call require and read __dirname. Their free __dirname and
    // __filename are mapped to names of the banner's own: an ES module of the bundle (open, under @azure/identity)
    // declares a top-level __dirname, which the banner's would collide with when identifiers are kept (profiling).
    define: { __dirname: '__psDirname', __filename: '__psFilename' },
    banner: {
      js: "import { createRequire as __psReq } from 'node:module'; import { fileURLToPath as __psPath } from 'node:url'; const require = __psReq(import.meta.url); const __psFilename = __psPath(import.meta.url); const __psDirname = __psFilename.slice(0, __psFilename.lastIndexOf('/'));",
    },
  });
  return [outfile];
}

/** How many pools a fleet spec (`<clusters>x<pools>x<instances>,…[,aks=N]`) has, AKS pools included. */
function poolsOf(fleet: string): number {
  const m = /^(\d+)x(\d+)x\d+/.exec(fleet);
  if (!m) throw new Error(`POOLSCOPE_BENCH_FLEET: expected <clusters>x<pools>x<instances>, got ${fleet}`);
  const aks = Number(/,aks=(\d+)/.exec(fleet)?.[1] ?? 0);
  return Number(m[1]) * (Number(m[2]) + aks);
}

export async function benchCollector(): Promise<Record<string, unknown>> {
  const fleet = process.env.POOLSCOPE_BENCH_FLEET ?? '10x10x20,subs=4,churn=0.01';
  const seconds = Number(process.env.POOLSCOPE_BENCH_SECONDS ?? 90);
  // POOLSCOPE_BENCH_PRELOAD: a shared library preloaded into the collector process only (LD_PRELOAD), e.g.
  // another malloc, as a container image might run it.
  const preload = process.env.POOLSCOPE_BENCH_PRELOAD;
  if (preload && !existsSync(preload)) throw new Error(`POOLSCOPE_BENCH_PRELOAD: no such file ${preload}`);
  // POOLSCOPE_BENCH_LOADER=tsx: the measuring process runs the TypeScript through tsx instead of the bundle.
  const loader = process.env.POOLSCOPE_BENCH_LOADER ?? 'bundle';
  const profiling = Boolean(process.env.POOLSCOPE_BENCH_CPU_PROFILE || process.env.POOLSCOPE_BENCH_ALLOC_PROFILE);
  const entry = await measuringEntry(loader, profiling);
  const sim = await startFleet(fleet);
  const { env, contexts: managementContexts, stateDir } = sim;
  // The collector process is this one; it must trust the simulator's CA, which Node reads only at start,
  // so the measurement runs in a child process started with NODE_EXTRA_CA_CERTS.
  // POOLSCOPE_BENCH_NODE_FLAGS: Node/V8 flags for the collector process, to try settings for a Deployment.
  const flags = (process.env.POOLSCOPE_BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
  const child = spawn(process.execPath, [...flags, '--expose-gc', ...entry], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...env,
      ...(preload ? { LD_PRELOAD: preload } : {}),
      POOLSCOPE_DB_PATH: path.join(stateDir, 'bench.db'),
      POOLSCOPE_CONTEXTS: managementContexts.join(','),
      POOLSCOPE_BENCH_SECONDS: String(seconds),
      // The warm-up waits for every pool of the fleet (clusters × pools a cluster), not only those seen so far.
      POOLSCOPE_BENCH_POOLS: String(poolsOf(fleet)),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let result = '';
  child.stdout.on('data', (d: Buffer) => {
    result += d.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  // The store of a 100k run weighs a gigabyte: kept only when asked (POOLSCOPE_BENCH_KEEP=1, to look into it).
  const keep = process.env.POOLSCOPE_BENCH_KEEP === '1';
  await sim.stop({ keep });
  if (keep) console.error(`collector bench: state kept in ${stateDir}`);
  if (code !== 0) throw new Error(`collector benchmark failed (exit ${code}): ${result}`);
  // glibc's arena limit and jemalloc's settings, when set (they change the memory outside V8's heap), so a report
  // says how it ran.
  const arenas = process.env.MALLOC_ARENA_MAX;
  const mallocConf = process.env.MALLOC_CONF;
  return {
    fleet,
    seconds,
    contexts: managementContexts.length,
    loader,
    ...(flags.length ? { nodeFlags: flags } : {}),
    ...(preload ? { preload } : {}),
    ...(arenas ? { mallocArenaMax: arenas } : {}),
    ...(mallocConf ? { mallocConf } : {}),
    ...reportOf(result),
  };
}
