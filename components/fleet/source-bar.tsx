import type { SourcesReport } from '@/lib/api-types';
import { Badge, toneOf } from '@/components/ui/badge';
import { LocalTime } from '@/components/ui/local-time';
import { StoreAlert } from '@/components/ui/store-alert';

const LABEL = {
  live: 'live',
  'last-known-live': 'live when last read',
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
  stale,
  id,
}: {
  kind: string;
  name: string;
  state: keyof typeof LABEL;
  since: string;
  error?: string | undefined;
  stale: boolean;
  /** The source's full ID, when its name is not (a subscription named by its clusters). */
  id?: string;
}) {
  // Read from a server that no longer answers, "live" would be a claim about now that nobody can make.
  const shown: keyof typeof LABEL = stale && state === 'live' ? 'last-known-live' : state;
  return (
    <li className="flex items-center gap-1.5" title={[id, error].filter(Boolean).join(': ') || undefined}>
      <span className="text-slate-500 dark:text-slate-400">{kind}</span>
      <span className="font-medium">{name}</span>
      <Badge tone={shown === 'last-known-live' ? 'neutral' : toneOf(shown)}>
        {LABEL[shown]}
        {shown !== 'live' && shown !== 'starting' && shown !== 'last-known-live' ? (
          <>
            &nbsp;
            <LocalTime iso={since} withDate={false} />
          </>
        ) : null}
      </Badge>
    </li>
  );
}

/** A subscription by the clusters that use it (its ID's start beside, the whole ID on hover); else by its ID. */
function subscriptionName(s: SourcesReport['azure'][number]): string {
  return s.usedBy?.length ? `of ${s.usedBy.join(', ')} (${s.subscription.slice(0, 8)}…)` : s.subscription;
}

/** Every management cluster, workload cluster and subscription, and whether poolscope can read it. */
export function SourceBar({ sources, stale = false }: { sources: SourcesReport; stale?: boolean }) {
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
            stale={stale}
          />
        ))}
        {sources.azure.map((s) => (
          <Source
            key={s.subscription}
            kind="Subscription"
            name={subscriptionName(s)}
            id={s.subscription}
            state={s.state}
            since={s.since}
            error={s.error}
            stale={stale}
          />
        ))}
      </ul>
    </section>
  );
}
