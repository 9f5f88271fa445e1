import type { ResyncOption, ResyncVerdict } from '@/lib/api-types';
import { RESYNC_ACTIONS } from '@/lib/resync-actions';
import { Badge } from '@/components/ui/badge';

/** What an action would do, in a few words (its badge's). */
const outcome = (o: ResyncOption) => (o.allowed ? (o.canHelp ? 'would help' : 'would not change anything') : 'refused');

function Option({ title, o, children }: { title: string; o: ResyncOption; children?: React.ReactNode }) {
  return (
    <div className="rounded border border-slate-200 p-3 dark:border-slate-800">
      <p className="flex flex-wrap items-center gap-2 font-medium">
        {title}
        <Badge tone={o.allowed ? (o.canHelp ? 'good' : 'neutral') : 'bad'}>
          {o.allowed && !o.canHelp ? 'allowed, would not change anything' : outcome(o)}
        </Badge>
      </p>
      <p className="mt-1 text-sm text-slate-700 dark:text-slate-300">{o.reason}</p>
      {children}
    </div>
  );
}

const short = (id: string) => id.split('/').slice(-3).join('/');

/** What a resync could do for this pool, and why poolscope would or would not do it. */
export function VerdictPanel({ verdict, action }: { verdict: ResyncVerdict; action?: React.ReactNode }) {
  const s = verdict.syncProviderIds;
  const noNode = new Set(s.wouldAddWithoutNode ?? []);
  const options = (
    <div className="grid gap-2 md:grid-cols-2 xl:grid-cols-1">
      <Option title={RESYNC_ACTIONS.reconcile.name} o={verdict.reconcile} />
      <Option title={RESYNC_ACTIONS['sync-provider-ids'].name} o={s}>
        {s.wouldAdd.length || s.wouldRemove.length ? (
          <p className="mt-1 font-mono text-xs">
            {s.wouldAdd.map((id) => (
              <span key={id} className="block text-emerald-700 dark:text-emerald-300" title={id}>
                + {short(id)}
                {noNode.has(id) ? <span className="text-amber-700 dark:text-amber-300"> (no Node)</span> : null}
              </span>
            ))}
            {s.wouldRemove.map((id) => (
              <span key={id} className="block text-red-700 dark:text-red-300" title={id}>
                − {short(id)}
              </span>
            ))}
          </p>
        ) : null}
      </Option>
    </div>
  );
  return (
    <section aria-labelledby="verdict-h" className="space-y-2">
      <h2 id="verdict-h" className="text-lg font-semibold">
        Resync
      </h2>
      {action}
      <p className="text-sm">
        {verdict.recommended === null
          ? 'No resync is recommended.'
          : `Recommended: ${RESYNC_ACTIONS[verdict.recommended].name}.`}
      </p>
      {verdict.recommended === null ? (
        // Nothing to do: the reasons are there for who asks, in one line until opened.
        <details className="text-sm">
          <summary className="cursor-pointer text-slate-700 dark:text-slate-300">
            Why: {RESYNC_ACTIONS.reconcile.name} {outcome(verdict.reconcile)} ·{' '}
            {RESYNC_ACTIONS['sync-provider-ids'].name} {outcome(s)}
          </summary>
          <div className="mt-2">{options}</div>
        </details>
      ) : (
        options
      )}
    </section>
  );
}
