// `npm run check` and the lint suite of `npm test` hold the tree to the same static checks: ESLint, Prettier's
// format check and knip's dead-code check. The lint suite counts each as one check and names the ones that failed.

import type * as ChildProcess from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { suites } from './test.mjs';

const spawnSync = vi.hoisted(() => vi.fn<(cmd: string, args: string[]) => { status: number }>());
vi.mock('node:child_process', async (importOriginal) => ({
  ...(await importOriginal<typeof ChildProcess>()),
  spawnSync,
}));

const PACKAGE = path.join(import.meta.dirname, '..', 'package.json');
const scripts = (JSON.parse(readFileSync(PACKAGE, 'utf8')) as { scripts: Record<string, string> }).scripts;

/** Runs the lint suite with every command stubbed (those named in `failing` exit 1): its result, and the commands
 * it ran as package.json spells them (the binary's name rather than its path in node_modules/.bin). */
function lintSuite(failing: string[] = []) {
  spawnSync.mockReset();
  spawnSync.mockImplementation((cmd) => ({ status: failing.includes(path.basename(cmd)) ? 1 : 0 }));
  vi.spyOn(console, 'log').mockImplementation(() => {});
  const result = suites.lint();
  const commands = spawnSync.mock.calls.map(([cmd, args]) => [path.basename(cmd), ...args].join(' '));
  return { result, commands };
}

describe('npm run check', () => {
  it('runs the static checks, fastest first, then the type check and the unit tests', () => {
    expect(scripts.check?.split(' && ')).toEqual([
      'npm run deadcode',
      'npm run format:check',
      'npm run lint',
      'npm run typecheck',
      'npm run test:unit',
    ]);
  });
});

describe('the lint suite of npm test', () => {
  it('runs ESLint, the format check and the dead-code check, each as npm run check runs it', () => {
    const { result, commands } = lintSuite();
    expect(commands).toEqual([scripts.lint, scripts['format:check'], scripts.deadcode]);
    expect(commands).toEqual(['eslint --max-warnings=0 .', 'prettier --check .', 'knip --no-progress']);
    expect(result).toEqual({ passed: 3, failed: 0, skipped: 0 });
  });

  it('runs every check when one fails, counts each on its own and names those that failed', () => {
    const format = lintSuite(['prettier']);
    expect(format.commands).toHaveLength(3);
    expect(format.result).toEqual({ passed: 2, failed: 1, skipped: 0, note: 'format failed' });
    expect(lintSuite(['eslint', 'knip']).result).toEqual({
      passed: 1,
      failed: 2,
      skipped: 0,
      note: 'eslint, deadcode failed',
    });
  });
});
