#!/usr/bin/env node
// `npm test`: every suite that exists — static checks, unit tests, the same under Node 24, browser tests — and one
// total line.
// Usage: npm test [-- suite...]   suites: lint, typecheck, unit, node24, browser (default: all)
// The lint suite is ESLint, Prettier's check of the formatting and knip's of dead code: `npm run check`'s static checks.
// Missing system packages (Debian chromium, kubectl) are installed when this runs as root with apt-get; otherwise it
// stops and prints the exact command to run. promtool is the machine's, or else the binary alone taken out of Debian's
// prometheus package into node_modules/.cache (scripts/promtool.mjs): that package is never installed.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareNode24 } from './node24.mjs';
import { ensurePromtool } from './promtool.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };

function run(cmd, args, opts = {}) {
  console.log(`\n$ ${[cmd, ...args].join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env, ...opts });
  if (r.error) console.error(`could not run ${cmd}: ${r.error.message}`);
  return r.status ?? 1;
}

function readJson(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

/** Finds an executable by absolute path or on PATH. */
function found(binary) {
  if (binary.includes('/')) return existsSync(binary);
  return (process.env.PATH ?? '').split(path.delimiter).some((d) => d && existsSync(path.join(d, binary)));
}

/** Makes sure a Debian package's binary exists; installs it when we are root with apt-get. */
function ensurePackage({ binary, pkg, envVar }) {
  const override = envVar ? process.env[envVar] : undefined;
  if (override && existsSync(override)) return true;
  if (found(binary)) return true;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const hasApt = existsSync('/usr/bin/apt-get');
  if (isRoot && hasApt) {
    console.log(`\n${binary} is missing: installing Debian package ${pkg} …`);
    run('apt-get', ['update', '-qq']);
    if (
      run('apt-get', ['install', '-y', '-qq', pkg], { env: { ...env, DEBIAN_FRONTEND: 'noninteractive' } }) === 0 &&
      found(binary)
    )
      return true;
  }
  console.error(
    `\n${binary} is missing. Install it with:\n\n    sudo apt-get install -y ${pkg}\n` +
      (envVar ? `\nor point ${envVar} at an existing binary.\n` : ''),
  );
  return false;
}

const hasFiles = (dir, re) => existsSync(dir) && readdirSync(dir, { recursive: true }).some((f) => re.test(String(f)));

/** What the unit tests need beyond node_modules: kubectl (the simulator's tests drive the real client), and promtool
 * (it checks and unit-tests the alert rules; without it those tests report themselves skipped). */
function unitNeeds() {
  if (!ensurePackage({ binary: 'kubectl', pkg: 'kubernetes-client' })) return false;
  const promtool = ensurePromtool();
  if (promtool) env.POOLSCOPE_PROMTOOL = promtool;
  return true;
}

/** The unit tests (vitest) under `node`, its JSON report in `out`: { passed, failed, skipped[, note] }. */
function vitest(out, node = process.execPath, runEnv = env) {
  rmSync(out, { force: true });
  const code = run(node, [bin('vitest'), 'run', '--reporter=default', '--reporter=json', `--outputFile=${out}`], {
    env: runEnv,
  });
  const r = readJson(out);
  if (!r) return { passed: 0, failed: 1, skipped: 0, note: `vitest exited ${code} without a report` };
  const failed = r.numFailedTests + (code !== 0 && r.numFailedTests === 0 ? 1 : 0);
  return { passed: r.numPassedTests, failed, skipped: r.numPendingTests + r.numTodoTests };
}

const since = (t0) => `${Math.round((Date.now() - t0) / 1000)} s`;

/** Whether a suite of this run built .next/standalone (the node24 suite, under Node 24): the browser suite reuses it. */
let built = false;

/** Runs every static check (one failing does not stop the others); each counts as one, and the note names those that
 * failed. */
function staticChecks(checks) {
  const failed = checks.filter(({ cmd, args }) => run(bin(cmd), args) !== 0).map(({ name }) => name);
  const note = failed.length ? { note: `${failed.join(', ')} failed` } : {};
  return { passed: checks.length - failed.length, failed: failed.length, skipped: 0, ...note };
}

/** Each suite returns { passed, failed, skipped }. Static checks count as one check each. */
export const suites = {
  lint: () =>
    staticChecks([
      { name: 'eslint', cmd: 'eslint', args: ['--max-warnings=0', '.'] },
      { name: 'format', cmd: 'prettier', args: ['--check', '.'] },
      { name: 'deadcode', cmd: 'knip', args: ['--no-progress'] },
    ]),

  typecheck: () =>
    run(bin('tsc'), ['--noEmit']) === 0 ? { passed: 1, failed: 0, skipped: 0 } : { passed: 0, failed: 1, skipped: 0 },

  unit: () =>
    unitNeeds() ? vitest('test-results/vitest.json') : { passed: 0, failed: 1, skipped: 0, note: 'kubectl missing' },

  // The image's Node (24) whatever this machine runs: the unit tests, the production build and a smoke start of the
  // standalone server under it. scripts/node24.mjs fetches Node 24 from the npm registry and compiles better-sqlite3
  // for it into node_modules/.cache/node24, leaving node_modules' own copy as it is.
  node24: () => {
    if (!unitNeeds()) return { passed: 0, failed: 1, skipped: 0, note: 'kubectl missing' };
    let t0 = Date.now();
    let n24;
    try {
      n24 = prepareNode24(env);
    } catch (e) {
      console.error(`\nnode24: FAILED: cannot run the tests under Node 24: ${e.message}`);
      return { passed: 0, failed: 1, skipped: 0, note: `no Node 24: ${e.message}` };
    }
    const times = [`${n24.version} ready in ${since(t0)}`];
    t0 = Date.now();
    const unit = vitest('test-results/vitest-node24.json', n24.node, n24.env);
    times.push(`unit ${since(t0)}`);
    t0 = Date.now();
    built = run(n24.node, ['scripts/build.mjs'], { env: n24.env }) === 0;
    times.push(`build ${since(t0)}`);
    t0 = Date.now();
    const smoke = built && run(n24.node, ['scripts/smoke.mjs'], { env: n24.env }) === 0;
    if (built) times.push(`smoke ${since(t0)}`);
    const failures = [unit.note, !built && 'the build failed', built && !smoke && 'the smoke start failed'].filter(
      Boolean,
    );
    return {
      passed: unit.passed + Number(built) + Number(smoke),
      failed: unit.failed + Number(!built) + Number(built && !smoke),
      skipped: unit.skipped + Number(!built),
      note: [...failures, times.join(', ')].join('; '),
    };
  },

  browser: () => {
    if (!hasFiles('e2e', /\.spec\.ts$/)) return { passed: 0, failed: 0, skipped: 0, note: 'no browser tests' };
    if (!ensurePackage({ binary: '/usr/bin/chromium', pkg: 'chromium', envVar: 'POOLSCOPE_CHROMIUM' })) {
      return { passed: 0, failed: 1, skipped: 0, note: 'chromium missing' };
    }
    // A build this run made is the same build (its traced better-sqlite3 is node_modules' own, for this Node).
    if (!built && run(process.execPath, ['scripts/build.mjs']) !== 0)
      return { passed: 0, failed: 1, skipped: 0, note: 'the build failed' };
    const out = 'test-results/playwright.json';
    rmSync(out, { force: true });
    const code = run(bin('playwright'), ['test']);
    const r = readJson(out);
    if (!r?.stats) return { passed: 0, failed: 1, skipped: 0, note: `playwright exited ${code} without a report` };
    const failed = r.stats.unexpected + (code !== 0 && r.stats.unexpected === 0 ? 1 : 0);
    return { passed: r.stats.expected + r.stats.flaky, failed, skipped: r.stats.skipped };
  },
};

function main() {
  process.chdir(root);
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((s) => !(s in suites));
  if (unknown.length) {
    console.error(`Unknown suite(s): ${unknown.join(', ')}. Known: ${Object.keys(suites).join(', ')}.`);
    process.exit(2);
  }
  mkdirSync('test-results', { recursive: true });

  const results = [];
  for (const name of wanted.length ? wanted : Object.keys(suites)) {
    console.log(`\n━━ ${name} ━━`);
    const started = Date.now();
    results.push({ name, seconds: Math.round((Date.now() - started) / 100) / 10, ...suites[name]() });
    results.at(-1).seconds = Math.round((Date.now() - started) / 100) / 10;
  }

  console.log('\n━━ summary ━━');
  for (const r of results) {
    console.log(
      `${r.name.padEnd(10)} ${String(r.passed).padStart(5)} passed ${String(r.failed).padStart(3)} failed ${String(r.skipped).padStart(3)} skipped  ${String(r.seconds).padStart(6)} s${r.note ? `  (${r.note})` : ''}`,
    );
  }
  const total = results.reduce(
    (t, r) => ({ passed: t.passed + r.passed, failed: t.failed + r.failed, skipped: t.skipped + r.skipped }),
    { passed: 0, failed: 0, skipped: 0 },
  );
  console.log(`total: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
  process.exit(total.failed > 0 ? 1 : 0);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
