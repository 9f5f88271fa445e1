import 'server-only';
// The trail a resync leaves (server/actions/resync.ts): a Kubernetes Event on the MachinePool, a timeline marker and
// a log line for one that ran, and a log line for one refused or failed.

import os from 'node:os';
import { poolKey, type ResyncIdentity, type ResyncMode, type ResyncResult, type TimelineEntry } from '@/lib/api-types';
import { RESYNC_ACTIONS, actionLabel } from '@/lib/resync-actions';
import type { KubeObject } from '@/lib/unstructured';
import { HttpError } from '../http/route';
import type { PoolObjects } from './pool-objects';
import type { ResyncDeps } from './resync-deps';

/** The log line of a resync that ran (or previewed), before its Event and marker are known. */
function auditLine(r: ResyncResult, identity: ResyncIdentity) {
  return {
    level: 'info',
    msg: 'resync',
    pool: poolKey(r.pool),
    mode: r.mode,
    action: RESYNC_ACTIONS[r.mode].name,
    dryRun: r.dryRun,
    outcome: r.outcome,
    user: identity.user,
    via: identity.via,
    objects: r.objects.map((o) => ({
      kind: o.kind,
      name: o.name,
      action: o.action,
      rv: [o.resourceVersionBefore, o.resourceVersionAfter],
    })),
    added: r.added.length,
    removed: r.removed.length,
  };
}

/** A Kubernetes Event, a timeline marker and a log line; a failed audit step is reported, never hidden. */
export async function audit(
  deps: Pick<ResyncDeps, 'store' | 'publish' | 'log'>,
  objects: PoolObjects,
  mp: KubeObject,
  r: ResyncResult,
  identity: ResyncIdentity,
): Promise<void> {
  const line = auditLine(r, identity);
  if (r.dryRun) {
    deps.log?.(line);
    return;
  }
  const text = `${identity.user} (${identity.via}) ran ${actionLabel(r.mode)}: ${r.outcome}. ${r.message}`;
  try {
    r.audit.event = await objects.event(
      mp,
      r.outcome === 'done' ? 'Normal' : 'Warning',
      text.slice(0, 1000),
      `poolscope-${os.hostname()}`,
    );
  } catch (e) {
    r.audit.problems.push(`The Kubernetes Event could not be recorded: ${(e as Error).message}`);
  }
  await mark(deps, line.pool, r, identity);
  deps.log?.({ ...line, event: r.audit.event, marker: r.audit.marker, problems: r.audit.problems });
}

/** The timeline marker, told to this process's live viewers once stored. */
async function mark(
  deps: Pick<ResyncDeps, 'store' | 'publish'>,
  pool: string,
  r: ResyncResult,
  identity: ResyncIdentity,
): Promise<void> {
  const at = new Date().toISOString();
  const entry: TimelineEntry = {
    at,
    poolKey: pool,
    field: 'resync',
    from: null,
    to: `${RESYNC_ACTIONS[r.mode].name} by ${identity.user}: ${r.outcome}`,
    detail: r.message,
  };
  try {
    await deps.store.appendEntries([entry]);
    r.audit.marker = true;
    deps.publish({ poolKey: pool, at, fields: ['resync'] });
  } catch (e) {
    r.audit.problems.push(`The timeline marker could not be stored: ${(e as Error).message}`);
  }
}

/** The log line of a resync refused or failed, before or during its writes. */
export function logRefused(
  deps: Pick<ResyncDeps, 'log'>,
  a: { pool: string; mode: ResyncMode; dryRun: boolean; identity: ResyncIdentity; error: unknown },
): void {
  deps.log?.({
    level: 'warn',
    msg: 'resync refused or failed',
    pool: a.pool,
    mode: a.mode,
    action: RESYNC_ACTIONS[a.mode].name,
    dryRun: a.dryRun,
    user: a.identity.user,
    via: a.identity.via,
    error: a.error instanceof HttpError ? a.error.code : 'internal',
    message: (a.error as Error).message,
  });
}
