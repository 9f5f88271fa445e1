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
  if (
    !Array.isArray(cmd) ||
    cmd[0] !== 'node' ||
    cmd[cmd.length - 1] !== 'server.js' ||
    !cmd.every((a) => typeof a === 'string')
  ) {
    throw new Error(
      `Dockerfile: expected a line CMD ["node", <flags>…, "server.js"], found ${line ? `"${line}"` : 'no CMD line'}`,
    );
  }
  return cmd.slice(1, -1) as string[];
}

/**
 * The shared library the image preloads (`ENV LD_PRELOAD=<path>`, e.g. jemalloc as its malloc), by file name;
 * null when it preloads none.
 */
export function imagePreload(dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')): string | null {
  const lib = imageEnv('LD_PRELOAD', dockerfile);
  return lib === null ? null : path.basename(lib);
}

/**
 * The value of an `ENV <name>=<value>` line of the Dockerfile (one variable a line, the value unquoted or in double
 * quotes), null when it sets none: the benchmarks run the server with what the image sets (MALLOC_CONF, jemalloc's
 * settings) without a second copy of it.
 */
export function imageEnv(
  name: string,
  dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'),
): string | null {
  const start = new RegExp(`^ENV\\s+${name}[=\\s]`);
  const lines = dockerfile.split('\n').filter((l) => start.test(l));
  if (lines.length > 1) throw new Error(`Dockerfile: expected at most one ENV ${name} line, found ${lines.length}`);
  if (!lines[0]) return null;
  const m = new RegExp(`^ENV\\s+${name}=("([^"\\s]*)"|([^"\\s]+))\\s*$`).exec(lines[0]);
  if (!m) throw new Error(`Dockerfile: expected ENV ${name}=<value> (one variable on the line), found "${lines[0]}"`);
  return (m[2] ?? m[3]) as string;
}

/**
 * Where this machine has a shared library (`libjemalloc.so.2`): Debian's multiarch directories, then the usual
 * ones. Throws, saying what to install, when it has none: a benchmark of the image's server without its malloc
 * would report another process's memory.
 */
export function localLibrary(
  file: string,
  dirs = [
    `/usr/lib/${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-linux-gnu`,
    '/usr/local/lib',
    '/usr/lib',
    '/lib',
  ],
): string {
  for (const d of dirs) {
    const p = path.join(d, file);
    if (existsSync(p)) return p;
  }
  const hint = file.startsWith('libjemalloc') ? '; on Debian: apt-get install libjemalloc2' : '';
  throw new Error(`the image preloads ${file}, which this machine does not have (looked in ${dirs.join(', ')})${hint}`);
}

/**
 * The standalone server the image runs (`.next/standalone/server.js`), built when there is none. The build's
 * output goes to stderr: stdout carries the benchmark's JSON report.
 */
export function standaloneServer(): string {
  const serverJs = path.join(ROOT, '.next', 'standalone', 'server.js');
  if (!existsSync(serverJs)) {
    const b = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs')], {
      cwd: ROOT,
      stdio: ['ignore', 2, 2],
    });
    if (b.status !== 0) throw new Error('the build failed');
  }
  return serverJs;
}
