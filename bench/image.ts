// What the container image runs, read from the Dockerfile, so that the benchmarks run the server as it does.

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');

/**
 * The Node flags the image runs `server.js` with, read from the Dockerfile's `CMD ["node", …flags, "server.js"]`:
 * this benchmark measures what the image runs, and a flag changed there is measured here without a second copy.
 */
export function imageNodeFlags(dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')): string[] {
  const line = dockerfile.split('\n').find((l) => l.startsWith('CMD '));
  let cmd: unknown;
  try {
    cmd = line && JSON.parse(line.slice(4));
  } catch {
    cmd = null;
  }
  if (!Array.isArray(cmd) || cmd[0] !== 'node' || cmd[cmd.length - 1] !== 'server.js' || !cmd.every((a) => typeof a === 'string')) {
    throw new Error(`Dockerfile: expected a line CMD ["node", <flags>…, "server.js"], found ${line ? `"${line}"` : 'no CMD line'}`);
  }
  return cmd.slice(1, -1) as string[];
}

/**
 * The standalone server the image runs (`.next/standalone/server.js`), built when there is none. The build's
 * output goes to stderr: stdout carries the benchmark's JSON report.
 */
export function standaloneServer(): string {
  const serverJs = path.join(ROOT, '.next', 'standalone', 'server.js');
  if (!existsSync(serverJs)) {
    const b = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, stdio: ['ignore', 2, 2] });
    if (b.status !== 0) throw new Error('the build failed');
  }
  return serverJs;
}
