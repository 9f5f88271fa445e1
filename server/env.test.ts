import { writeFileSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { resolveContexts, startRuntime } from './runtime';
import { ConfigError, parseEnv } from './env';

describe('configuration', () => {
  it('has working defaults', () => {
    expect(parseEnv({})).toMatchObject({
      POOLSCOPE_CONTEXTS: { mode: 'current' },
      POOLSCOPE_DB_PATH: './data/poolscope.db',
      POOLSCOPE_ARM_ENDPOINT: 'https://management.azure.com',
      POOLSCOPE_AZURE_BUDGET_SHARE: 0.1,
      POOLSCOPE_FAST_INTERVAL_SECONDS: 15,
      POOLSCOPE_SLOW_INTERVAL_SECONDS: 120,
      POOLSCOPE_RETENTION_DAYS: 30,
      POOLSCOPE_COLLECTOR: true,
      POOLSCOPE_LEADER_ELECTION: false,
      POOLSCOPE_AZURE_DISABLE_INSTANCE_DISCOVERY: false,
    });
    expect(parseEnv({ POOLSCOPE_CONTEXTS: 'a, b' }).POOLSCOPE_CONTEXTS).toEqual({ mode: 'list', names: ['a', 'b'] });
    expect(parseEnv({ POOLSCOPE_CONTEXTS: '*' }).POOLSCOPE_CONTEXTS).toEqual({ mode: 'all' });
  });

  it.each([
    ['DATABASE_URL', 'mysql://x', 'must be a PostgreSQL URL'],
    ['POOLSCOPE_AZURE_BUDGET_SHARE', '2', 'POOLSCOPE_AZURE_BUDGET_SHARE="2"'],
    ['POOLSCOPE_FAST_INTERVAL_SECONDS', 'soon', 'POOLSCOPE_FAST_INTERVAL_SECONDS="soon"'],
    ['POOLSCOPE_ARM_ENDPOINT', 'not a url', 'POOLSCOPE_ARM_ENDPOINT="not a url"'],
    ['POOLSCOPE_LEADER_ELECTION', 'maybe', 'POOLSCOPE_LEADER_ELECTION="maybe"'],
  ])('names the variable and what it expects: %s=%s', (name, value, text) => {
    const call = () => parseEnv({ [name]: value });
    expect(call).toThrow(ConfigError);
    expect(call).toThrow(text);
  });

  it.each([',', ' , ,', ',,,'])(
    'refuses POOLSCOPE_CONTEXTS=%j, a list naming no context (it would watch nothing)',
    (value) => {
      expect(() => parseEnv({ POOLSCOPE_CONTEXTS: value })).toThrow(
        `POOLSCOPE_CONTEXTS=${JSON.stringify(value)}: names no context: give kubeconfig context names separated by commas, * for all, or leave it unset for the current context`,
      );
    },
  );

  it('never shows a secret or a password in a configuration error (logged, and answered to API readers as a 503)', () => {
    const message = (source: Record<string, string>) => {
      try {
        parseEnv(source);
      } catch (e) {
        return (e as Error).message;
      }
      throw new Error('parseEnv accepted the configuration');
    };
    const url = message({ DATABASE_URL: 'postgres://poolscope:hunter2 x@db:5432/poolscope' });
    expect(url).toContain('DATABASE_URL="postgres://poolscope:***@db:5432/poolscope": must be a PostgreSQL URL');
    expect(url).not.toContain('hunter2');
    const tricky = message({ DATABASE_URL: 'mysql://u:p@ss/w0rd@db/x?sslmode=require&password=again' });
    expect(tricky).toContain('DATABASE_URL="mysql://u:***@db/x?sslmode=require&password=***"');
    expect(tricky).not.toMatch(/p@ss|w0rd|again/);
    expect(message({ DATABASE_URL: 'host=db user=u password=hunter2' })).toContain(
      'DATABASE_URL="host=db user=u password=***"',
    );
    const secret = message({
      POOLSCOPE_TRUSTED_PROXY: 'oauth2-proxy',
      POOLSCOPE_TRUSTED_PROXY_SECRET: 'too-short-but-real',
    });
    expect(secret).toContain(
      'POOLSCOPE_TRUSTED_PROXY_SECRET=(18 characters, not shown): must be at least 32 characters',
    );
    expect(secret).not.toContain('too-short-but-real');
  });

  it('reads a size limit for the SQLite store as a Kubernetes quantity, and refuses it with PostgreSQL', () => {
    expect(parseEnv({}).POOLSCOPE_RETENTION_MAX_SIZE).toBeUndefined();
    expect(parseEnv({ POOLSCOPE_RETENTION_MAX_SIZE: '4Gi' }).POOLSCOPE_RETENTION_MAX_SIZE).toBe(4 * 2 ** 30);
    expect(parseEnv({ POOLSCOPE_RETENTION_MAX_SIZE: '1.5G' }).POOLSCOPE_RETENTION_MAX_SIZE).toBe(1.5e9);
    expect(parseEnv({ POOLSCOPE_RETENTION_MAX_SIZE: '2097152' }).POOLSCOPE_RETENTION_MAX_SIZE).toBe(2 ** 21);
    expect(() => parseEnv({ POOLSCOPE_RETENTION_MAX_SIZE: '4 GB' })).toThrow(
      /POOLSCOPE_RETENTION_MAX_SIZE="4 GB": must be a size such as 4Gi/,
    );
    expect(() => parseEnv({ POOLSCOPE_RETENTION_MAX_SIZE: '100Ki' })).toThrow(/must be at least 1Mi/);
    expect(() => parseEnv({ POOLSCOPE_RETENTION_MAX_SIZE: '4Gi', DATABASE_URL: 'postgres://u@h/db' })).toThrow(
      /POOLSCOPE_RETENTION_MAX_SIZE="4Gi": applies to the SQLite store only/,
    );
  });

  it('trusts proxy headers only with both the proxy name and a long enough secret', () => {
    const secret = 'x'.repeat(32);
    expect(parseEnv({ POOLSCOPE_TRUSTED_PROXY: 'oauth2-proxy', POOLSCOPE_TRUSTED_PROXY_SECRET: secret })).toMatchObject(
      { POOLSCOPE_TRUSTED_PROXY: 'oauth2-proxy', POOLSCOPE_TRUSTED_PROXY_SECRET: secret },
    );
    expect(() => parseEnv({ POOLSCOPE_TRUSTED_PROXY: 'oauth2-proxy' })).toThrow(
      /POOLSCOPE_TRUSTED_PROXY_SECRET="": is required when POOLSCOPE_TRUSTED_PROXY is set/,
    );
    expect(() => parseEnv({ POOLSCOPE_TRUSTED_PROXY_SECRET: secret })).toThrow(
      /POOLSCOPE_TRUSTED_PROXY="": must name the auth proxy/,
    );
    expect(() => parseEnv({ POOLSCOPE_TRUSTED_PROXY: 'p', POOLSCOPE_TRUSTED_PROXY_SECRET: 'short' })).toThrow(
      /at least 32 characters/,
    );
    expect(parseEnv({ POOLSCOPE_READ_ONLY: 'true' }).POOLSCOPE_READ_ONLY).toBe(true);
  });

  it('rejects an unknown context, naming the ones there are', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'poolscope-kc-'));
    const file = path.join(dir, 'kubeconfig');
    writeFileSync(
      file,
      'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: mgmt, context: {cluster: c, user: u}}]\ncurrent-context: mgmt\n',
    );
    const saved = process.env.KUBECONFIG;
    process.env.KUBECONFIG = file;
    try {
      expect(() => resolveContexts(parseEnv({ POOLSCOPE_CONTEXTS: 'mgmt,prod' }), new KubeConfig())).toThrow(
        'POOLSCOPE_CONTEXTS names context the kubeconfig does not have: prod. Available: mgmt.',
      );
      expect(resolveContexts(parseEnv({}), new KubeConfig()).contexts).toEqual(['mgmt']);
      writeFileSync(file, 'this: [is not a kubeconfig');
      expect(() => resolveContexts(parseEnv({ KUBECONFIG: file }), new KubeConfig())).toThrow(
        /^poolscope cannot read the kubeconfig at KUBECONFIG=/,
      );
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    }
  });

  it('explains a store it cannot open', async () => {
    const e = parseEnv({ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', POOLSCOPE_COLLECTOR: 'false' });
    await expect(startRuntime(e)).rejects.toThrow(
      /^poolscope cannot read its store, the PostgreSQL database of DATABASE_URL \(connect ECONNREFUSED 127\.0\.0\.1:1\)\. Check that the database is up and reachable\.$/,
    );
  });
});
