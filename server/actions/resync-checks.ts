import 'server-only';
// The checks a resync request passes before its decision (server/actions/resync.ts): who the caller is, what the
// cluster's RBAC lets them do, the Idempotency-Key, and the refusals of the rate limits and the pool's lock.

import {
  poolKey,
  type InfraKind,
  type PoolRef,
  type ResyncIdentity,
  type ResyncMode,
  type ResyncRequest,
  type ResyncRunning,
  type ResyncStatus,
} from '@/lib/api-types';
import { actionLabel } from '@/lib/resync-actions';
import type { KubeObject } from '@/lib/unstructured';
import { HttpError } from '../http/route';
import type { RateLimiter } from './guards';
import type { Access, AccessCheck } from './identity';
import { KubeCallError, PoolObjects, infraPlural } from './pool-objects';
import { clusterError } from './resync-writes';

/** The caller, known to the cluster (401 `not-signed-in` otherwise); a failure to ask is a 502 `cluster-error`. */
export async function signedIn(access: Access, headers: Headers, context: string): Promise<ResyncIdentity> {
  let who;
  try {
    who = await access.identify(headers, context);
  } catch (e) {
    if (e instanceof HttpError) throw e;
    throw new HttpError(502, 'cluster-error', (e as Error).message);
  }
  if (!who.identity)
    throw new HttpError(
      401,
      'not-signed-in',
      `${who.problem} Resync needs to know who you are; reading needs nothing.`,
    );
  return who.identity;
}

/** Takes one from the limiter for `key`, or refuses with 429 `rate-limited`, saying when to come back. */
export function limit(limiter: RateLimiter, key: string, message: (wait: number) => string): void {
  const wait = limiter.take(key);
  if (wait) throw new HttpError(429, 'rate-limited', message(wait), { 'retry-after': String(wait) });
}

/** The request's Idempotency-Key, if it sent one (1 to 200 characters, 400 `invalid-idempotency-key` otherwise). */
export function idempotencyKey(request: Request): string | null {
  const key = request.headers.get('idempotency-key');
  if (key !== null && (key.length === 0 || key.length > 200))
    throw new HttpError(400, 'invalid-idempotency-key', 'Idempotency-Key must be 1 to 200 characters.');
  return key;
}

/** What a request must repeat to be replayed under the same Idempotency-Key. */
export function fingerprint(ref: PoolRef, body: ResyncRequest): string {
  return `${poolKey(ref)} ${body.mode}${body.dryRun ? ' (dry run)' : ''}${body.verdictDigest ? ` confirming ${body.verdictDigest}` : ''}`;
}

/** The MachinePool the request names, which must exist (404 `pool-not-found`). */
export async function existingMachinePool(objects: PoolObjects, ref: PoolRef): Promise<KubeObject> {
  let mp: KubeObject | null;
  try {
    mp = await objects.machinePool();
  } catch (e) {
    clusterError(e, 'Nothing was changed:');
  }
  if (!mp)
    throw new HttpError(
      404,
      'pool-not-found',
      `MachinePool ${ref.namespace}/${ref.name} does not exist on ${ref.context}.`,
    );
  return mp;
}

/** What a mode patches, as the cluster's RBAC is asked about it. */
function accessChecks(ref: PoolRef, mode: ResyncMode, infra: { kind: InfraKind; name: string }): AccessCheck[] {
  const mp: AccessCheck = {
    verb: 'patch',
    group: 'cluster.x-k8s.io',
    resource: 'machinepools',
    namespace: ref.namespace,
    name: ref.name,
  };
  return mode === 'reconcile'
    ? [
        {
          verb: 'patch',
          group: 'infrastructure.cluster.x-k8s.io',
          resource: infraPlural(infra.kind),
          namespace: ref.namespace,
          name: infra.name,
        },
        mp,
      ]
    : [mp];
}

async function permitted(
  access: Access,
  identity: ResyncIdentity,
  ref: PoolRef,
  mode: ResyncMode,
  infra: { kind: InfraKind; name: string },
): Promise<{ permitted: boolean; reason: string | null }> {
  for (const c of accessChecks(ref, mode, infra)) {
    const d = await access.may(identity, ref.context, c);
    if (!d.allowed) return { permitted: false, reason: d.reason };
  }
  return { permitted: true, reason: null };
}

/** The mode, if the cluster's RBAC permits it to the caller (403 `forbidden`; a failure to ask is a 502). */
export async function mustBePermitted(
  access: Access,
  identity: ResyncIdentity,
  ref: PoolRef,
  mode: ResyncMode,
  infra: { kind: InfraKind; name: string },
): Promise<void> {
  const may = await permitted(access, identity, ref, mode, infra).catch((e: Error) => {
    throw new HttpError(502, 'cluster-error', e.message);
  });
  if (!may.permitted) throw new HttpError(403, 'forbidden', `${may.reason} The cluster's RBAC decides who may resync.`);
}

/** The cluster's RBAC answer per mode (and the MachinePool it was asked about). */
export async function permittedModes(
  access: Access,
  objects: PoolObjects,
  ref: PoolRef,
  identity: ResyncIdentity,
): Promise<{ modes: ResyncStatus['modes']; mp: KubeObject | null }> {
  try {
    const mp = await objects.machinePool();
    const infra = mp ? PoolObjects.infraOf(mp) : { kind: 'AzureMachinePool' as const, name: ref.name };
    return {
      mp,
      modes: {
        reconcile: await permitted(access, identity, ref, 'reconcile', infra),
        'sync-provider-ids': await permitted(access, identity, ref, 'sync-provider-ids', infra),
      },
    };
  } catch (e) {
    const reason =
      e instanceof KubeCallError
        ? `The cluster ${ref.context} could not be asked (${e.message}).`
        : (e as Error).message;
    return {
      mp: null,
      modes: { reconcile: { permitted: false, reason }, 'sync-provider-ids': { permitted: false, reason } },
    };
  }
}

/** 409 `resync-running`: the pool's lock is held by another resync. */
export function stillRunning(h: ResyncRunning): HttpError {
  return new HttpError(
    409,
    'resync-running',
    `A ${actionLabel(h.mode)} started by ${h.user} at ${h.startedAt} is still running on this pool; wait for it to finish.`,
  );
}
