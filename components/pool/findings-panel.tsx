import { headline } from '@/lib/diagnosis';
import type { Finding, PoolDetail, SourceState } from '@/lib/api-types';
import { StateBadge } from '@/components/ui/badge';
import { Breakable } from '@/components/ui/breakable';
import { useLiveNow } from '@/components/ui/use-live-now';

/**
 * The diagnosis in plain words, worst first; evidence and the suggested action one click away. `at` is the state's
 * instant: live (`live`), durations count on from it.
 */
export function FindingsPanel({
  findings,
  sources,
  at,
  live,
}: {
  findings: Finding[];
  sources: PoolDetail['sources'];
  at: string;
  live: boolean;
}) {
  const now = useLiveNow(at, live);
  return (
    <section aria-labelledby="findings-h" className="space-y-2">
      <h2 id="findings-h" className="text-lg font-semibold">
        Diagnosis
      </h2>
      {findings.length === 0 ? (
        <p data-testid="no-findings" className="text-sm text-slate-700 dark:text-slate-300">
          {nothingFound(sources)}
        </p>
      ) : null}
      <ul className="space-y-2">
        {findings.map((f) => (
          <li key={f.code} data-finding={f.code} className="rounded border border-slate-200 p-3 dark:border-slate-800">
            <p className="flex items-start gap-2">
              <StateBadge value={f.severity} />
              <span className="min-w-0 font-medium wrap-anywhere">
                <Breakable text={headline(f, now)} />
              </span>
            </p>
            <details className="mt-1 text-sm wrap-anywhere text-slate-700 dark:text-slate-300">
              <summary className="cursor-pointer select-none">Why, and what to do</summary>
              <p className="mt-1">{f.detail}</p>
              <p className="mt-1">
                <span className="font-medium">Suggested: </span>
                {f.suggestedAction}
              </p>
            </details>
          </li>
        ))}
      </ul>
    </section>
  );
}

const SOURCE_NAMES: Record<keyof PoolDetail['sources'], string> = {
  kube: 'the management cluster',
  workload: 'the workload cluster',
  azure: 'Azure',
};

/** Why a pool has no finding: the diagnosis finds every disagreement it can see, so some source is not read yet. */
function nothingFound(sources: PoolDetail['sources']): string {
  const unread = (Object.keys(SOURCE_NAMES) as (keyof PoolDetail['sources'])[]).flatMap((k) =>
    sources[k].state === 'ok' ? [] : [`${SOURCE_NAMES[k]} (${why(sources[k])})`],
  );
  return unread.length
    ? `Nothing found so far, but not every source is read: ${unread.join('; ')}. What poolscope cannot read, it cannot compare.`
    : 'Nothing found.';
}

function why(s: SourceState): string {
  return s.state === 'unknown' ? s.reason : s.state === 'ok' ? 'read' : s.error;
}
