// Commit subjects are at most 72 characters, with the detail in the body (docs/development.md, "Habits the checks
// keep"). Checked for the commits after the one that set the rule; older subjects stay as history wrote them.

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
/** The last commit before the rule was checked. */
const SINCE = '44fb04935451d18730fdd1845bb5d6852bb12884';

const git = (...args: string[]) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
const known = git('cat-file', '-e', `${SINCE}^{commit}`).status === 0;

describe('commit subjects', () => {
  it.skipIf(!known)(
    'are at most 72 characters since the rule was set (skipped without that commit: a shallow clone or no git)',
    () => {
      const subjects = git('log', '--format=%s', `${SINCE}..HEAD`).stdout.split('\n').filter(Boolean);
      expect(subjects.filter((s) => s.length > 72)).toEqual([]);
    },
  );
});
