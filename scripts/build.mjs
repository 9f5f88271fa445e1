#!/usr/bin/env node
// `npm run build`: next build with `output: 'standalone'`, then the static assets copied next to the standalone
// server (Next leaves that to the deployer), so `.next/standalone` is everything the image runs:
// `node .next/standalone/server.js` with PORT and HOSTNAME.

import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, rmSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const r = spawnSync(path.join(ROOT, 'node_modules', '.bin', 'next'), ['build'], {
  cwd: ROOT,
  stdio: 'inherit',
  env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
});
if (r.status !== 0) process.exit(r.status ?? 1);
const standalone = path.join(ROOT, '.next', 'standalone');
if (!existsSync(path.join(standalone, 'server.js'))) {
  console.error('build: .next/standalone/server.js is missing: is `output: "standalone"` set in next.config.ts?');
  process.exit(1);
}
rmSync(path.join(standalone, '.next', 'static'), { recursive: true, force: true });
cpSync(path.join(ROOT, '.next', 'static'), path.join(standalone, '.next', 'static'), { recursive: true });
if (existsSync(path.join(ROOT, 'public')))
  cpSync(path.join(ROOT, 'public'), path.join(standalone, 'public'), { recursive: true });
console.log('build: standalone server ready in .next/standalone (node .next/standalone/server.js)');
