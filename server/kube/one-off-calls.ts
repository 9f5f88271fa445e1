import 'server-only';
// A context source's one-off calls (beside its list+watch informers) share one deadline. The CAPZ controller's
// version is one of them: read from its Deployment's image tag, it decides which readiness rules apply.

import type { KubeConfig } from '@kubernetes/client-node';
import { AppsV1Api } from '@kubernetes/client-node';
import { callOptions } from './calls';

/** The deadline of a one-off call (discovery, a Secret, the CAPZ Deployment). */
export const CALL_TIMEOUT_MS = 10_000;

/** The tag of an image reference ("…/cluster-api-azure-controller:v1.26.0" → "v1.26.0"); null for a digest or none. */
export function imageTag(image: string | undefined): string | null {
  if (!image || image.includes('@')) return null;
  const last = image.split('/').pop() ?? '';
  const i = last.lastIndexOf(':');
  return i >= 0 ? last.slice(i + 1) || null : null;
}

/**
 * Reads the CAPZ controller image's tag: the Deployment `capz-system/capz-controller-manager` that `clusterctl init`
 * creates, else any Deployment labelled as the Azure infrastructure provider. Unknown (null) when neither can
 * be read; the diagnosis then gives advice that holds for every CAPZ version.
 */
export async function readCapzVersion(kc: KubeConfig): Promise<string | null> {
  const apps = kc.makeApiClient(AppsV1Api);
  let image: string | undefined;
  try {
    const d = await apps.readNamespacedDeployment(
      { name: 'capz-controller-manager', namespace: 'capz-system' },
      callOptions(CALL_TIMEOUT_MS),
    );
    image =
      d.spec?.template.spec?.containers.find((c) => c.name === 'manager')?.image ??
      d.spec?.template.spec?.containers[0]?.image;
  } catch {
    try {
      const list = await apps.listDeploymentForAllNamespaces(
        { labelSelector: 'cluster.x-k8s.io/provider=infrastructure-azure' },
        callOptions(CALL_TIMEOUT_MS),
      );
      image = list.items[0]?.spec?.template.spec?.containers.find((c) => c.name === 'manager')?.image;
    } catch {
      image = undefined;
    }
  }
  return imageTag(image);
}
