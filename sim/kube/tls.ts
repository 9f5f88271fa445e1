// A certificate authority generated at start, and a serving certificate for 127.0.0.1/localhost signed by it,
// so clients verify the simulator over TLS exactly as they verify a real API server.

import 'reflect-metadata';
import { randomBytes, webcrypto } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

export interface SimTls {
  /** PEM of the CA certificate (what kubeconfigs carry as certificate-authority-data). */
  caPem: string;
  /** Where the CA certificate is on disk (for NODE_EXTRA_CA_CERTS), when a CA directory is used. */
  caPath: string | null;
  certPem: string;
  keyPem: string;
}

export interface TlsOptions {
  /**
   * Directory holding the CA (`ca.pem`, `ca-key.pem`). An existing CA there is reused, so processes
   * started with NODE_EXTRA_CA_CERTS pointing at it trust every simulator started later; otherwise a new
   * one is created and written there. Without a directory the CA lives in memory only.
   */
  caDir?: string | null;
}

async function pemKey(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key as webcrypto.CryptoKey);
  const b64 = Buffer.from(der)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n');
  return `-----BEGIN PRIVATE KEY-----\n${b64}\n-----END PRIVATE KEY-----\n`;
}

async function importKey(pem: string): Promise<CryptoKeyPair> {
  const der = Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
  const privateKey = (await webcrypto.subtle.importKey('pkcs8', der, ALG, true, ['sign'])) as unknown as CryptoKey;
  return { privateKey, publicKey: privateKey };
}

interface Ca {
  cert: x509.X509Certificate;
  keys: CryptoKeyPair;
  pem: string;
  path: string | null;
}

async function loadOrCreateCa(caDir: string | null | undefined, notBefore: Date, notAfter: Date): Promise<Ca> {
  const certFile = caDir ? path.join(caDir, 'ca.pem') : null;
  const keyFile = caDir ? path.join(caDir, 'ca-key.pem') : null;
  if (certFile && keyFile && existsSync(certFile) && existsSync(keyFile)) {
    const pem = readFileSync(certFile, 'utf8');
    return {
      cert: new x509.X509Certificate(pem),
      keys: await importKey(readFileSync(keyFile, 'utf8')),
      pem,
      path: certFile,
    };
  }
  const caKeys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=poolscope simulator CA',
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const pem = ca.toString('pem');
  if (caDir && certFile && keyFile) {
    mkdirSync(caDir, { recursive: true });
    writeFileSync(keyFile, await pemKey(caKeys.privateKey), { mode: 0o600 });
    writeFileSync(certFile, pem);
  }
  return { cert: ca, keys: caKeys, pem, path: certFile };
}

export async function generateTls(
  opts: TlsOptions = {},
  hosts: { dns?: string[]; ips?: string[] } = {},
): Promise<SimTls> {
  const now = Date.now();
  const notBefore = new Date(now - 60_000);
  const notAfter = new Date(now + 30 * 24 * 3600_000);
  const {
    cert: ca,
    keys: caKeys,
    pem: caPem,
    path: caPath,
  } = await loadOrCreateCa(opts.caDir, notBefore, new Date(now + 365 * 24 * 3600_000));
  const leafKeys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const dns = ['localhost', ...(hosts.dns ?? [])];
  const ips = ['127.0.0.1', '::1', ...(hosts.ips ?? [])];
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: randomBytes(8).toString('hex'),
    subject: 'CN=poolscope simulator',
    issuer: ca.subject,
    notBefore,
    notAfter,
    signingKey: caKeys.privateKey,
    publicKey: leafKeys.publicKey,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        ...dns.map((value) => ({ type: 'dns' as const, value })),
        ...ips.map((value) => ({ type: 'ip' as const, value })),
      ]),
      await x509.AuthorityKeyIdentifierExtension.create(ca, false),
    ],
  });
  return { caPem, caPath, certPem: leaf.toString('pem'), keyPem: await pemKey(leafKeys.privateKey) };
}
