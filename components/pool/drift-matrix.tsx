import {
  driftKindLabel,
  idSourceLabel,
  idSourcesOf,
  type DriftItem,
  type InstanceRow,
  type PoolFlavour,
} from '@/lib/api-types';
import { Badge, driftTone } from '@/components/ui/badge';
import { LocalTime } from '@/components/ui/local-time';
import { STICKY_HEAD_CELL, STICKY_ROW_CELL } from '@/components/ui/sticky-column';
import { plural } from '@/lib/format';
import { useFirstRows } from './first-rows-note';
import { AWAITING_TITLE, LEAVING_TITLE } from './instance-table';
import { ScrollBox, STICKY_HEAD } from '@/components/ui/scroll-box';

const short = (id: string) => id.split('/').slice(-1)[0] ?? id;

/** What waits for Azure's next read (InstanceRow.awaitingAzureRead): instances come or gone since the last one. */
export function awaitingSentence(rows: readonly InstanceRow[]): string | null {
  const coming = rows.filter((r) => r.awaitingAzureRead && !r.azure).length;
  const going = rows.filter((r) => r.awaitingAzureRead && r.azure).length;
  const parts = [
    coming
      ? `${plural(coming, 'instance')} newer than Azure's last read ${coming === 1 ? 'waits' : 'wait'} for the next one.`
      : null,
    going
      ? `${plural(going, 'instance')} whose AMPM went after Azure's last read, most likely gone, ${going === 1 ? 'waits' : 'wait'} for the next one.`
      : null,
  ].filter(Boolean);
  return parts.length ? parts.join(' ') : null;
}

/**
 * Presence matrix: one row per instance (providerID), one column per source the pool's flavour has. A cell shows
 * whether the source holds the ID; a source that spells it differently (case) is marked, with its exact string on
 * hover. Azure's column says "not read" while Azure is not (an AKS pool's VMs, say), rather than "absent".
 */
export function DriftMatrix({
  rows,
  drift,
  heldBack = 0,
  flavour = 'self-managed',
  azureRead = true,
}: {
  rows: readonly InstanceRow[];
  drift: DriftItem[];
  heldBack?: number;
  flavour?: PoolFlavour;
  azureRead?: boolean;
}) {
  const { shown, note } = useFirstRows(rows, heldBack);
  const sources = idSourcesOf(flavour);
  const since = new Map(drift.filter((d) => d.providerID).map((d) => [d.providerID?.toLowerCase(), d]));
  const awaitingText = awaitingSentence(rows);
  return (
    <section aria-labelledby="drift-h" className="space-y-2">
      <h2 id="drift-h" className="text-lg font-semibold">
        ProviderID drift
      </h2>
      {drift.length === 0 ? (
        <p className="text-sm text-slate-600 dark:text-slate-300">
          {awaitingText
            ? `Every source agrees on every instance Azure has been asked about. ${awaitingText}`
            : 'Every source agrees on every instance.'}
        </p>
      ) : (
        <ul className="space-y-1 text-sm">
          {drift.map((d) => (
            <li key={d.key} data-drift={d.kind} className="flex flex-wrap items-center gap-2">
              <Badge tone={driftTone(d.kind)} title={d.kind}>
                {driftKindLabel(d.kind, flavour)}
              </Badge>
              {d.providerID ? (
                <code className="text-xs" title={d.providerID}>
                  {short(d.providerID)}
                </code>
              ) : null}
              <span>{d.summary}</span>
              {d.since ? (
                <span className="text-slate-500 dark:text-slate-400">
                  since <LocalTime iso={d.since} />
                </span>
              ) : null}
            </li>
          ))}
          {awaitingText ? (
            <li className="text-slate-600 dark:text-slate-300" data-awaiting-azure>
              {awaitingText}
            </li>
          ) : null}
        </ul>
      )}
      {note}
      <ScrollBox label="ProviderID drift by instance">
        <table className="w-full text-sm">
          <caption className="sr-only">Which source holds which providerID</caption>
          <thead className={`${STICKY_HEAD} bg-slate-50 dark:bg-slate-900`}>
            <tr>
              <th scope="col" className={`${STICKY_HEAD_CELL} px-2 py-2 text-left font-medium`}>
                Instance
              </th>
              {sources.map((s) => (
                <th key={s} scope="col" className="px-2 py-2 text-left font-medium">
                  {idSourceLabel(s, flavour)}
                </th>
              ))}
              <th scope="col" className="px-2 py-2 text-left font-medium">
                Drift
              </th>
            </tr>
          </thead>
          <tbody>
            {shown.map((r) => {
              const ref = r.sources.azure ?? r.providerID;
              return (
                <tr
                  key={r.providerID}
                  data-instance={short(r.providerID)}
                  className="border-t border-slate-200 dark:border-slate-800"
                >
                  <th
                    scope="row"
                    className={`${STICKY_ROW_CELL} px-2 py-1.5 text-left font-mono text-xs font-normal`}
                    title={r.providerID}
                  >
                    {short(r.providerID)}
                  </th>
                  {sources.map((s) => {
                    const v = r.sources[s];
                    const unread = s === 'azure' && !azureRead;
                    const caseDiff = v !== null && v !== ref && v.toLowerCase() === ref.toLowerCase();
                    const awaiting = s === 'azure' && r.awaitingAzureRead === true;
                    return (
                      <td
                        key={s}
                        className={`px-2 py-1.5 ${caseDiff ? 'bg-sky-100 dark:bg-sky-950' : ''}`}
                        title={
                          awaiting
                            ? v === null
                              ? AWAITING_TITLE
                              : LEAVING_TITLE
                            : unread
                              ? 'Azure is not read for this pool'
                              : (v ?? `not in ${idSourceLabel(s, flavour)}`)
                        }
                      >
                        {unread ? (
                          <span className="text-slate-600 dark:text-slate-300">not read</span>
                        ) : awaiting ? (
                          <span className="text-slate-600 dark:text-slate-300">
                            {v === null ? '… not read yet' : '✓ at last read'}
                          </span>
                        ) : v === null ? (
                          <span className="text-red-700 dark:text-red-300">✗ absent</span>
                        ) : caseDiff ? (
                          <span>✓ other case</span>
                        ) : (
                          <span className="text-emerald-700 dark:text-emerald-300">✓</span>
                        )}
                      </td>
                    );
                  })}
                  <td className="px-2 py-1.5">
                    <span className="flex flex-wrap gap-1">
                      {r.driftKinds.map((k) => (
                        <Badge
                          key={k}
                          tone={driftTone(k)}
                          title={`${k}: ${since.get(r.providerID.toLowerCase())?.summary ?? ''}`}
                        >
                          {driftKindLabel(k, flavour)}
                        </Badge>
                      ))}
                    </span>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </ScrollBox>
    </section>
  );
}
