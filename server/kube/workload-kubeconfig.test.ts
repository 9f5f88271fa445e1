// A workload cluster's kubeconfig from its Secret: only a server and inline credentials are taken, the server must
// be the Cluster's control plane endpoint, and anything that would make client-node run a program, read a file
// or go through a proxy is refused with a message saying what.

import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  controlPlaneEndpointOf,
  parseWorkloadKubeconfig,
  UnsafeKubeconfigError,
  workloadKubeConfig,
} from './workload-kubeconfig';

const ENDPOINT = { host: 'prod-weu-apiserver.westeurope.cloudapp.azure.com', port: 6443 };
const SERVER = `https://${ENDPOINT.host}:6443`;

/** A kubeconfig as CAPI writes it into `<cluster>-kubeconfig`, with changes. */
function makeKubeconfig(
  o: { cluster?: Record<string, unknown>; user?: Record<string, unknown>; top?: Record<string, unknown> } = {},
): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    preferences: {},
    clusters: [{ name: 'prod-weu', cluster: { server: SERVER, 'certificate-authority-data': 'Q0E=', ...o.cluster } }],
    users: [
      { name: 'prod-weu-admin', user: { 'client-certificate-data': 'Q0VSVA==', 'client-key-data': 'S0VZ', ...o.user } },
    ],
    contexts: [{ name: 'prod-weu-admin@prod-weu', context: { cluster: 'prod-weu', user: 'prod-weu-admin' } }],
    'current-context': 'prod-weu-admin@prod-weu',
    ...o.top,
  });
}

const refusal = (text: string, endpoint: typeof ENDPOINT | null = ENDPOINT): string => {
  try {
    parseWorkloadKubeconfig(text, endpoint);
  } catch (e) {
    expect(e).toBeInstanceOf(UnsafeKubeconfigError);
    return (e as Error).message;
  }
  throw new Error('accepted');
};

describe('parseWorkloadKubeconfig', () => {
  it('takes what CAPI writes: the server, its CA, a client certificate and key', () => {
    expect(parseWorkloadKubeconfig(makeKubeconfig(), ENDPOINT)).toEqual({
      server: SERVER,
      caData: 'Q0E=',
      certData: 'Q0VSVA==',
      keyData: 'S0VZ',
    });
  });

  it('takes a bearer token instead of a certificate', () => {
    const text = makeKubeconfig({
      user: { 'client-certificate-data': undefined, 'client-key-data': undefined, token: 'abc' },
    });
    expect(parseWorkloadKubeconfig(text, ENDPOINT)).toEqual({ server: SERVER, caData: 'Q0E=', token: 'abc' });
  });

  it.each([
    [
      'exec',
      { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'id' } },
      'user "prod-weu-admin" has "exec"',
    ],
    ['auth-provider', { 'auth-provider': { name: 'oidc', config: {} } }, 'has "auth-provider"'],
    ['token-file', { 'token-file': '/var/run/secrets/kubernetes.io/serviceaccount/token' }, 'has "token-file"'],
    ['client-certificate', { 'client-certificate': '/etc/passwd' }, 'has "client-certificate"'],
    ['client-key', { 'client-key': '/etc/shadow' }, 'has "client-key"'],
    ['username/password', { username: 'a', password: 'b' }, 'has "username"'],
    ['impersonation', { as: 'system:admin' }, 'has "as"'],
  ])('refuses a user with %s', (_name, user, message) => {
    expect(refusal(makeKubeconfig({ user }))).toContain(message);
  });

  it.each([
    ['proxy-url', { 'proxy-url': 'http://attacker.example:3128' }, 'has "proxy-url"'],
    ['a CA file', { 'certificate-authority': '/etc/passwd' }, 'has "certificate-authority"'],
    ['TLS verification off', { 'insecure-skip-tls-verify': true }, 'has "insecure-skip-tls-verify"'],
    ['another TLS name', { 'tls-server-name': 'x' }, 'has "tls-server-name"'],
  ])('refuses a cluster with %s', (_name, cluster, message) => {
    expect(refusal(makeKubeconfig({ cluster }))).toContain(message);
  });

  it("refuses a server that is not the Cluster's control plane endpoint, or not plain https", () => {
    expect(refusal(makeKubeconfig({ cluster: { server: 'https://attacker.example:6443' } }))).toBe(
      `server attacker.example:6443 is not the Cluster's control plane endpoint (${ENDPOINT.host}:6443)`,
    );
    expect(refusal(makeKubeconfig({ cluster: { server: `https://${ENDPOINT.host}:443` } }))).toMatch(
      /is not the Cluster's control plane endpoint/,
    );
    expect(refusal(makeKubeconfig({ cluster: { server: `http://${ENDPOINT.host}:6443` } }))).toBe(
      `server http://${ENDPOINT.host}:6443 is not https`,
    );
    expect(refusal(makeKubeconfig({ cluster: { server: `https://u:p@${ENDPOINT.host}:6443` } }))).toMatch(
      /without credentials, path or query/,
    );
    expect(refusal(makeKubeconfig({ cluster: { server: `${SERVER}/proxy` } }))).toMatch(
      /without credentials, path or query/,
    );
    expect(refusal(makeKubeconfig(), null)).toMatch(/no spec.controlPlaneEndpoint.host yet/);
  });

  it('matches the endpoint case-insensitively, an IPv6 address with or without brackets', () => {
    expect(
      parseWorkloadKubeconfig(
        makeKubeconfig({ cluster: { server: `https://${ENDPOINT.host.toUpperCase()}:6443` } }),
        ENDPOINT,
      ).server,
    ).toBe(SERVER);
    const text = makeKubeconfig({ cluster: { server: 'https://[fd00::1]:6443' } });
    expect(parseWorkloadKubeconfig(text, { host: 'fd00::1', port: 6443 }).server).toBe('https://[fd00::1]:6443');
  });

  it('refuses a kubeconfig without usable credentials, CA or context, and one that is not YAML', () => {
    expect(refusal(makeKubeconfig({ user: { 'client-key-data': undefined } }))).toMatch(/neither a token nor/);
    expect(refusal(makeKubeconfig({ user: { token: 't', 'client-key-data': undefined } }))).toMatch(/only one of/);
    expect(refusal(makeKubeconfig({ cluster: { 'certificate-authority-data': undefined } }))).toMatch(
      /no certificate-authority-data/,
    );
    expect(refusal(makeKubeconfig({ top: { 'current-context': 'elsewhere' } }))).toBe('no context named "elsewhere"');
    expect(refusal(makeKubeconfig({ top: { 'unknown-top': 1 } }))).toMatch(/has "unknown-top"/);
    expect(refusal('a: [')).toMatch(/^it is not valid YAML/);
    expect(refusal('- just\n- a list')).toBe('it is not a YAML mapping');
    // Aliases can multiply a small text into a huge value: none is accepted.
    expect(refusal('a: &x [1, 2]\nb: [*x, *x]')).toMatch(/^it is not valid YAML/);
    expect(refusal(`x: "${'a'.repeat(300 * 1024)}"`)).toBe('it is over 256 KiB');
  });
});

describe('workloadKubeConfig', () => {
  it('builds a KubeConfig holding only the server and the inline credentials', () => {
    const kc = workloadKubeConfig(parseWorkloadKubeconfig(makeKubeconfig({ user: { token: 'abc' } }), ENDPOINT));
    expect(kc.getCurrentCluster()).toEqual({ name: 'workload', server: SERVER, caData: 'Q0E=', skipTLSVerify: false });
    expect(kc.getCurrentUser()).toEqual({ name: 'workload', token: 'abc', certData: 'Q0VSVA==', keyData: 'S0VZ' });
  });
});

describe('controlPlaneEndpointOf', () => {
  it('reads Cluster.spec.controlPlaneEndpoint, null when it names no host', () => {
    expect(controlPlaneEndpointOf({ spec: { controlPlaneEndpoint: { host: 'h', port: 6443 } } })).toEqual({
      host: 'h',
      port: 6443,
    });
    expect(controlPlaneEndpointOf({ spec: { controlPlaneEndpoint: { host: '', port: 0 } } })).toBeNull();
    expect(controlPlaneEndpointOf({ spec: {} })).toBeNull();
    expect(controlPlaneEndpointOf(null)).toBeNull();
  });
});
