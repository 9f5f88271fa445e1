#!/usr/bin/env node
// A smoke start of the production build as the image runs it: `.next/standalone/server.js` under the Node running
// this script with the Node flags of the Dockerfile's CMD, with no fleet (POOLSCOPE_COLLECTOR=false) and a fresh SQLite file. It holds when /api/healthz answers
// 200, /api/readyz answers from the store (503 `not-ready`: no collector has stored a cycle; a store that cannot open
// answers 500), and SIGTERM ends the server with exit 0. Exit 0 when all held; the server's output otherwise.
// Usage: node scripts/smoke.mjs   (after `npm run build`; NODE_OPTIONS passes through to the server)

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = path.resolve(import.meta.dirname, '..');

/** The Node flags of the Dockerfile's `CMD ["node", …flags, "server.js"]` (as bench/image.ts reads them). */
function imageFlags() {
  const line = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')
    .split('\n')
    .find((l) => l.startsWith('CMD '));
  const cmd = line ? JSON.parse(line.slice(4)) : null;
  if (!Array.isArray(cmd) || cmd[0] !== 'node' || cmd.at(-1) !== 'server.js')
    throw new Error('Dockerfile: expected a line CMD ["node", <flags>…, "server.js"]');
  return cmd.slice(1, -1);
}

/** A port nothing listens on now. */
const freePort = () =>
  new Promise((resolve, reject) => {
    const s = createServer()
      .once('error', reject)
      .listen(0, '127.0.0.1', () => {
        const { port } = s.address();
        s.close(() => resolve(port));
      });
  });

/** The first answer to GET path within `ms`, as { status, body }; null when none came. */
async function firstAnswer(base, p, ms) {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(250)) {
    const r = await fetch(base + p).catch(() => null);
    if (r) return { status: r.status, body: await r.text() };
  }
  return null;
}

async function smoke() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'poolscope-smoke-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const { PATH, HOME, NODE_OPTIONS, POOLSCOPE_TEST_SQLITE_ADDON } = process.env;
  const env = {
    PATH,
    HOME,
    NODE_OPTIONS,
    POOLSCOPE_TEST_SQLITE_ADDON,
    NODE_ENV: 'production',
    NEXT_TELEMETRY_DISABLED: '1',
    PORT: String(port),
    HOSTNAME: '127.0.0.1',
    POOLSCOPE_COLLECTOR: 'false',
    POOLSCOPE_DB_PATH: path.join(dir, 'poolscope.db'),
  };
  const child = spawn(process.execPath, [...imageFlags(), path.join(ROOT, '.next', 'standalone', 'server.js')], {
    env: Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  for (const s of [child.stdout, child.stderr])
    s.on('data', (d) => {
      output += d;
    });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? `killed by ${signal}`)));
  const problems = [];
  try {
    const health = await Promise.race([
      firstAnswer(base, '/api/healthz', 60_000),
      exited.then((code) => ({ exited: code })),
    ]);
    if (!health) problems.push('/api/healthz answered nothing within 60 s');
    else if ('exited' in health)
      return { problems: [`the server exited (${health.exited}) before /api/healthz answered`], output };
    else if (health.status !== 200) problems.push(`/api/healthz answered ${health.status} ${health.body}`);
    const ready = await firstAnswer(base, '/api/readyz', 5_000);
    if (!(ready?.status === 503 && ready.body.includes('"not-ready"')))
      problems.push(
        `/api/readyz answered ${ready ? `${ready.status} ${ready.body}` : 'nothing'}, not 503 not-ready from the store`,
      );
    child.kill('SIGTERM');
    const code = await Promise.race([exited, sleep(30_000, 'still running 30 s after SIGTERM', { ref: false })]);
    if (code !== 0) problems.push(`after SIGTERM: ${typeof code === 'number' ? `exit ${code}` : code}`);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
  return { problems, output };
}

const { problems, output } = await smoke();
if (problems.length) {
  console.error(
    `smoke (Node ${process.version}): the standalone server did not hold:\n  ${problems.join('\n  ')}\n--- its output ---\n${output}`,
  );
  process.exit(1);
}
console.log(
  `smoke (Node ${process.version}): /api/healthz 200, /api/readyz 503 not-ready from the store, SIGTERM → exit 0`,
);
