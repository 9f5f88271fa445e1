#!/usr/bin/env node
// Node 24, the image's Node, for the tests of a machine whose own Node is older: the binary and headers from the npm
// registry's node-<platform>-<arch> package, and better-sqlite3's native addon compiled for it (node-gyp against
// those headers) in a copy of the package beside, never over, node_modules' own. Both live in
// node_modules/.cache/node24. prepareNode24().env runs anything under Node 24: its bin first on PATH, and
// scripts/node24-sqlite.mjs preloaded (NODE_OPTIONS) to load that addon in place of node_modules' one.
// Usage: node scripts/node24.mjs   prepares it and prints the Node binary's path.

import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const NODE24_CACHE = path.join(ROOT, 'node_modules', '.cache', 'node24');
/** The Node major the image runs (the Dockerfile's FROM lines; scripts/node24.test.ts holds them together). */
export const NODE24_MAJOR = 24;
const ADDON = path.join('build', 'Release', 'better_sqlite3.node');

/** Runs a command with its output shown; throws with `what` when it fails. */
function step(what, cmd, args, opts = {}) {
  console.log(`node24: ${what}: ${[cmd, ...args].join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.status !== 0) throw new Error(`${what} failed (${r.error?.message ?? `exit ${r.status}`})`);
}

const nodeVersion = (node) => spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? '';

/** The Node 24 binary and headers, from the cache or else fetched with `npm pack` from the npm registry. */
function fetchNode(cache) {
  const dir = path.join(cache, 'node');
  const node = path.join(dir, 'bin', 'node');
  if (existsSync(node) && nodeVersion(node).startsWith(`v${NODE24_MAJOR}.`)) return { dir, node };
  const pkg = `node-${process.platform}-${process.arch}@${NODE24_MAJOR}`;
  mkdirSync(cache, { recursive: true });
  const scratch = mkdtempSync(path.join(cache, 'fetch-'));
  try {
    step(`fetching ${pkg} from the npm registry`, 'npm', ['pack', pkg, '--pack-destination', scratch, '--silent'], {
      cwd: scratch,
    });
    const tgz = readdirSync(scratch).find((f) => f.endsWith('.tgz'));
    if (!tgz) throw new Error(`npm pack ${pkg} left no package`);
    step('unpacking it', 'tar', ['-xzf', tgz], { cwd: scratch });
    rmSync(dir, { recursive: true, force: true });
    renameSync(path.join(scratch, 'package'), dir);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  if (!nodeVersion(node).startsWith(`v${NODE24_MAJOR}.`))
    throw new Error(`${pkg} holds no Node ${NODE24_MAJOR} binary that runs here`);
  if (!existsSync(path.join(dir, 'include', 'node', 'node_version.h')))
    throw new Error(`${pkg} holds no headers (include/node)`);
  return { dir, node };
}

/** node-gyp as npm ships it (npm runs it for native packages too): found from npm's own location. */
function nodeGyp() {
  const npmDirs = [
    process.env.npm_execpath && path.join(path.dirname(process.env.npm_execpath), '..'),
    path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm'),
  ];
  const candidates = [
    process.env.npm_config_node_gyp,
    ...npmDirs.filter(Boolean).map((d) => path.join(d, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')),
  ];
  const found = candidates.find((p) => p && existsSync(p));
  if (!found) throw new Error('node-gyp (shipped with npm) was not found: run this through `npm test`');
  return found;
}

/** The copy of better-sqlite3 compiled for this Node, rebuilt when either version changed; returns its addon. */
function buildSqlite(cache, node) {
  const source = path.join(ROOT, 'node_modules', 'better-sqlite3');
  const copy = path.join(cache, 'better-sqlite3');
  const stamp = `better-sqlite3 ${JSON.parse(readFileSync(path.join(source, 'package.json'), 'utf8')).version} for Node ${nodeVersion(node.node)}`;
  const stampFile = path.join(copy, 'built-for');
  const addon = path.join(copy, ADDON);
  if (
    existsSync(addon) &&
    existsSync(stampFile) &&
    readFileSync(stampFile, 'utf8') === stamp &&
    loads(node.node, addon)
  )
    return addon;
  rmSync(copy, { recursive: true, force: true });
  cpSync(source, copy, { recursive: true, filter: (f) => f !== path.join(source, 'build') });
  // Node 24 first on PATH: the build runs `node` for one of its steps. npm's settings stay out (under `npm test`
  // npm passes them as npm_config_*, and node-gyp prefers a `nodedir` among them to --nodedir).
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_config_/i.test(k)));
  env.PATH = `${path.dirname(node.node)}${path.delimiter}${process.env.PATH ?? ''}`;
  step(`compiling ${stamp}`, node.node, [nodeGyp(), 'rebuild', '--release', `--nodedir=${node.dir}`, '--jobs=max'], {
    cwd: copy,
    env,
  });
  if (!loads(node.node, addon, true))
    throw new Error(`the better-sqlite3 addon compiled in ${copy} does not load in Node ${nodeVersion(node.node)}`);
  writeFileSync(stampFile, stamp);
  return addon;
}

/** Whether `node` loads the native addon (compiled for another Node, it refuses it); the reason shown if asked. */
function loads(node, addon, show = false) {
  const r = spawnSync(node, ['-e', 'require(process.argv[1])', addon], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH },
  });
  if (r.status !== 0 && show) console.error(r.stderr);
  return r.status === 0;
}

/**
 * Node 24 ready to run the project: { node, version, env } (env: `base` with what runs Node 24). Throws an Error
 * saying what is missing when the npm registry's package or the compiler cannot be had.
 */
export function prepareNode24(base = process.env, cache = NODE24_CACHE) {
  // Already Node 24: node_modules' better-sqlite3 was compiled for it.
  if (process.versions.node.startsWith(`${NODE24_MAJOR}.`))
    return { node: process.execPath, version: process.version, env: base };
  const node = fetchNode(cache);
  const addon = buildSqlite(cache, node);
  const hook = pathToFileURL(path.join(ROOT, 'scripts', 'node24-sqlite.mjs')).href;
  const env = {
    ...base,
    PATH: `${path.dirname(node.node)}${path.delimiter}${base.PATH ?? ''}`,
    NODE_OPTIONS: `${base.NODE_OPTIONS ?? ''} --import ${JSON.stringify(hook)}`.trim(),
    POOLSCOPE_TEST_SQLITE_ADDON: addon,
  };
  return { node: node.node, version: nodeVersion(node.node), env };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    console.log(prepareNode24().node);
  } catch (e) {
    console.error(`node24: ${e.message}`);
    process.exit(1);
  }
}
