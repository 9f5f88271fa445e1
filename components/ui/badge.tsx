// Small coloured labels for states, severities and drift kinds. Colour is never the only signal: the text
// always says the value.

import type { ReactNode } from 'react';
import type { DriftKind } from '@/lib/api-types';
import { DRIFT_SEVERITY } from '@/lib/drift';

export type Tone = 'good' | 'bad' | 'warn' | 'info' | 'neutral';

/** Each tone's colours (background, text, ring), for controls drawn as badges too (components/fleet/severity-tally). */
export const TONES: Record<Tone, string> = {
  good: 'bg-emerald-100 text-emerald-900 ring-emerald-600/30 dark:bg-emerald-950 dark:text-emerald-200 dark:ring-emerald-400/30',
  bad: 'bg-red-100 text-red-900 ring-red-600/30 dark:bg-red-950 dark:text-red-200 dark:ring-red-400/30',
  warn: 'bg-amber-100 text-amber-900 ring-amber-600/30 dark:bg-amber-950 dark:text-amber-200 dark:ring-amber-400/30',
  info: 'bg-sky-100 text-sky-900 ring-sky-600/30 dark:bg-sky-950 dark:text-sky-200 dark:ring-sky-400/30',
  neutral: 'bg-slate-100 text-slate-800 ring-slate-500/30 dark:bg-slate-800 dark:text-slate-200 dark:ring-slate-400/30',
};

export function Badge({ tone, children, title }: { tone: Tone; children: ReactNode; title?: string }) {
  return (
    <span
      title={title}
      className={`inline-flex items-center rounded px-1.5 py-0.5 text-xs font-medium whitespace-nowrap ring-1 ring-inset ${TONES[tone]}`}
    >
      {children}
    </span>
  );
}

/** The tone of a state value as CAPZ, CAPI, Azure or poolscope spell it. */
export function toneOf(value: string | boolean | null | undefined): Tone {
  if (value === null || value === undefined) return 'neutral';
  const v = String(value).split('/')[0]?.toLowerCase() ?? '';
  if (['succeeded', 'true', 'running', 'ready', 'live', 'ok'].includes(v)) return 'good';
  if (['failed', 'false', 'critical', 'error', 'unreachable', 'canceled', 'deleted', 'not-found'].includes(v))
    return 'bad';
  if (
    [
      'updating',
      'creating',
      'deleting',
      'warning',
      'scalingup',
      'scalingdown',
      'scaling',
      'provisioning',
      'stale',
      'throttled',
      'starting',
      'migrating',
    ].includes(v)
  )
    return 'warn';
  if (v === 'info') return 'info';
  return 'neutral';
}

/** A drift kind's badge tone: its severity's (a case mismatch is critical, an order-only list informational). */
export const driftTone = (kind: DriftKind): Tone => toneOf(DRIFT_SEVERITY[kind]);

export function StateBadge({ value, label }: { value: string | boolean | null | undefined; label?: string }) {
  return (
    <Badge tone={toneOf(value)}>{label ?? (value === null || value === undefined ? 'unknown' : String(value))}</Badge>
  );
}
