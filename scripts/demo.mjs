#!/usr/bin/env node
// `npm run demo`: builds poolscope, starts the simulated fleet (sim/scenarios/demo.yaml) and the dashboard
// pointed at it through ordinary configuration (the env file the simulator writes: KUBECONFIG, AZURE_*, the
// ARM endpoint, the CA), behind a small auth proxy that signs you in as the simulator's `operator` (so Resync
// works), and prints the URL. Ctrl-C stops everything.
//
// Options: --port <n> (3000)  --no-build  --state-dir <dir> (a new temp dir)  --scenario <file>  --speed <n>

import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { startAuthProxy } from './demo-auth-proxy.mjs';
import { readEnvFile } from '../sim/env-file.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');
const bin = (name) => path.join(ROOT, 'node_modules', '.bin', name);
/** What the image runs: the standalone server of the build. */
const SERVER = path.join(ROOT, '.next', 'standalone', 'server.js');

function parseArgs(argv) {
  const o = {
    port: 3000,
    build: true,
    stateDir: null,
    scenario: path.join(ROOT, 'sim', 'scenarios', 'demo.yaml'),
    speed: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) fail(`${a} needs a value`);
      return v;
    };
    if (a === '--port') o.port = Number(value());
    else if (a === '--no-build') o.build = false;
    else if (a === '--state-dir') o.stateDir = path.resolve(value());
    else if (a === '--scenario') o.scenario = path.resolve(value());
    else if (a === '--speed') o.speed = value();
    else fail(`unknown option ${a}`);
  }
  if (!Number.isInteger(o.port) || o.port < 1 || o.port > 65535) fail('--port must be a port number');
  return o;
}

function fail(message) {
  console.error(
    `demo: ${message}\nusage: npm run demo -- [--port 3000] [--no-build] [--state-dir DIR] [--scenario FILE] [--speed N]`,
  );
  process.exit(2);
}

const opts = parseArgs(process.argv.slice(2));

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

if (opts.build) {
  console.log('demo: building poolscope (npm run build)…');
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) fail('the build failed (see above)');
} else if (!existsSync(SERVER)) {
  fail('--no-build, but there is no build: run `npm run build` first');
}

const stateDir = opts.stateDir ?? mkdtempSync(path.join(os.tmpdir(), 'poolscope-demo-'));
mkdirSync(stateDir, { recursive: true });
const envFile = path.join(stateDir, 'env');
rmSync(envFile, { force: true });
rmSync(path.join(stateDir, 'poolscope.db'), { force: true });
rmSync(path.join(stateDir, 'poolscope.db-wal'), { force: true });

const children = [];
let stopping = false;
function stopAll(code) {
  if (stopping) return;
  stopping = true;
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  setTimeout(() => process.exit(code), 1500).unref();
  Promise.all(children.map((c) => (c.exitCode !== null ? null : new Promise((r) => c.once('exit', r))))).then(() =>
    process.exit(code),
  );
}
process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));

function prefixed(child, tag) {
  const pipe = (stream, out) => {
    let buf = '';
    stream.on('data', (d) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop() ?? '';
      for (const l of lines) out.write(`[${tag}] ${l}\n`);
    });
  };
  pipe(child.stdout, process.stdout);
  pipe(child.stderr, process.stderr);
}

function start(tag, cmd, args, env) {
  const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  prefixed(child, tag);
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`demo: the ${tag} stopped (${signal ?? `exit ${code}`}); stopping everything.`);
      stopAll(1);
    }
  });
  return child;
}

const simArgs = [
  path.join(ROOT, 'sim', 'cli.ts'),
  '--scenario',
  opts.scenario,
  '--state-dir',
  stateDir,
  ...(opts.speed ? ['--speed', opts.speed] : []),
];
start('sim', bin('tsx'), simArgs, process.env);
for (let i = 0; i < 600 && !existsSync(envFile); i++) await new Promise((r) => setTimeout(r, 100));
if (!existsSync(envFile)) {
  console.error('demo: the simulator did not write its env file within 60 s');
  stopAll(1);
} else {
  const simEnv = readEnvFile(envFile);
  const env = {
    ...process.env,
    ...simEnv,
    NEXT_TELEMETRY_DISABLED: '1',
    POOLSCOPE_DB_PATH: path.join(stateDir, 'poolscope.db'),
    // A lively demo: Azure is read every 5 s while a pool moves, every 20 s when it is steady.
    POOLSCOPE_FAST_INTERVAL_SECONDS: process.env.POOLSCOPE_FAST_INTERVAL_SECONDS ?? '5',
    POOLSCOPE_SLOW_INTERVAL_SECONDS: process.env.POOLSCOPE_SLOW_INTERVAL_SECONDS ?? '20',
  };
  // The dashboard listens on a private port behind the demo's auth proxy, which signs everyone in as the
  // simulator's `operator` (allowed to patch pools by the simulated cluster's RBAC).
  const secret = randomBytes(32).toString('hex');
  const inner = await freePort();
  env.POOLSCOPE_TRUSTED_PROXY = 'demo-auth-proxy';
  env.POOLSCOPE_TRUSTED_PROXY_SECRET = secret;
  start('dashboard', process.execPath, [SERVER], { ...env, PORT: String(inner), HOSTNAME: '127.0.0.1' });
  try {
    await startAuthProxy({
      port: opts.port,
      target: `http://127.0.0.1:${inner}`,
      user: 'operator',
      groups: ['pool-operators'],
      secret,
    });
  } catch (e) {
    console.error(`demo: cannot listen on port ${opts.port}: ${e.message}`);
    stopAll(1);
  }
  const url = `http://localhost:${opts.port}`;
  for (let i = 0; i < 300 && !stopping; i++) {
    const ok = await fetch(`${url}/api/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) {
      console.log(
        `\npoolscope demo is running: ${url} (signed in as "operator" through the demo auth proxy)\n  simulator state and settings: ${stateDir} (env file: ${envFile})\n  Ctrl-C stops everything.\n`,
      );
      break;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
