'use client';

import type { InfraKind, ResyncMode, ResyncStatus } from '@/lib/api-types';
import { RESYNC_ACTIONS, actionDoes } from '@/lib/resync-actions';
import { Badge } from '@/components/ui/badge';

/** Why a mode cannot be chosen (the cluster's RBAC first, then poolscope's verdict), or null. */
export function blockedReason(status: ResyncStatus, mode: ResyncMode): string | null {
  const rbac = status.modes[mode];
  if (!rbac.permitted) return rbac.reason;
  const v = status.verdict;
  const option = v ? (mode === 'reconcile' ? v.reconcile : v.syncProviderIds) : null;
  return option && !option.allowed ? option.reason : null;
}

/** The two modes as radio buttons: which one the diagnosis recommends, and why a mode is blocked. */
export function ResyncModes({
  status,
  mode,
  onChange,
  disabled,
  infraKind,
}: {
  status: ResyncStatus;
  mode: ResyncMode | null;
  onChange: (m: ResyncMode) => void;
  disabled: boolean;
  /** The pool's infra kind, named in what a mode does. */
  infraKind?: InfraKind;
}) {
  const v = status.verdict;
  return (
    <fieldset className="space-y-2" disabled={disabled}>
      <legend className="font-medium">What should poolscope do?</legend>
      {(['sync-provider-ids', 'reconcile'] as const).map((m) => {
        const blocked = blockedReason(status, m);
        const option = v ? (m === 'reconcile' ? v.reconcile : v.syncProviderIds) : null;
        return (
          <label
            key={m}
            className={`flex gap-3 rounded border p-3 ${mode === m ? 'border-sky-600' : 'border-slate-200 dark:border-slate-800'} ${blocked ? 'opacity-70' : 'cursor-pointer'}`}
          >
            <input
              type="radio"
              name="resync-mode"
              value={m}
              checked={mode === m}
              disabled={blocked !== null}
              onChange={() => onChange(m)}
              className="mt-1"
            />
            <span className="space-y-1">
              <span className="flex flex-wrap items-center gap-2 font-medium">
                {RESYNC_ACTIONS[m].name}
                {v?.recommended === m ? <Badge tone="good">recommended</Badge> : null}
                {blocked ? (
                  <Badge tone="bad">blocked</Badge>
                ) : option && !option.canHelp ? (
                  <Badge tone="neutral">would not change anything</Badge>
                ) : null}
              </span>
              <span className="block text-sm">{actionDoes(m, infraKind)}</span>
              <span className="block text-sm text-slate-700 dark:text-slate-300">{blocked ?? option?.reason}</span>
            </span>
          </label>
        );
      })}
    </fieldset>
  );
}
