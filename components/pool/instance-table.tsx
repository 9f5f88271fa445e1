'use client';

import type { InstanceRow, PoolFlavour } from '@/lib/api-types';
import { Badge, StateBadge } from '@/components/ui/badge';
import { STICKY_HEAD_CELL, STICKY_ROW_CELL } from '@/components/ui/sticky-column';
import { useFirstRows } from './first-rows-note';
import { ScrollBox, STICKY_HEAD } from '@/components/ui/scroll-box';

const dash = (v: string | null | undefined) => v ?? '—';

/** Why an instance without Azure data is not taken for gone (InstanceRow.awaitingAzureRead). */
export const AWAITING_TITLE =
  "Azure's last read is older than this instance's AzureMachinePoolMachine: the VM may have been created since. It is not counted as drift; the next read shows it.";
/** Why an instance Azure's last read lists is most likely gone, and not drift (InstanceRow.awaitingAzureRead). */
export const LEAVING_TITLE =
  "CAPZ deleted this instance's AzureMachinePoolMachine after Azure's last read, which still lists the VM: it most likely went since. It is not counted as drift; the next read tells.";

/** One row per instance, joining Azure, the AzureMachinePoolMachine, the Machine, the Node and the autoscaler's view. */
export function InstanceTable({
  rows,
  heldBack = 0,
  flavour = 'self-managed',
  azureRead = true,
}: {
  rows: readonly InstanceRow[];
  heldBack?: number;
  /** An AKS pool has no AMPMs and no Machines: their columns are left out. */
  flavour?: PoolFlavour;
  /** Whether Azure was read: an instance it does not list is "not in Azure" only then. */
  azureRead?: boolean;
}) {
  const { shown, total, note } = useFirstRows(rows, heldBack);
  const perInstance = flavour === 'self-managed';
  return (
    <section aria-labelledby="instances-h" className="space-y-2">
      <h2 id="instances-h" className="text-lg font-semibold">
        Instances ({total})
      </h2>
      {note}
      <ScrollBox label="Instances">
        <table className="w-full text-sm">
          <thead className={`${STICKY_HEAD} bg-slate-50 dark:bg-slate-900`}>
            <tr>
              {[
                'Azure VM',
                'Provisioning',
                'Power',
                'Latest model',
                'Error',
                ...(perInstance ? ['AMPM', 'Machine'] : []),
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
                  ) : azureRead ? (
                    <span className="text-red-700 dark:text-red-300">not in Azure</span>
                  ) : (
                    <span className="text-slate-600 dark:text-slate-300">Azure not read</span>
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
                {perInstance ? (
                  <>
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
                  </>
                ) : null}
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
      </ScrollBox>
    </section>
  );
}
