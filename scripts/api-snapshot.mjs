#!/usr/bin/env node
// Every API answer about a recorded fleet, pinned in time, written to a directory: run it on a copy of one store
// before and after a change, and `diff -r` the two directories to see whether the answers changed. The server
// runs from the current build (.next/standalone) with its collector off, so nothing is read from a cluster or
// written to the store; each pool's answers are asked at its last change, so that no answer depends on the clock.
//
//   node scripts/api-snapshot.mjs --db <poolscope.db> --out <dir> [--port 3999]

import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: { db: { type: 'string' }, out: { type: 'string' }, port: { type: 'string', default: '3999' } },
});
if (!args.db || !args.out) {
  process.stderr.write('usage: api-snapshot.mjs --db <poolscope.db> --out <dir> [--port 3999]\n');
  process.exit(2);
}

// A copy of the store (with its write-ahead log), so that the original is never opened.
const work = mkdtempSync(join(tmpdir(), 'poolscope-snapshot-'));
for (const ext of ['', '-wal', '-shm'])
  if (existsSync(args.db + ext)) copyFileSync(args.db + ext, join(work, `poolscope.db${ext}`));

const base = `http://127.0.0.1:${args.port}`;
const server = spawn(process.execPath, ['.next/standalone/server.js'], {
  env: {
    ...process.env,
    PORT: args.port,
    HOSTNAME: '127.0.0.1',
    POOLSCOPE_DB_PATH: join(work, 'poolscope.db'),
    POOLSCOPE_COLLECTOR: 'false',
    POOLSCOPE_CONTEXTS: process.env.POOLSCOPE_CONTEXTS ?? 'none',
    NEXT_TELEMETRY_DISABLED: '1',
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});

async function get(path) {
  const r = await fetch(base + path);
  return { status: r.status, body: await r.json() };
}

async function waitReady() {
  for (let i = 0; i < 120; i++) {
    try {
      if ((await fetch(`${base}/api/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error('the server did not start');
}

/** The fleet's answer without what changes with the clock: when it was read and the sources' states. */
const fleetShape = ({ at: _at, sources: _sources, ...rest }) => rest;

try {
  await waitReady();
  mkdirSync(args.out, { recursive: true });
  const fleet = await get('/api/pools?deleted=1');
  writeFileSync(join(args.out, 'fleet.json'), JSON.stringify(fleetShape(fleet.body), null, 1));
  let n = 1;
  for (const p of fleet.body.pools) {
    const ref = `/api/pools/${p.ref.context}/${p.ref.namespace}/${p.ref.name}`;
    const to = p.lastChange;
    const from = new Date(Date.parse(to) - 3_600_000).toISOString();
    const file = `${p.ref.context}.${p.ref.namespace}.${p.ref.name}`;
    const timeline = await get(`${ref}/timeline?from=${from}&to=${to}`);
    // The pool as of every tenth change in the hour too: states rebuilt from a keyframe and the patches after it.
    const instants = [...new Set((timeline.body.entries ?? []).map((e) => e.at))].filter((_, i) => i % 10 === 0);
    const asked = [
      ['pool', `${ref}?at=${to}`],
      ['timeline', `${ref}/timeline?from=${from}&to=${to}`],
      ['changes', `${ref}/changes?from=${from}&to=${to}`],
      ...instants.map((at, i) => [`pool-at-${i}`, `${ref}?at=${at}`]),
    ];
    for (const [what, path] of asked) {
      writeFileSync(join(args.out, `${file}.${what}.json`), JSON.stringify(await get(path), null, 1));
      n++;
    }
  }
  process.stdout.write(`${n} answers written to ${args.out}\n`);
} finally {
  server.kill('SIGTERM');
  rmSync(work, { recursive: true, force: true });
}
