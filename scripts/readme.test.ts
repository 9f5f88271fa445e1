// The README's "What it diagnoses" says what lib/ does: a row for every drift kind with its badge, and every
// finding code.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DRIFT_KINDS, DRIFT_KIND_LABELS } from '@/lib/api-types';
import { FINDING_ORDER } from '@/lib/diagnosis';

const readme = readFileSync(path.join(import.meta.dirname, '..', 'README.md'), 'utf8');

describe('README', () => {
  it('has a row for every drift kind, with the badge the dashboard shows, and no other', () => {
    const section = readme.slice(readme.indexOf('**Drift kinds**'), readme.indexOf('**Findings**'));
    const rows = [...section.matchAll(/^\| `([a-z-]+)` \| ([^|]+) \| [^|]+\|$/gm)];
    expect(rows.map((m) => m[1]).sort()).toEqual([...DRIFT_KINDS].sort());
    for (const m of rows) expect(m[2]?.trim(), m[1]).toBe(DRIFT_KIND_LABELS[m[1] as keyof typeof DRIFT_KIND_LABELS]);
  });

  it('names every finding code, and no other', () => {
    const section = readme.slice(readme.indexOf('**Findings**'), readme.indexOf('**Resync verdict.**'));
    const named = [...section.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]);
    expect([...named].sort()).toEqual([...FINDING_ORDER].sort());
  });
});
