// Several replicas: with leader election only the Lease holder collects; the others serve from the shared
// PostgreSQL and hear of changes through LISTEN/NOTIFY.

import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startSimulation } from '@/sim/index';
import { readScenario } from '@/sim/world/scenario';
import { kubectl } from '@/sim/kube/testing';
import { parseEnv } from '../env';
import { createTestDatabase } from '../testing/postgres';
import { until } from '../testing/sim-harness';
import { startRuntime, type Runtime } from '../runtime';

const testDb = await createTestDatabase('HA tests');
const pgAvailable = testDb !== null;

const stops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const s of stops.reverse()) await s();
  await testDb?.drop();
});

describe.skipIf(!pgAvailable)(
  `leader election and shared PostgreSQL${pgAvailable ? '' : ' (skipped: no PostgreSQL)'}`,
  () => {
    it('lets exactly one replica collect, and tells the other about its changes', async () => {
      const sim = await startSimulation(
        readScenario(path.resolve(import.meta.dirname, '..', '..', 'sim', 'scenarios', 's05-flexible.yaml')),
        { log: () => {} },
      );
      stops.push(() => sim.stop());
      const saved = { ...process.env };
      const runtimes: Runtime[] = [];
      try {
        for (const pod of ['replica-a', 'replica-b']) {
          const e = parseEnv({
            ...process.env,
            ...sim.env,
            DATABASE_URL: testDb?.url,
            POOLSCOPE_LEADER_ELECTION: 'true',
            POOLSCOPE_LEADER_NAMESPACE: 'default',
            POD_NAME: pod,
          });
          Object.assign(process.env, sim.env);
          const rt = await startRuntime(e);
          runtimes.push(rt);
          stops.push(() => rt.stop());
        }
      } finally {
        process.env = saved;
      }
      const leader = await until('a leader', () => runtimes.find((r) => r.collector !== null));
      await new Promise((r) => setTimeout(r, 1500));
      expect(runtimes.filter((r) => r.collector !== null)).toHaveLength(1);
      const follower = runtimes.find((r) => r !== leader) as Runtime;
      // Only the leader prunes (one pruner on the shared database).
      expect(leader.retention).toMatchObject({ retentionDays: 30 });
      expect(follower.retention).toBeNull();
      const lease = await kubectl(sim.kubeconfigPath, [
        'get',
        'lease',
        'poolscope-collector',
        '-n',
        'default',
        '-o',
        'jsonpath={.spec.holderIdentity}',
      ]);
      expect(['replica-a', 'replica-b']).toContain(lease.stdout);
      const heard: string[] = [];
      follower.bus.on('change', (c: { poolKey: string }) => heard.push(c.poolKey));
      sim.runStep({ at: 0, line: 0, scale: { cluster: 'mgmt-weu', name: 'pool0', replicas: 5 } });
      await until('the follower to hear of the change', () =>
        heard.includes('mgmt-weu/default/pool0') ? true : undefined,
      );
      // The follower reads the same data from the shared store.
      const seen = await until('the change in the shared store', async () => {
        const p = await follower.store.currentPool('mgmt-weu/default/pool0');
        return p?.summary.replicas.desired === 5 ? p : undefined;
      });
      expect(seen.summary.key).toBe('mgmt-weu/default/pool0');
      // Failover: the leader shuts down; the follower takes the released Lease and collects.
      await leader.stop();
      await until('the follower to lead', () => follower.collector ?? undefined, 15_000);
      expect(follower.retention).not.toBeNull();
      await until('the new leader to prune', () => (follower.retention?.pruned ? true : undefined));
      sim.runStep({ at: 0, line: 0, scale: { cluster: 'mgmt-weu', name: 'pool0', replicas: 4 } });
      await until('the new leader to record a change', async () => {
        const p = await follower.store.currentPool('mgmt-weu/default/pool0');
        return p?.summary.replicas.desired === 4 ? p : undefined;
      });
    }, 60_000);
  },
);
