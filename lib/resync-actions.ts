// The one user-facing name of each resync mode, used by the dialog, the API's messages and the audit trail
// (docs/user-guide.md, "Resync"). The API keeps its mode identifiers; people read these names.

import type { InfraKind, ResyncMode } from './api-types';

export const RESYNC_ACTIONS: Record<ResyncMode, { name: string; does: string }> = {
  reconcile: {
    name: 'Reconcile',
    does: "Annotates the AzureMachinePool, then the MachinePool, so CAPZ and CAPI reconcile now. It cannot get past CAPI's readiness gate.",
  },
  'sync-provider-ids': {
    name: 'Copy providerIDs',
    does: "Sets the MachinePool spec.providerIDList to the AzureMachinePool's: exactly what CAPI copies once the gate opens.",
  },
};

/** What a mode does to a pool whose infra object is of `kind` (an AKS pool's list is never copied). */
export function actionDoes(mode: ResyncMode, kind: InfraKind = 'AzureMachinePool'): string {
  return RESYNC_ACTIONS[mode].does.replace('AzureMachinePool', kind);
}

/** The annotation a Reconcile sets on the infra object and the MachinePool: a new value makes CAPZ and CAPI reconcile. */
export const RESYNC_ANNOTATION = 'poolscope.dev/resync-requested-at';

/** "Copy providerIDs (sync-provider-ids)": the name, with the API's identifier for whoever searches logs. */
export const actionLabel = (mode: ResyncMode) => `${RESYNC_ACTIONS[mode].name} (${mode})`;
