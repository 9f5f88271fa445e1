// Reads a directory of YAML manifests describing simulated clusters:
//   <dir>/management/<cluster>/*.yaml   objects of a management cluster (CAPI, CAPZ, Secrets, …)
//   <dir>/workload/<cluster>/*.yaml     objects of a workload cluster (Nodes); <cluster> matches a CAPI Cluster
// Errors name the file, the line and what is wrong.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../lib/unstructured';
import { findByKind } from './resources';
import type { SimClusterSpec } from './simulator';

export class ManifestError extends Error {}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function readManifestFile(file: string): KubeObject[] {
  const text = readFileSync(file, 'utf8');
  const docs = parseAllDocuments(text, { prettyErrors: true });
  const out: KubeObject[] = [];
  for (const doc of docs) {
    // The document's content starts after any `---` marker; count lines up to it.
    const start = doc.contents?.range?.[0] ?? doc.range?.[0] ?? 0;
    const line = text.slice(0, start).split('\n').length;
    if (doc.errors.length) {
      const e = doc.errors[0] as { message: string; linePos?: { line: number; col: number }[] };
      throw new ManifestError(`${file}:${e.linePos?.[0]?.line ?? line}: invalid YAML: ${e.message.split('\n')[0]}`);
    }
    const value = doc.toJS() as unknown;
    if (value === null || value === undefined) continue;
    const items = isObj(value) && value.kind === 'List' && Array.isArray(value.items) ? value.items : [value];
    for (const item of items) {
      if (!isObj(item))
        throw new ManifestError(
          `${file}:${line}: expected a Kubernetes object, got ${Array.isArray(item) ? 'a list' : typeof item}`,
        );
      const o = item as KubeObject;
      if (!o.apiVersion || !o.kind) throw new ManifestError(`${file}:${line}: object without apiVersion and kind`);
      if (!o.metadata?.name) throw new ManifestError(`${file}:${line}: ${o.kind} without metadata.name`);
      if (!findByKind(o.apiVersion, o.kind)) {
        throw new ManifestError(
          `${file}:${line}: unknown kind ${o.apiVersion} ${o.kind} (the simulator serves CAPI Clusters, MachinePools, Machines, CAPZ AzureMachinePools, AzureMachinePoolMachines, AzureClusters, and core Namespaces, Nodes, Secrets, Events, Leases)`,
        );
      }
      out.push(o);
    }
  }
  return out;
}

export function readManifestDir(dir: string): SimClusterSpec[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new ManifestError(`${dir}: not a directory`);
  const clusters: SimClusterSpec[] = [];
  for (const role of ['management', 'workload'] as const) {
    const roleDir = path.join(dir, role);
    if (!existsSync(roleDir)) continue;
    for (const name of readdirSync(roleDir).sort()) {
      const cdir = path.join(roleDir, name);
      if (!statSync(cdir).isDirectory()) continue;
      const objects = readdirSync(cdir)
        .filter((f) => /\.ya?ml$/.test(f))
        .sort()
        .flatMap((f) => readManifestFile(path.join(cdir, f)));
      clusters.push({ name, role, objects });
    }
  }
  if (!clusters.some((c) => c.role === 'management')) {
    throw new ManifestError(
      `${dir}: no management cluster (expected ${path.join(dir, 'management', '<name>')}/*.yaml)`,
    );
  }
  return clusters;
}
