import { headline } from '@/lib/diagnosis';
import type { Finding, PoolDetail, SourceState } from '@/lib/api-types';
import { groupFindings, type FindingGroup } from '@/lib/finding-groups';
import { formatDuration } from '@/lib/format';
import { nextSteps, type NextStep } from '@/lib/next-steps';
import { toMs } from '@/lib/unstructured';
import { StateBadge } from '@/components/ui/badge';
import { Breakable } from '@/components/ui/breakable';
import { CopyButton } from '@/components/ui/copy-button';
import { LocalTime } from '@/components/ui/local-time';
import { useLiveNow } from '@/components/ui/use-live-now';

/**
 * The diagnosis in plain words, worst first. Findings that follow from one another are one headline with its
 * evidence (lib/finding-groups.ts); the worst, unless it is only information, opens with what to do, names filled
 * in. The others take a line or two each, their age beside them. `live`: durations count on.
 */
export function FindingsPanel({ detail, live }: { detail: PoolDetail; live: boolean }) {
  const now = useLiveNow(detail.at, live);
  const groups = groupFindings(detail.findings);
  return (
    <section aria-labelledby="findings-h" className="space-y-2">
      <h2 id="findings-h" className="text-lg font-semibold">
        Diagnosis
      </h2>
      {groups.length === 0 ? (
        <p data-testid="no-findings" className="text-sm text-slate-700 dark:text-slate-300">
          {nothingFound(detail.sources)}
        </p>
      ) : null}
      <ul className="space-y-2">
        {groups.map((g, i) => (
          <GroupItem
            key={g.head.code}
            group={g}
            detail={detail}
            now={now}
            lead={i === 0}
            open={i === 0 && g.head.severity !== 'info'}
          />
        ))}
      </ul>
    </section>
  );
}

function GroupItem({
  group,
  detail,
  now,
  lead,
  open,
}: {
  group: FindingGroup;
  detail: PoolDetail;
  now: string;
  lead: boolean;
  open: boolean;
}) {
  const { head, because } = group;
  const chain = [head, ...because];
  // The root cause's steps first: what to do about it is what to do about the rest.
  const steps = uniqueSteps([...chain].reverse().flatMap((f) => nextSteps(f.code, detail)));
  return (
    <li
      data-finding={head.code}
      className={
        lead
          ? 'rounded border border-slate-200 p-3 dark:border-slate-800'
          : 'rounded border border-slate-200 px-3 py-1.5 dark:border-slate-800'
      }
    >
      <p className="flex items-start gap-2">
        <StateBadge value={head.severity} />
        <span className={lead ? 'min-w-0 font-medium wrap-anywhere' : 'min-w-0 wrap-anywhere'}>
          <Breakable text={headline(head, now)} />
          {lead ? null : (
            <>
              {' '}
              <Age finding={head} now={now} inline />
            </>
          )}
        </span>
      </p>
      {lead ? <Age finding={head} now={now} /> : null}
      {because.length ? (
        <ul className="mt-1 space-y-0.5 text-sm" aria-label="Because">
          {because.map((f) => (
            <li key={f.code} data-finding={f.code} className="flex flex-wrap items-baseline gap-x-2 wrap-anywhere">
              <span className="text-slate-600 dark:text-slate-300">because</span>
              <StateBadge value={f.severity} />
              <span>{f.summary}</span>
              <Age finding={f} now={now} inline />
            </li>
          ))}
        </ul>
      ) : null}
      <details open={open} className="mt-1 text-sm wrap-anywhere text-slate-700 dark:text-slate-300">
        <summary className="cursor-pointer select-none">What to do, and why</summary>
        <ol className="mt-1 list-decimal space-y-1 pl-5" data-testid="what-to-do">
          {[...chain].reverse().map((f) => (
            <li key={f.code}>{f.suggestedAction}</li>
          ))}
        </ol>
        {steps.length ? <StepList steps={steps} /> : null}
        {chain.map((f) => (
          <p key={f.code} className="mt-1">
            {f.detail}
          </p>
        ))}
      </details>
    </li>
  );
}

function StepList({ steps }: { steps: NextStep[] }) {
  return (
    <ul className="mt-2 space-y-1.5" data-testid="next-steps">
      {steps.map((s) => (
        <li key={s.command ?? s.href ?? s.text}>
          {s.href ? (
            <a href={s.href} target="_blank" rel="noopener noreferrer" className="underline">
              {s.text}
            </a>
          ) : (
            <span>{s.text}</span>
          )}
          {s.command ? (
            <span className="mt-0.5 flex items-start gap-2">
              <code className="block min-w-0 flex-1 rounded bg-slate-100 px-2 py-1 font-mono text-xs break-all dark:bg-slate-900">
                {s.command}
              </code>
              <CopyButton text={s.command} label={`Copy: ${s.text}`} />
            </span>
          ) : null}
        </li>
      ))}
    </ul>
  );
}

/** Since when a finding holds and for how long; for a warning that turns critical, when it does. */
function Age({ finding: f, now, inline = false }: { finding: Finding; now: string; inline?: boolean }) {
  const since = toMs(f.since ?? null);
  const nowMs = toMs(now) ?? 0;
  return (
    <span
      data-testid="finding-age"
      className={
        inline
          ? 'text-xs text-slate-600 dark:text-slate-400'
          : 'mt-0.5 block text-xs text-slate-600 dark:text-slate-400'
      }
    >
      {since === null ? (
        'already so when poolscope began watching'
      ) : (
        <>
          since <LocalTime iso={f.since ?? ''} /> · for {formatDuration(nowMs - since)}
        </>
      )}
      {f.criticalFrom ? (
        <>
          {' '}
          · critical from <LocalTime iso={f.criticalFrom} /> if it lasts
        </>
      ) : null}
    </span>
  );
}

function uniqueSteps(steps: NextStep[]): NextStep[] {
  const seen = new Set<string>();
  return steps.filter((s) => {
    const k = s.command ?? s.href ?? s.text;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
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
