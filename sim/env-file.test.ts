import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEnvFile, writeEnvFile } from './env-file.mjs';

describe("the simulator's env file", () => {
  it('reads back what was written, values with "=" whole, the comment skipped, owner-only', () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'poolscope-env-')), 'env');
    const env = {
      KUBECONFIG: '/tmp/x/kubeconfig',
      AZURE_CLIENT_SECRET: 'a=b==c',
      POOLSCOPE_CONTEXTS: 'mgmt-weu,mgmt-neu',
      EMPTY: '',
    };
    writeEnvFile(file, 'demo', env);
    expect(readFileSync(file, 'utf8').split('\n')[0]).toBe('# poolscope simulator: demo');
    expect(readEnvFile(file)).toEqual(env);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});
