import { z } from 'zod';

/** Path parameters of a pool: a kubeconfig context, a namespace and a MachinePool name. */
export const poolParams = z.object({
  context: z.string().min(1).max(253),
  namespace: z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'must be a Kubernetes namespace name'),
  name: z.string().regex(/^[a-z0-9]([-.a-z0-9]{0,251}[a-z0-9])?$/, 'must be a Kubernetes object name'),
});
