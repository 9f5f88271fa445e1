// How `npm test` gets promtool: the machine's own when it has one, else the binary alone from Debian's prometheus
// package — which stays uninstalled, so no Prometheus service is set up for the tests.

import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findPromtool } from './promtool.mjs';

const SCRIPT = path.join(import.meta.dirname, 'promtool.mjs');
const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const tmp = (name: string) => mkdtempSync(path.join(os.tmpdir(), `poolscope-${name}-`));

/** Runs scripts/promtool.mjs as `npm test` would, with this PATH and no POOLSCOPE_PROMTOOL. */
function promtoolScript(cacheDir: string, PATH: string) {
  const env = { ...process.env, PATH, POOLSCOPE_PROMTOOL: '' };
  const r = spawnSync(process.execPath, [SCRIPT, '--cache-dir', cacheDir], { env, encoding: 'utf8', timeout: 180_000 });
  return { status: r.status, path: r.stdout.trim().split('\n').at(-1), stderr: r.stderr };
}

const packageStatus = () => spawnSync('dpkg-query', ['-W', '-f=${Status}', 'prometheus'], { encoding: 'utf8' }).stdout;

describe('promtool for the tests', () => {
  it('is the one already on PATH when the machine has one, and nothing is fetched', () => {
    const bin = tmp('bin');
    writeFileSync(path.join(bin, 'promtool'), '#!/bin/sh\necho "promtool, version 0"\n');
    chmodSync(path.join(bin, 'promtool'), 0o755);
    const cache = path.join(tmp('cache'), 'promtool');
    const r = promtoolScript(cache, `${bin}:${SYSTEM_PATH}`);
    expect(r).toMatchObject({ status: 0, path: path.join(bin, 'promtool') });
    expect(existsSync(cache)).toBe(false);
  });

  it('is POOLSCOPE_PROMTOOL when that is set, before anything on PATH', () => {
    const bin = tmp('bin');
    for (const f of ['promtool', 'mine']) writeFileSync(path.join(bin, f), '');
    expect(findPromtool('/nonexistent', { PATH: bin, POOLSCOPE_PROMTOOL: path.join(bin, 'mine') })).toBe(
      path.join(bin, 'mine'),
    );
  });

  const canFetch =
    existsSync('/usr/bin/apt-get') &&
    existsSync('/usr/bin/dpkg-deb') &&
    !findPromtool('/nonexistent', { PATH: SYSTEM_PATH });
  it.skipIf(!canFetch)(
    "is otherwise taken alone from Debian's prometheus package, which stays uninstalled",
    () => {
      const before = packageStatus();
      const cache = path.join(tmp('cache'), 'promtool');
      const r = promtoolScript(cache, SYSTEM_PATH);
      expect(r, r.stderr).toMatchObject({ status: 0, path: path.join(cache, 'promtool') });
      expect(spawnSync(r.path!, ['--version'], { encoding: 'utf8' }).stdout).toMatch(/^promtool, version 2\./);
      // Only the binary is kept (no download or scratch left), and dpkg knows no more of the package than before.
      expect(readdirSync(cache)).toEqual(['promtool']);
      expect(packageStatus()).toBe(before);
      expect(existsSync('/usr/bin/prometheus')).toBe(false);
    },
    200_000,
  );
});
