// Built-in kinds sent as Kubernetes protobuf, as kubectl sends them (`kubectl create namespace|configmap|…`), and
// the decoder's answers for kinds and fields it has no table for.

import { writeFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/unstructured';
import { decodeKubeProtobuf, ProtobufError } from './protobuf';
import type { KubeSimulator } from './simulator';
import { kubectl, startSeedSimulator } from './testing';

let sim: KubeSimulator;
let kc: string;

beforeAll(async () => {
  sim = await startSeedSimulator();
  kc = sim.kubeconfigPath;
});
afterAll(async () => {
  await sim?.stop();
});

/** A minimal protobuf encoder for test bodies: varint and length-delimited fields. */
function varint(n: bigint): Buffer {
  const out: number[] = [];
  let v = BigInt.asUintN(64, n);
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return Buffer.from(out);
}
function field(n: number, v: string | Buffer | bigint): Buffer {
  if (typeof v === 'bigint') return Buffer.concat([varint(BigInt(n * 8)), varint(v)]);
  const b = Buffer.from(v);
  return Buffer.concat([varint(BigInt(n * 8 + 2)), varint(BigInt(b.length)), b]);
}
const msg = (...fields: Buffer[]) => Buffer.concat(fields);
const envelope = (apiVersion: string, kind: string, raw: Buffer) =>
  msg(Buffer.from([0x6b, 0x38, 0x73, 0x00]), field(1, msg(field(1, apiVersion), field(2, kind))), field(2, raw));

function put(p: string, body: Buffer): Promise<{ status: number; body: Record<string, unknown> }> {
  const url = new URL(p, sim.cluster('mgmt-weu').url);
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method: 'PUT',
        ca: sim.tls.caPem,
        headers: {
          Authorization: `Bearer ${sim.tokens.get('admin')}`,
          'Content-Type': 'application/vnd.kubernetes.protobuf',
        },
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => {
          text += d.toString();
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const getJson = async (...args: string[]) => {
  const r = await kubectl(kc, ['get', ...args, '-o', 'json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as KubeObject & Record<string, unknown>;
};

// Each test runs kubectl several times (about 0.3 s each, more on a busy machine).
describe('kubectl create of built-in kinds (sent as protobuf)', { timeout: 30_000 }, () => {
  it('creates a namespace and a ConfigMap in it (text, empty and binary values), and reads them back', async () => {
    const ns = await kubectl(kc, ['create', 'namespace', 'team-a']);
    expect(ns.code, ns.stderr).toBe(0);
    expect(ns.stdout.trim()).toBe('namespace/team-a created');
    expect((await getJson('namespace', 'team-a')).metadata).toMatchObject({ name: 'team-a' });

    const bin = path.join(os.tmpdir(), `poolscope-proto-${process.pid}.bin`);
    writeFileSync(bin, Buffer.from([0xff, 0xfe, 0x00, 0x01]));
    const cm = await kubectl(kc, [
      'create',
      'configmap',
      'settings',
      '-n',
      'team-a',
      '--from-literal=mode=fast',
      '--from-literal=empty=',
      `--from-file=blob=${bin}`,
    ]);
    expect(cm.code, cm.stderr).toBe(0);
    expect(cm.stdout.trim()).toBe('configmap/settings created');
    const read = await getJson('configmap', 'settings', '-n', 'team-a');
    expect(read).toMatchObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: 'team-a' },
    });
    expect(read.data).toEqual({ mode: 'fast', empty: '' });
    expect(read.binaryData).toEqual({ blob: Buffer.from([0xff, 0xfe, 0x00, 0x01]).toString('base64') });
  });

  it('creates a service account, a role and a binding with everything kubectl put in them', async () => {
    for (const args of [
      ['serviceaccount', 'bot', '-n', 'team-a'],
      [
        'role',
        'reader',
        '-n',
        'team-a',
        '--verb=get,list',
        '--resource=configmaps,secrets',
        '--resource-name=settings',
      ],
      ['rolebinding', 'bot-reads', '-n', 'team-a', '--role=reader', '--user=alice', '--serviceaccount=team-a:bot'],
      ['secret', 'generic', 'token', '-n', 'team-a', '--from-literal=t=s3cret'],
    ]) {
      const r = await kubectl(kc, ['create', ...args]);
      expect(r.code, r.stderr).toBe(0);
    }
    expect((await getJson('serviceaccount', 'bot', '-n', 'team-a')).metadata?.name).toBe('bot');
    expect((await getJson('role', 'reader', '-n', 'team-a')).rules).toEqual([
      { apiGroups: [''], resources: ['configmaps', 'secrets'], resourceNames: ['settings'], verbs: ['get', 'list'] },
    ]);
    const rb = await getJson('rolebinding', 'bot-reads', '-n', 'team-a');
    expect(rb.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' });
    expect(rb.subjects).toEqual([
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' },
      { kind: 'ServiceAccount', name: 'bot', namespace: 'team-a' },
    ]);
    expect((await getJson('secret', 'token', '-n', 'team-a')).data).toEqual({
      t: Buffer.from('s3cret').toString('base64'),
    });
  });

  it('refuses a kind it cannot decode with 415, naming the kind, and stores nothing', async () => {
    const r = await kubectl(kc, ['create', 'deployment', 'web', '-n', 'team-a', '--image=nginx']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('the body of the request was in an unknown format');
    expect(r.stderr).toContain('not for apps/v1 Deployment: send it as application/json');
    expect((await kubectl(kc, ['get', 'deployment', 'web', '-n', 'team-a'])).stderr).toContain('NotFound');
  });

  it('replaces a ConfigMap sent as protobuf (PUT), with the resourceVersion as precondition', async () => {
    const current = await getJson('configmap', 'settings', '-n', 'team-a');
    const meta = (rv: string) =>
      field(1, msg(field(1, 'settings'), field(3, 'team-a'), field(6, rv), field(7, 0n), field(8, Buffer.alloc(0))));
    const body = (rv: string) =>
      envelope('v1', 'ConfigMap', msg(meta(rv), field(2, msg(field(1, 'mode'), field(2, 'slow')))));
    const ok = await put(
      '/api/v1/namespaces/team-a/configmaps/settings',
      body(current.metadata?.resourceVersion as string),
    );
    expect(ok.status).toBe(200);
    expect(ok.body.data).toEqual({ mode: 'slow' });
    expect((await getJson('configmap', 'settings', '-n', 'team-a')).data).toEqual({ mode: 'slow' });
    const stale = await put(
      '/api/v1/namespaces/team-a/configmaps/settings',
      body(current.metadata?.resourceVersion as string),
    );
    expect(stale.status).toBe(409);
  });

  it("takes a protobuf Scale on a MachinePool's /scale, but no protobuf for the custom resource itself", async () => {
    const pool = await getJson('mp', 'pool0', '-n', 'default');
    const scale = envelope(
      'autoscaling/v1',
      'Scale',
      msg(field(1, msg(field(1, 'pool0'), field(3, 'default'))), field(2, msg(field(1, 6n)))),
    );
    const ok = await put('/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinepools/pool0/scale', scale);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ kind: 'Scale', spec: { replicas: 6 } });
    expect((await getJson('mp', 'pool0', '-n', 'default')).spec?.replicas).toBe(6);
    const asCr = envelope(
      'cluster.x-k8s.io/v1beta2',
      'MachinePool',
      msg(field(1, msg(field(1, 'pool0'), field(6, pool.metadata?.resourceVersion as string)))),
    );
    const refused = await put('/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinepools/pool0', asCr);
    expect(refused.status).toBe(415);
    expect(refused.body.message).toBe(
      'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml',
    );
  });
});

describe('the protobuf decoder', () => {
  it('reads a Scale: negative numbers, and status.replicas kept at 0 as Go prints it', () => {
    const scale = envelope(
      'autoscaling/v1',
      'Scale',
      msg(
        field(1, msg(field(1, 'pool0'), field(6, '41'), field(8, msg(field(1, 1796428800n))))),
        field(2, msg(field(1, -1n))),
        field(3, msg(field(1, 0n), field(2, ''))),
      ),
    );
    expect(decodeKubeProtobuf(scale)).toEqual({
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 'pool0', resourceVersion: '41', creationTimestamp: '2026-12-05T00:00:00Z' },
      spec: { replicas: -1 },
      status: { replicas: 0 },
    });
  });

  it('says what it cannot read: an unknown kind or a set field without a table is unsupported; broken bytes are malformed', () => {
    const fail = (body: Buffer) => {
      try {
        decodeKubeProtobuf(body);
      } catch (e) {
        return e instanceof ProtobufError ? { unsupported: e.unsupported, message: e.message } : { error: String(e) };
      }
      return null;
    };
    expect(fail(envelope('apps/v1', 'Deployment', Buffer.alloc(0)))).toEqual({
      unsupported: true,
      message: 'not for apps/v1 Deployment',
    });
    const managed = envelope('v1', 'Namespace', field(1, msg(field(1, 'x'), field(17, msg(field(1, 'kubectl'))))));
    expect(fail(managed)).toEqual({
      unsupported: true,
      message: 'not field 17 of ObjectMeta in Namespace, which this body sets',
    });
    // An unset field the encoder writes anyway (empty) is fine.
    expect(decodeKubeProtobuf(envelope('v1', 'Namespace', field(1, msg(field(1, 'x'), field(17, '')))))).toEqual({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'x' },
    });
    expect(fail(envelope('v1', 'Namespace', field(1, msg(field(1, 'x')))).subarray(0, -1))).toEqual({
      unsupported: false,
      message: 'truncated field',
    });
    expect(fail(Buffer.from('{"kind":"Namespace"}'))).toMatchObject({ unsupported: false });
  });
});
