// The architecture rule that keeps lib/ pure is enforced by ESLint; this proves the rule bites.

import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');
const eslint = new ESLint({ cwd: root });

async function restricted(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
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
