// A simulated fleet for the benchmarks that run the collector against one (`collector`, `server`): the
// simulator in a child process (its memory and CPU are not the measured process's), its environment (kubeconfig,
// CA, ARM endpoint) and the fleet's management contexts.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { readEnvFile } from '../sim/env-file.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');

export interface SimulatedFleet {
  /** The simulator's state directory (its env file, kubeconfig and CA; the benchmarks put their store there too). */
  stateDir: string;
  /** What the simulator's env file says (KUBECONFIG, NODE_EXTRA_CA_CERTS, the Azure settings). */
  env: Record<string, string>;
  /**
   * The fleet's management contexts (`mgmt-*`), as an operator would name them in POOLSCOPE_CONTEXTS: the
   * simulator's kubeconfig also has a context for each workload cluster, which `*` would watch as management
   * clusters too (six more informers each, over empty collections and the workload cluster's Events).
   */
  contexts: string[];
  /** Stops the simulator and, unless `keep`, deletes the state directory. */
  stop(opts?: { keep?: boolean }): Promise<void>;
}

/** Starts `sim/cli.ts --fleet <spec>` and waits (up to 2 minutes) until it serves. */
export async function startFleet(spec: string, prefix = 'poolscope-bench-'): Promise<SimulatedFleet> {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), prefix));
  const sim = spawn(
    path.join(ROOT, 'node_modules', '.bin', 'tsx'),
    [path.join(ROOT, 'sim', 'cli.ts'), '--fleet', spec, '--state-dir', stateDir],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise((resolve) => sim.on('exit', resolve));
  let out = '';
  sim.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  sim.stderr.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const stop = async (opts: { keep?: boolean } = {}) => {
    if (sim.exitCode === null && sim.signalCode === null) sim.kill('SIGINT');
    await exited;
    if (!opts.keep) rmSync(stateDir, { recursive: true, force: true });
  };
  try {
    const envFile = path.join(stateDir, 'env');
    for (let i = 0; i < 1200 && !(existsSync(envFile) && /Ctrl-C/.test(out)); i++) {
      if (sim.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    if (!existsSync(envFile) || !/Ctrl-C/.test(out)) throw new Error(`the simulator did not start:\n${out}`);
    const env = readEnvFile(envFile) as Record<string, string>;
    const kc = new KubeConfig();
    kc.loadFromFile(env.KUBECONFIG as string);
    const contexts = kc
      .getContexts()
      .map((c) => c.name)
      .filter((n) => n.startsWith('mgmt-'));
    if (!contexts.length) throw new Error('the simulated fleet has no management context (mgmt-*)');
    return { stateDir, env, contexts, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
