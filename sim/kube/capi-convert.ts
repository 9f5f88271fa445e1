// The conversion webhook the simulated API server applies to CAPI kinds: lib/capi-conversion.ts does the work.

import { convertCapiObject, type CapiVersion } from '../../lib/capi-conversion';
import type { KubeObject } from '../../lib/unstructured';

export function convertCapi(obj: KubeObject, toVersion: string): KubeObject {
  if (toVersion !== 'v1beta1' && toVersion !== 'v1beta2') throw new Error(`cannot convert to ${toVersion}`);
  return convertCapiObject(obj, toVersion as CapiVersion);
}
