import type { ResyncResult } from '@/lib/api-types';
import { ResyncSteps } from './resync-steps';

const short = (id: string) => id.split('/').slice(-3).join('/');

/** IDs added (+) and removed (−), or a line saying there are none. */
export function IdChanges({ added, removed }: { added: readonly string[]; removed: readonly string[] }) {
  if (added.length === 0 && removed.length === 0) return <p className="text-sm">No IDs would change.</p>;
  return (
    <ul className="font-mono text-xs" aria-label="providerID changes">
      {added.map((id) => (
        <li key={`+${id}`} className="text-emerald-700 dark:text-emerald-300" title={id}>
          + {short(id)}
        </li>
      ))}
      {removed.map((id) => (
        <li key={`-${id}`} className="text-red-700 dark:text-red-300" title={id}>
          − {short(id)}
        </li>
      ))}
    </ul>
  );
}

/** What a resync did: its message, each object with its resourceVersions, its steps and the audit. */
export function ResyncResultView({ result }: { result: ResyncResult }) {
  const tone =
    result.outcome === 'partial'
      ? 'border-amber-400 bg-amber-50 dark:bg-amber-950'
      : 'border-emerald-400 bg-emerald-50 dark:bg-emerald-950';
  return (
    <div role="status" data-testid="resync-result" className={`space-y-2 rounded border p-3 ${tone}`}>
      <p className="font-medium">{result.message}</p>
      <table className="w-full text-left text-sm">
        <caption className="sr-only">Objects</caption>
        <thead>
          <tr>
            <th scope="col">Object</th>
            <th scope="col">Action</th>
            <th scope="col">resourceVersion</th>
            <th scope="col">Change</th>
          </tr>
        </thead>
        <tbody>
          {result.objects.map((o) => (
            <tr key={`${o.kind}/${o.name}`}>
              <td>
                {o.kind} {o.namespace}/{o.name}
              </td>
              <td>
                {o.action}
                {o.error ? `: ${o.error}` : ''}
              </td>
              <td className="font-mono">
                {o.resourceVersionBefore ?? '?'} → {o.resourceVersionAfter ?? '—'}
              </td>
              <td>{o.change}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {result.mode === 'sync-provider-ids' ? <IdChanges added={result.added} removed={result.removed} /> : null}
      <ResyncSteps steps={result.steps} />
      {result.audit.problems.map((p) => (
        <p key={p} className="text-sm text-amber-900 dark:text-amber-200">
          {p}
        </p>
      ))}
      {result.replayed ? (
        <p className="text-sm">This is the answer to an identical earlier request; nothing was done twice.</p>
      ) : null}
    </div>
  );
}
