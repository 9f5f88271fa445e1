// Memory benchmark: heap bytes per VM of the objects the collector caches (full API objects vs slimmed), in a
// child process with --expose-gc so each figure is measured after a full collection.

import { spawnSync } from 'node:child_process';
import path from 'node:path';

export function benchMemory(): Record<string, unknown> {
  const r = spawnSync(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', path.join(import.meta.dirname, 'memory-child.ts')],
    { encoding: 'utf8', cwd: path.resolve(import.meta.dirname, '..') },
  );
  if (r.status !== 0) throw new Error(`memory benchmark failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
}
