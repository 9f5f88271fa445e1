import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManifestError, readManifestDir } from './manifests';
import { kubectl } from './testing';

const root = path.resolve(import.meta.dirname, '..', '..');
const SEED = path.join(root, 'sim', 'manifests', 'seed-scale-up-frozen');

function tempDir(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'poolscope-manifests-'));
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    writeFileSync(path.join(dir, f), text);
  }
  return dir;
}

describe('manifest directories', () => {
  it('reads the shipped seed world', () => {
    const clusters = readManifestDir(SEED);
    expect(clusters.map((c) => [c.role, c.name, c.objects?.length])).toEqual([
      ['management', 'mgmt-weu', 13],
      ['workload', 'prod-weu', 5],
    ]);
  });

  it.each([
    ['bad YAML', { 'management/m/a.yaml': 'kind: Node\nmetadata: [unclosed\n' }, /a\.yaml:\d+: invalid YAML/],
    [
      'an unknown kind',
      { 'management/m/a.yaml': 'apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: x\n' },
      /a\.yaml:1: unknown kind apps\/v1 StatefulSet/,
    ],
    [
      'a second document without a name',
      {
        'management/m/a.yaml':
          'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: Namespace\nmetadata: {}\n',
      },
      /a\.yaml:6: Namespace without metadata\.name/,
    ],
    [
      'no management cluster',
      { 'workload/w/a.yaml': 'apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n' },
      /no management cluster/,
    ],
  ])('reports %s with file and line', (_name, files, message) => {
    const dir = tempDir(files);
    expect(() => readManifestDir(dir)).toThrow(ManifestError);
    expect(() => readManifestDir(dir)).toThrow(message);
  });
});

describe('npm run sim', () => {
  it('starts the clusters, prints the kubeconfig, serves kubectl, and stops cleanly on Ctrl-C', async () => {
    const child = spawn(path.join(root, 'node_modules', '.bin', 'tsx'), [path.join(root, 'sim', 'cli.ts'), SEED], {
      cwd: root,
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    for (let i = 0; i < 200 && !/^kubeconfig: /m.test(out); i++) await new Promise((r) => setTimeout(r, 50));
    const kc = /^kubeconfig: (.+)$/m.exec(out)?.[1];
    expect(kc, out).toBeTruthy();
    expect(out).toMatch(/management mgmt-weu\s+https:\/\/127\.0\.0\.1:\d+/);
    const r = await kubectl(kc as string, ['get', 'amp', 'pool0', '-o', 'jsonpath={.status.ready}']);
    expect(r.stdout).toBe('false');
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  }, 30_000);
});
