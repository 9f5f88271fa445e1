// Leader election against the simulated API server: a dead leader's Lease is taken over only once it has
// expired, and a leader that shuts down cleanly hands the Lease over at once.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoordinationV1Api, KubeConfig } from '@kubernetes/client-node';
import { startSeedSimulator } from '@/sim/kube/testing';
import type { KubeSimulator } from '@/sim/kube/simulator';
import { LeaderElector } from './leader';

let sim: KubeSimulator;
let kc: KubeConfig;
beforeAll(async () => {
  sim = await startSeedSimulator();
  kc = new KubeConfig();
  kc.loadFromFile(sim.kubeconfigPath);
  kc.setCurrentContext('mgmt-weu');
});
afterAll(() => sim.stop());

const T0 = new Date('2026-11-29T12:00:00Z').getTime();
function elector(identity: string, lease: string, clock: { t: number }, events: string[] = []): LeaderElector {
  return new LeaderElector({
    kubeconfig: kc,
    namespace: 'default',
    name: lease,
    identity,
    leaseSeconds: 15,
    now: () => new Date(clock.t),
    onStartedLeading: () => void events.push(`${identity} started`),
    onStoppedLeading: () => void events.push(`${identity} stopped`),
  });
}

describe('leader election', () => {
  it('a follower takes the Lease of a leader that died only after it expired', async () => {
    const clock = { t: T0 };
    const a = elector('replica-a', 'crash', clock);
    const b = elector('replica-b', 'crash', clock);
    expect(await a.tryAcquireOrRenew()).toBe(true);
    expect(await b.tryAcquireOrRenew()).toBe(false);
    // replica-a dies here: it renews no more.
    clock.t = T0 + 14_000;
    expect(await b.tryAcquireOrRenew()).toBe(false);
    clock.t = T0 + 16_000;
    expect(await b.tryAcquireOrRenew()).toBe(true);
    const lease = await kc
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: 'crash', namespace: 'default' });
    expect(lease.spec?.holderIdentity).toBe('replica-b');
    expect(lease.spec?.leaseTransitions).toBe(1);
    // The old leader, back from a pause, must not think it still leads.
    expect(await a.tryAcquireOrRenew()).toBe(false);
  });

  it('a leader that stops cleanly releases the Lease, so a follower leads at its next attempt', async () => {
    const clock = { t: T0 };
    const events: string[] = [];
    const a = elector('replica-a', 'clean', clock, events);
    a.start();
    for (let i = 0; i < 50 && !a.isLeader; i++) await new Promise((r) => setTimeout(r, 50));
    expect(a.isLeader).toBe(true);
    await a.stop();
    const b = elector('replica-b', 'clean', clock, events);
    expect(await b.tryAcquireOrRenew()).toBe(true);
    expect(events).toEqual(['replica-a started', 'replica-a stopped']);
  });
});
