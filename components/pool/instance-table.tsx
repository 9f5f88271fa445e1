'use client';

import { useState } from 'react';
import type { InstanceRow } from '@/lib/api-types';
import { Badge, StateBadge } from '@/components/ui/badge';
import { STICKY_HEAD_CELL, STICKY_ROW_CELL } from '@/components/ui/sticky-column';

const dash = (v: string | null | undefined) => v ?? '—';

/** Why an instance without Azure data is not taken for gone (InstanceRow.awaitingAzureRead). */
export const AWAITING_TITLE =
  "Azure's last read is older than this instance's AzureMachinePoolMachine: the VM may have been created since. It is not counted as drift; the next read shows it.";
/** Why an instance Azure's last read lists is most likely gone, and not drift (InstanceRow.awaitingAzureRead). */
export const LEAVING_TITLE =
  "CAPZ deleted this instance's AzureMachinePoolMachine after Azure's last read, which still lists the VM: it most likely went since. It is not counted as drift; the next read tells.";

/** How many rows a large pool's table shows until asked for all: a 1,000-row table is slow to draw and to read. */
const ROWS_AT_FIRST = 100;

/** Whether a row has anything to look at: not Succeeded in Azure, or a part missing or not ready. */
function needsLook(r: InstanceRow): boolean {
  return (
    !r.azure ||
    r.azure.provisioningState !== 'Succeeded' ||
    !r.ampm?.ready ||
    !r.machine ||
    !r.node?.ready ||
    r.node.uninitializedTaint === true ||
    !r.autoscaler.visible
  );
}

/**
 * The rows shown: all of them, or for a large pool the first ROWS_AT_FIRST with those that need a look first (in
 * their order), then the others.
 */
export function firstRows(rows: readonly InstanceRow[], all: boolean): readonly InstanceRow[] {
  if (all || rows.length <= ROWS_AT_FIRST) return rows;
  const look = rows.filter(needsLook);
  return [...look, ...rows.filter((r) => !needsLook(r))].slice(0, Math.max(ROWS_AT_FIRST, look.length));
}

/** One row per instance, joining Azure, the AzureMachinePoolMachine, the Machine, the Node and the autoscaler's view. */
export function InstanceTable({ rows }: { rows: InstanceRow[] }) {
  const [all, setAll] = useState(false);
  const shown = firstRows(rows, all);
  return (
    <section aria-labelledby="instances-h" className="space-y-2">
      <h2 id="instances-h" className="text-lg font-semibold">
        Instances ({rows.length})
      </h2>
      {shown.length < rows.length ? (
        <p className="flex flex-wrap items-center gap-3 text-sm text-slate-600 dark:text-slate-300">
          <span>
            {shown.length} of {rows.length} shown: those with something to look at first.
          </span>
          <button type="button" className="underline" onClick={() => setAll(true)}>
            Show all {rows.length}
          </button>
        </p>
      ) : null}
      <div className="overflow-x-auto rounded border border-slate-200 dark:border-slate-800">
        <table className="w-full text-sm">
          <thead className="bg-slate-50 dark:bg-slate-900">
            <tr>
              {[
                'Azure VM',
                'Provisioning',
                'Power',
                'Latest model',
                'Error',
                'AMPM',
                'Machine',
                'Node',
                'Autoscaler sees it',
              ].map((h, i) => (
                <th
                  key={h}
                  scope="col"
                  className={`${i === 0 ? `${STICKY_HEAD_CELL} ` : ''}px-2 py-2 text-left font-medium`}
                >
                  {h}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {shown.map((r) => (
              <tr key={r.providerID} className="border-t border-slate-200 dark:border-slate-800">
                <th
                  scope="row"
                  className={`${STICKY_ROW_CELL} px-2 py-1.5 text-left font-mono text-xs font-normal`}
                  title={r.providerID}
                >
                  {r.azure ? (
                    <>
                      {`${r.azure.name}${r.azure.computerName ? ` (${r.azure.computerName})` : ''}`}
                      {r.awaitingAzureRead ? (
                        <span className="text-slate-600 dark:text-slate-300" title={LEAVING_TITLE}>
                          {' '}
                          · going
                        </span>
                      ) : null}
                    </>
                  ) : r.awaitingAzureRead ? (
                    <span className="text-slate-600 dark:text-slate-300" title={AWAITING_TITLE}>
                      not read yet
                    </span>
                  ) : (
                    <span className="text-red-700 dark:text-red-300">not in Azure</span>
                  )}
                </th>
                <td className="px-2 py-1.5">{r.azure ? <StateBadge value={r.azure.provisioningState} /> : '—'}</td>
                <td className="px-2 py-1.5">{dash(r.azure?.powerState)}</td>
                <td className="px-2 py-1.5">
                  {r.azure?.latestModelApplied === null || !r.azure ? '—' : r.azure.latestModelApplied ? 'yes' : 'no'}
                </td>
                <td className="px-2 py-1.5" title={r.azure?.errorMessage ?? undefined}>
                  {dash(r.azure?.errorCode)}
                </td>
                <td className="px-2 py-1.5">
                  {r.ampm ? (
                    <span>
                      {r.ampm.name} <StateBadge value={r.ampm.ready} label={r.ampm.ready ? 'ready' : 'not ready'} />
                    </span>
                  ) : (
                    '—'
                  )}
                </td>
                <td className="px-2 py-1.5">{r.machine ? `${r.machine.name} (${dash(r.machine.phase)})` : '—'}</td>
                <td className="px-2 py-1.5">
                  {r.node ? (
                    <span>
                      {r.node.name} <StateBadge value={r.node.ready} label={r.node.ready ? 'Ready' : 'NotReady'} />
                      {r.node.uninitializedTaint ? (
                        <>
                          {' '}
                          <Badge tone="warn">uninitialized</Badge>
                        </>
                      ) : null}
                    </span>
                  ) : (
                    '—'
                  )}
                </td>
                <td className="px-2 py-1.5" title={r.autoscaler.key}>
                  {r.autoscaler.visible ? <Badge tone="good">yes</Badge> : <Badge tone="bad">no</Badge>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
