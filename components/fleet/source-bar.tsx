import type { SourcesReport } from '@/lib/api-types';
import { Badge, toneOf } from '@/components/ui/badge';
import { LocalTime } from '@/components/ui/local-time';
import { StoreAlert } from '@/components/ui/store-alert';

const LABEL = {
  live: 'live',
  stale: 'stale since',
  error: 'unreachable since',
  starting: 'starting',
  throttled: 'throttled since',
  unreachable: 'unreachable since',
} as const;

function Source({
  kind,
  name,
  state,
  since,
  error,
}: {
  kind: string;
  name: string;
  state: keyof typeof LABEL;
  since: string;
  error?: string | undefined;
}) {
  return (
    <li className="flex items-center gap-1.5" title={error}>
      <span className="text-slate-500 dark:text-slate-400">{kind}</span>
      <span className="font-medium">{name}</span>
      <Badge tone={toneOf(state)}>
        {LABEL[state]}
        {state !== 'live' && state !== 'starting' ? (
          <>
            &nbsp;
            <LocalTime iso={since} withDate={false} />
          </>
        ) : null}
      </Badge>
    </li>
  );
}

/** Every management cluster, workload cluster and subscription, and whether poolscope can read it. */
export function SourceBar({ sources }: { sources: SourcesReport }) {
  return (
    <section aria-label="Sources" className="rounded border border-slate-200 px-3 py-2 text-sm dark:border-slate-800">
      <StoreAlert store={sources.store} />
      {!sources.collecting ? (
        <p className="text-slate-600 dark:text-slate-300">
          This server does not collect (another replica does, or collection is off): it shows the stored state
          {sources.lastCycle ? (
            <>
              , last stored <LocalTime iso={sources.lastCycle.at} />
            </>
          ) : (
            ', and nothing has been stored yet'
          )}
          .
        </p>
      ) : null}
      <ul className="flex flex-wrap gap-x-5 gap-y-1">
        {sources.kube.map((s) => (
          <Source
            key={`${s.kind}:${s.context}:${s.name}`}
            kind={s.kind === 'management' ? 'Management' : 'Workload'}
            name={s.name}
            state={s.state}
            since={s.since}
            error={s.error}
          />
        ))}
        {sources.azure.map((s) => (
          <Source
            key={s.subscription}
            kind="Subscription"
            name={s.subscription}
            state={s.state}
            since={s.since}
            error={s.error}
          />
        ))}
      </ul>
    </section>
  );
}
