// The architecture rules ESLint enforces (lib/ is pure; no import cycles); this proves they bite.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');
const eslint = new ESLint({ cwd: root });
// The boundary probes lint text as a file that does not exist, which import/no-cycle cannot read: off for them.
const boundaries = new ESLint({ cwd: root, overrideConfig: { rules: { 'import/no-cycle': 'off' } } });

async function restricted(file: string, code: string): Promise<string[]> {
  const [result] = await boundaries.lintText(code, { filePath: path.join(root, file) });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('lib/ import boundary', () => {
  it.each([
    "import { NextResponse } from 'next/server';",
    "import { useState } from 'react';",
    "import { KubeConfig } from '@kubernetes/client-node';",
    "import { ComputeManagementClient } from '@azure/arm-compute';",
    "import Database from 'better-sqlite3';",
    "import { readFileSync } from 'node:fs';",
    "import { env } from '@/server/env';",
    "import { startSim } from '../sim/kube/server';",
  ])(
    'rejects %s in lib/',
    async (line) => {
      expect(await restricted('lib/probe.ts', `${line}\nexport const x = 1;\n`)).toHaveLength(1);
    },
    30_000,
  );

  it('allows lib/ to import lib/', async () => {
    expect(
      await restricted('lib/probe.ts', "import { joinKey } from './provider-id';\nexport const x = joinKey;\n"),
    ).toEqual([]);
  }, 30_000);

  it('does not restrict server/', async () => {
    expect(
      await restricted('server/probe.ts', "import { readFileSync } from 'node:fs';\nexport const x = readFileSync;\n"),
    ).toEqual([]);
  }, 30_000);
});

describe('import cycles', () => {
  it('refuses two modules that import each other, through the @/ alias too', async () => {
    const dir = mkdtempSync(path.join(root, 'server', '.cycle-probe-'));
    try {
      const rel = path.relative(root, dir);
      writeFileSync(path.join(dir, 'a.ts'), "import { b } from './b';\nexport const a = () => b;\n");
      writeFileSync(path.join(dir, 'b.ts'), `import { a } from '@/${rel}/a';\nexport const b = () => a;\n`);
      const results = await eslint.lintFiles([path.join(dir, 'a.ts'), path.join(dir, 'b.ts')]);
      const cycles = results.flatMap((r) => r.messages).filter((m) => m.ruleId === 'import/no-cycle');
      expect(cycles).toHaveLength(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
