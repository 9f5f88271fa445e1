#!/usr/bin/env node
// promtool, which checks and unit-tests the alert rules: the one this machine has, or else the binary alone taken
// out of Debian's `prometheus` package (`apt-get download` + `dpkg-deb`) into a cache directory. The package is
// never installed, so no Prometheus server, user or service is set up or started for the tests.
// Usage: node scripts/promtool.mjs [--cache-dir DIR]   prints promtool's path; exit 1 (saying what to do) without one.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const PROMTOOL_CACHE = path.join(ROOT, 'node_modules', '.cache', 'promtool');

/** The promtool to use without fetching: POOLSCOPE_PROMTOOL, then PATH, then the usual places, then the cache. */
export function findPromtool(cacheDir = PROMTOOL_CACHE, env = process.env) {
  const onPath = (env.PATH ?? '')
    .split(path.delimiter)
    .filter(Boolean)
    .map((d) => path.join(d, 'promtool'));
  const candidates = [
    env.POOLSCOPE_PROMTOOL,
    ...onPath,
    '/usr/bin/promtool',
    '/usr/local/bin/promtool',
    path.join(cacheDir, 'promtool'),
  ];
  return candidates.find((p) => p && existsSync(p)) ?? null;
}

/** Runs a command quietly; its output is shown only when it fails. */
function quiet(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...opts });
  if (r.status !== 0)
    process.stderr.write(
      `promtool: \`${[cmd, ...args].join(' ')}\` failed: ${r.error?.message ?? ''}${r.stdout ?? ''}${r.stderr ?? ''}\n`,
    );
  return r.status === 0;
}

/** Downloads Debian's prometheus package into a scratch directory and keeps only usr/bin/promtool from it. */
function fetchPromtool(cacheDir) {
  if (!existsSync('/usr/bin/apt-get') || !existsSync('/usr/bin/dpkg-deb')) return null;
  const isRoot = process.getuid?.() === 0;
  mkdirSync(cacheDir, { recursive: true });
  const scratch = mkdtempSync(path.join(cacheDir, 'fetch-'));
  try {
    // As root apt would hand the download to its `_apt` user, which may not write here; it is only a download.
    const download = () =>
      quiet('apt-get', ['download', ...(isRoot ? ['-o', 'APT::Sandbox::User=root'] : []), 'prometheus'], {
        cwd: scratch,
      });
    console.error('promtool is missing: taking it alone from Debian package prometheus (not installing the package) …');
    if (!download() && !(isRoot && quiet('apt-get', ['update', '-qq']) && download())) return null;
    const deb = path.join(scratch, readdirSync(scratch).find((f) => f.endsWith('.deb')) ?? 'none.deb');
    const tree = path.join(scratch, 'tree');
    mkdirSync(tree);
    if (!quiet('sh', ['-c', 'dpkg-deb --fsys-tarfile "$1" | tar -x -C "$2" ./usr/bin/promtool', 'sh', deb, tree]))
      return null;
    const binary = path.join(cacheDir, 'promtool');
    renameSync(path.join(tree, 'usr', 'bin', 'promtool'), binary);
    return quiet(binary, ['--version']) ? binary : null;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** promtool's path, fetched into the cache when the machine has none; null (after saying what to do) otherwise. */
export function ensurePromtool(cacheDir = PROMTOOL_CACHE) {
  const binary = findPromtool(cacheDir) ?? fetchPromtool(cacheDir);
  if (!binary) {
    console.error(
      "\npromtool is missing and could not be taken from Debian's prometheus package. Either install it\n" +
        '(`sudo apt-get install -y prometheus`, which also sets up a Prometheus service) or point POOLSCOPE_PROMTOOL\n' +
        'at a promtool binary (https://prometheus.io/download/).\n',
    );
  }
  return binary;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--cache-dir');
  const binary = ensurePromtool(i > 0 && process.argv[i + 1] ? path.resolve(process.argv[i + 1]) : PROMTOOL_CACHE);
  if (binary) console.log(binary);
  process.exit(binary ? 0 : 1);
}
