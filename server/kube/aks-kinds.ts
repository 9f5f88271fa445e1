import 'server-only';
// Which AKS pool kinds a management cluster serves (docs/domain.md, "AKS pool objects in the management cluster"):
// CAPZ's AzureManagedMachinePool and AzureASOManagedMachinePool, and ASO's ManagedClustersAgentPool. A cluster
// without AKS pools need not have their CRDs (nor ASO at all); poolscope watches what is there, and nothing else.

import { ApisApi, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import type { ConfigurationOptions, ObservableMiddleware } from '@kubernetes/client-node';

export interface AksKinds {
  /** azuremanagedmachinepools in infrastructure.cluster.x-k8s.io/v1beta1. */
  ammp: boolean;
  /** The version of azureasomanagedmachinepools to read (v1beta1, else v1alpha1), or null. */
  asomp: string | null;
  /** The version of ASO's managedclustersagentpools to read (the group's preferred), or null. */
  asoap: string | null;
}

export const NO_AKS_KINDS: AksKinds = { ammp: false, asomp: null, asoap: null };

const INFRA = 'infrastructure.cluster.x-k8s.io';
const ASO = 'containerservice.azure.com';

/** What the discovery documents say: the groups with their versions, and the resources of CAPZ's v1beta1. */
export function aksKindsOf(
  groups: { name: string; versions: { version: string }[]; preferredVersion?: { version: string } }[],
  infraResources: (version: string) => string[] | null,
  asoResources: (version: string) => string[] | null,
): AksKinds {
  const infra = groups.find((g) => g.name === INFRA);
  const served = (v: string) => infra?.versions.some((x) => x.version === v) ?? false;
  const infraV1beta1 = served('v1beta1') ? (infraResources('v1beta1') ?? []) : [];
  let asomp: string | null = infraV1beta1.includes('azureasomanagedmachinepools') ? 'v1beta1' : null;
  if (!asomp && served('v1alpha1') && (infraResources('v1alpha1') ?? []).includes('azureasomanagedmachinepools'))
    asomp = 'v1alpha1';
  const aso = groups.find((g) => g.name === ASO);
  const asoVersion = aso?.preferredVersion?.version ?? aso?.versions[0]?.version ?? null;
  return {
    ammp: infraV1beta1.includes('azuremanagedmachinepools'),
    asomp,
    asoap: asoVersion && (asoResources(asoVersion) ?? []).includes('managedclustersagentpools') ? asoVersion : null,
  };
}

/** Reads the discovery documents and says which AKS kinds the cluster serves. */
export async function servedAksKinds(
  kc: KubeConfig,
  options?: ConfigurationOptions<ObservableMiddleware>,
): Promise<AksKinds> {
  const groups = (await kc.makeApiClient(ApisApi).getAPIVersions(options)).groups;
  const custom = kc.makeApiClient(CustomObjectsApi);
  const wanted = [
    ...(groups.some((g) => g.name === INFRA) ? [`${INFRA}/v1beta1`, `${INFRA}/v1alpha1`] : []),
    ...groups
      .filter((g) => g.name === ASO)
      .map((g) => `${ASO}/${g.preferredVersion?.version ?? g.versions[0]?.version}`),
  ];
  const found = new Map<string, string[] | null>();
  await Promise.all(
    wanted.map(async (gv) => {
      const [group, version] = gv.split('/') as [string, string];
      const served = groups.find((g) => g.name === group)?.versions.some((v) => v.version === version);
      if (!served) return;
      const list = await custom.getAPIResources({ group, version }, options);
      found.set(
        gv,
        list.resources.map((r) => r.name),
      );
    }),
  );
  return aksKindsOf(
    groups,
    (v) => found.get(`${INFRA}/${v}`) ?? null,
    (v) => found.get(`${ASO}/${v}`) ?? null,
  );
}
