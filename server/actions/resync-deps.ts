import 'server-only';
// What the resync service (server/actions/resync.ts) is built on, in a module of its own so that the modules it is
// split into can each take the few of these they use.

import type { KubeConfig } from '@kubernetes/client-node';
import type { AgentPoolRead, AgentPoolRef, MachinesRead } from '../azure/aks-reader';
import type { AzureRead, ScaleSetRef } from '../azure/reader';
import type { TimelineStore } from '../store/store';
import type { Access } from './identity';

export interface ResyncDeps {
  contexts: readonly string[];
  kubeconfigFor(context: string): KubeConfig;
  access: Access;
  store: TimelineStore;
  readAzure(ref: ScaleSetRef): Promise<AzureRead>;
  /** An AKS pool's agent pool, for the verdict on fresh reads (without it, AKS counts as not read). */
  readAgentPool?(ref: AgentPoolRef): Promise<AgentPoolRead>;
  /** The machines of an AKS agent pool with no scale set (type VirtualMachines): its VMs, for the same verdict. */
  readMachines?(ref: AgentPoolRef): Promise<MachinesRead>;
  /** Tells this process's live viewers that a pool's timeline changed. */
  publish(change: { poolKey: string; at: string; fields: string[] }): void;
  readOnly: boolean;
  timeoutMs: number;
  waitSeconds: number;
  log?: (line: Record<string, unknown>) => void;
  /** Limits: per user (any request) and per pool (writes), each per minute. */
  userPerMinute?: number;
  poolPerMinute?: number;
}
