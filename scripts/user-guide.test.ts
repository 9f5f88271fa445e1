// The user guide's "Findings" and "Drift kinds" say what lib/ does: a row for every drift kind with the badge the
// dashboard shows, and a row for every finding code.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DRIFT_KINDS, DRIFT_KIND_LABELS } from '@/lib/api-types';
import { FINDING_ORDER } from '@/lib/findings/rules';

const guide = readFileSync(path.join(import.meta.dirname, '..', 'docs', 'user-guide.md'), 'utf8');
const section = (heading: string) => {
  const start = guide.indexOf(`\n## ${heading}\n`);
  const end = guide.indexOf('\n## ', start + 1);
  return guide.slice(start, end < 0 ? undefined : end);
};

describe('docs/user-guide.md', () => {
  it('has a row for every drift kind, with the badge the dashboard shows, and no other', () => {
    const rows = [...section('Drift kinds').matchAll(/^\| `([a-z-]+)` \| ([^|]+) \| [^|]+\|$/gm)];
    expect(rows.map((m) => m[1]).sort()).toEqual([...DRIFT_KINDS].sort());
    for (const m of rows) expect(m[2]?.trim(), m[1]).toBe(DRIFT_KIND_LABELS[m[1] as keyof typeof DRIFT_KIND_LABELS]);
  });

  it('has a row for every finding code, and no other', () => {
    const rows = [...section('Findings').matchAll(/^\| `([a-z-]+)` \|/gm)].map((m) => m[1]);
    expect([...rows].sort()).toEqual([...FINDING_ORDER].sort());
  });
});
