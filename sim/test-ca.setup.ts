// Vitest global setup: one simulator CA for the whole run, trusted by every test process through
// NODE_EXTRA_CA_CERTS — the same setting a real user sets for a private CA. Workers are forked after this
// runs, so they inherit it (Node reads NODE_EXTRA_CA_CERTS only at process start).

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateTls } from './kube/tls';

export default async function setup(): Promise<() => void> {
  const dir = process.env.POOLSCOPE_SIM_CA_DIR ?? mkdtempSync(path.join(os.tmpdir(), 'poolscope-test-ca-'));
  const tls = await generateTls({ caDir: dir });
  process.env.POOLSCOPE_SIM_CA_DIR = dir;
  process.env.NODE_EXTRA_CA_CERTS = tls.caPath ?? '';
  return () => {
    if (dir.includes('poolscope-test-ca-')) rmSync(dir, { recursive: true, force: true });
  };
}
