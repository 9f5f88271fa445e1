// CAPZ's `setProvisioningStateAndConditions` in its three generations (domain.md §2.3): what the
// AzureMachinePool's provisioningState, status.ready and ScaleSet* conditions become for a VMSS state.

export type CapzBehaviour = 'pre-1.20' | '1.26' | 'main';

export const CAPZ_BEHAVIOURS: readonly CapzBehaviour[] = ['pre-1.20', '1.26', 'main'];

/** The controller image each behaviour runs as, as the CAPZ release manifests (and staging builds) name it. */
export const CAPZ_IMAGES: Record<CapzBehaviour, string> = {
  'pre-1.20': 'registry.k8s.io/cluster-api-azure/cluster-api-azure-controller:v1.19.4',
  '1.26': 'registry.k8s.io/cluster-api-azure/cluster-api-azure-controller:v1.26.0',
  main: 'gcr.io/k8s-staging-cluster-api-azure/cluster-api-azure-controller:main',
};

/** The CAPZ controller Deployment, as `clusterctl init --infrastructure azure` creates it. */
export function capzDeployment(behaviour: CapzBehaviour): Record<string, unknown> {
  const labels = { 'cluster.x-k8s.io/provider': 'infrastructure-azure', 'control-plane': 'capz-controller-manager' };
  return {
    apiVersion: 'apps/v1', kind: 'Deployment',
    metadata: { name: 'capz-controller-manager', namespace: 'capz-system', labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: 'manager', image: CAPZ_IMAGES[behaviour] }] } },
    },
    status: { replicas: 1, readyReplicas: 1, availableReplicas: 1 },
  };
}

export interface CapzCondition {
  type: 'ScaleSetRunning' | 'ScaleSetDesiredReplicas' | 'ScaleSetModelUpdated';
  status: 'True' | 'False';
  reason?: string;
  severity?: 'Error' | 'Warning' | 'Info';
}

export interface CapzStatus {
  provisioningState: string;
  /** null = left unchanged. */
  ready: boolean | null;
  conditions: CapzCondition[];
}

const ok = (type: CapzCondition['type']): CapzCondition => ({ type, status: 'True' });

/**
 * @param vmssState the VMSS `properties.provisioningState` as Azure returns it (compared case-sensitively, as CAPZ does)
 * @param specReplicas MachinePool spec.replicas
 * @param statusReplicas the AzureMachinePool status.replicas from the previous reconcile (CAPZ sets state before replicas)
 */
export function capzProvisioningState(behaviour: CapzBehaviour, vmssState: string, specReplicas: number, statusReplicas: number): CapzStatus {
  const all = [ok('ScaleSetRunning'), ok('ScaleSetDesiredReplicas'), ok('ScaleSetModelUpdated')];
  const withCond = (c: CapzCondition) => all.map((x) => (x.type === c.type ? c : x));
  const pre = behaviour === 'pre-1.20';
  switch (vmssState) {
    case 'Succeeded':
      if (specReplicas === statusReplicas) return { provisioningState: 'Succeeded', ready: true, conditions: all };
      return {
        provisioningState: 'Updating',
        ready: !pre,
        conditions: withCond({ type: 'ScaleSetDesiredReplicas', status: 'False', reason: specReplicas > statusReplicas ? 'ScaleSetScalingUp' : 'ScaleSetScalingDown', severity: 'Info' }),
      };
    case 'Updating':
      return { provisioningState: 'Updating', ready: !pre, conditions: withCond({ type: 'ScaleSetModelUpdated', status: 'False', reason: 'ScaleSetModelOutOfDate', severity: 'Info' }) };
    case 'Creating':
      return { provisioningState: 'Creating', ready: false, conditions: withCond({ type: 'ScaleSetRunning', status: 'False', reason: 'ScaleSetCreating', severity: 'Info' }) };
    case 'Deleting':
      return { provisioningState: 'Deleting', ready: false, conditions: withCond({ type: 'ScaleSetRunning', status: 'False', reason: 'ScaleSetDeleting', severity: 'Info' }) };
    case 'Failed':
      return {
        provisioningState: 'Failed',
        ready: behaviour === '1.26' ? null : false,
        conditions: withCond({ type: 'ScaleSetRunning', status: 'False', reason: pre ? 'Failed' : 'ScaleSetProvisionFailed', severity: 'Error' }),
      };
    case 'Canceled':
    case 'Deleted':
      return { provisioningState: vmssState, ready: behaviour === 'main' ? false : pre ? false : null, conditions: withCond({ type: 'ScaleSetRunning', status: 'False', reason: vmssState, severity: 'Error' }) };
    default:
      // Unknown or differently cased states (e.g. "succeeded"): readiness left unchanged, except before 1.20.
      return { provisioningState: vmssState, ready: pre ? false : null, conditions: withCond({ type: 'ScaleSetRunning', status: 'False', reason: vmssState, severity: 'Info' }) };
  }
}
