// `npm run sim -- --scenario …`: what it prints at start, for a scenario whose management clusters run different CAPZ.

import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { capzSummary } from './world/scenario';

const root = path.resolve(import.meta.dirname, '..');

describe('npm run sim -- --scenario', () => {
  it('names the CAPZ each management cluster runs in its banner', async () => {
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'poolscope-cli-'));
    const child = spawn(
      path.join(root, 'node_modules', '.bin', 'tsx'),
      [
        path.join(root, 'sim', 'cli.ts'),
        '--scenario',
        path.join(root, 'sim', 'scenarios', 'demo.yaml'),
        '--state-dir',
        stateDir,
      ],
      { cwd: root },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      for (let i = 0; i < 400 && !out.includes('Ctrl-C to stop.'); i++) await new Promise((r) => setTimeout(r, 50));
      expect(out.split('\n')[0], out).toBe(
        'poolscope simulator running scenario "demo" (controllers on, CAPZ pre-1.20 on mgmt-weu, main on mgmt-neu, speed 1×)',
      );
      expect(out).not.toContain('[object Object]');
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  }, 40_000);
});

describe('capzSummary', () => {
  const management = new Map([
    ['mgmt-weu', []],
    ['mgmt-neu', []],
  ]);
  it('is the one behaviour when every management cluster runs it, and per cluster otherwise (main where the map is silent)', () => {
    expect(capzSummary({ capz: 'pre-1.20', management })).toBe('pre-1.20');
    expect(capzSummary({ capz: { 'mgmt-weu': '1.26', 'mgmt-neu': '1.26' }, management })).toBe('1.26');
    expect(capzSummary({ capz: { 'mgmt-weu': '1.26' }, management })).toBe('1.26 on mgmt-weu, main on mgmt-neu');
  });
});
