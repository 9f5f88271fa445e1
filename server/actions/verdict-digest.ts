import 'server-only';
// A short name for a resync verdict, so a confirm can say which verdict its operator saw: equal verdicts, equal
// digests. The lists' order is left out (before CAPZ v1.23 it changes on every reconcile without meaning anything).

import { createHash } from 'node:crypto';
import type { ResyncVerdict } from '@/lib/api-types';

const sorted = (ids: readonly string[]) => [...ids].sort();

export function verdictDigest(v: ResyncVerdict): string {
  const s = v.syncProviderIds;
  const canonical = [
    v.recommended,
    [v.reconcile.allowed, v.reconcile.canHelp, v.reconcile.reason],
    [s.allowed, s.canHelp, s.reason, sorted(s.wouldAdd), sorted(s.wouldRemove)],
  ];
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex').slice(0, 32);
}
