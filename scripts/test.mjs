#!/usr/bin/env node
// `npm test`: every suite that exists — static checks, unit tests, browser tests — and one total line.
// Usage: npm test [-- suite...]   suites: lint, typecheck, unit, browser (default: all)
// Missing system packages (Debian chromium, kubectl) are installed when this runs as root with apt-get; otherwise it
// stops and prints the exact command to run. promtool is the machine's, or else the binary alone taken out of Debian's
// prometheus package into node_modules/.cache (scripts/promtool.mjs): that package is never installed.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensurePromtool } from './promtool.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);
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
    if (run('apt-get', ['install', '-y', '-qq', pkg], { env: { ...env, DEBIAN_FRONTEND: 'noninteractive' } }) === 0 && found(binary)) return true;
  }
  console.error(`\n${binary} is missing. Install it with:\n\n    sudo apt-get install -y ${pkg}\n` +
    (envVar ? `\nor point ${envVar} at an existing binary.\n` : ''));
  return false;
}

const hasFiles = (dir, re) => existsSync(dir) && readdirSync(dir, { recursive: true }).some((f) => re.test(String(f)));

/** Each suite returns { passed, failed, skipped }. Static checks count as one check each. */
const suites = {
  lint: () => (run(bin('eslint'), ['--max-warnings=0', '.']) === 0 ? { passed: 1, failed: 0, skipped: 0 } : { passed: 0, failed: 1, skipped: 0 }),

  typecheck: () => (run(bin('tsc'), ['--noEmit']) === 0 ? { passed: 1, failed: 0, skipped: 0 } : { passed: 0, failed: 1, skipped: 0 }),

  unit: () => {
    // The simulator's tests drive the real kubectl.
    if (!ensurePackage({ binary: 'kubectl', pkg: 'kubernetes-client' })) return { passed: 0, failed: 1, skipped: 0, note: 'kubectl missing' };
    // promtool checks and unit-tests the alert rules; without it those tests report themselves skipped.
    const promtool = ensurePromtool();
    if (promtool) env.POOLSCOPE_PROMTOOL = promtool;
    const out = 'test-results/vitest.json';
    rmSync(out, { force: true });
    const code = run(bin('vitest'), ['run', '--reporter=default', '--reporter=json', `--outputFile=${out}`]);
    const r = readJson(out);
    if (!r) return { passed: 0, failed: 1, skipped: 0, note: `vitest exited ${code} without a report` };
    const failed = r.numFailedTests + (code !== 0 && r.numFailedTests === 0 ? 1 : 0);
    return { passed: r.numPassedTests, failed, skipped: r.numPendingTests + r.numTodoTests };
  },

  browser: () => {
    if (!hasFiles('e2e', /\.spec\.ts$/)) return { passed: 0, failed: 0, skipped: 0, note: 'no browser tests' };
    if (!ensurePackage({ binary: '/usr/bin/chromium', pkg: 'chromium', envVar: 'POOLSCOPE_CHROMIUM' })) {
      return { passed: 0, failed: 1, skipped: 0, note: 'chromium missing' };
    }
    if (run(process.execPath, ['scripts/build.mjs']) !== 0) return { passed: 0, failed: 1, skipped: 0, note: 'the build failed' };
    const out = 'test-results/playwright.json';
    rmSync(out, { force: true });
    const code = run(bin('playwright'), ['test']);
    const r = readJson(out);
    if (!r?.stats) return { passed: 0, failed: 1, skipped: 0, note: `playwright exited ${code} without a report` };
    const failed = r.stats.unexpected + (code !== 0 && r.stats.unexpected === 0 ? 1 : 0);
    return { passed: r.stats.expected + r.stats.flaky, failed, skipped: r.stats.skipped };
  },
};

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
  console.log(`${r.name.padEnd(10)} ${String(r.passed).padStart(5)} passed ${String(r.failed).padStart(3)} failed ${String(r.skipped).padStart(3)} skipped  ${String(r.seconds).padStart(6)} s${r.note ? `  (${r.note})` : ''}`);
}
const total = results.reduce((t, r) => ({ passed: t.passed + r.passed, failed: t.failed + r.failed, skipped: t.skipped + r.skipped }), { passed: 0, failed: 0, skipped: 0 });
console.log(`total: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
process.exit(total.failed > 0 ? 1 : 0);
