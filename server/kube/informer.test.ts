// The informer against the simulated API server: paginated lists through a shared gate, watches asked with
// bookmarks and a server-side timeout as client-go asks them (bookmarks taken in stride: no reconnect, no
// relist), resumption after a watch ends, a fresh list after 410, and errors reported as state with backoff.

import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSeedSimulator } from '@/sim/kube/testing';
import type { KubeSimulator } from '@/sim/kube/simulator';
import { findByKind, type ResourceDef } from '@/sim/kube/resources';
import { until } from '../testing/sim-harness';
import type { KubeObject } from '@/lib/unstructured';
import { Informer, informerActivity, ListGate, WATCH_INACTIVITY_MS, watchQuery } from './informer';

describe('watchQuery', () => {
  it('asks for bookmarks and a server-side timeout of 5 to 10 minutes, keeping the resume point', () => {
    expect(watchQuery({ resourceVersion: '42' }, () => 0)).toEqual({ resourceVersion: '42', allowWatchBookmarks: true, timeoutSeconds: 300 });
    expect(watchQuery({ resourceVersion: '42', labelSelector: 'a' }, () => 0.999).timeoutSeconds).toBe(599);
    // The client waits out more than a bookmark interval (about a minute on real API servers) of silence.
    expect(WATCH_INACTIVITY_MS).toBeGreaterThan(120_000);
  });
});

const MP_PATH = '/apis/cluster.x-k8s.io/v1beta2/machinepools';
const AMPM_PATH = '/apis/infrastructure.cluster.x-k8s.io/v1beta1/azuremachinepoolmachines';

describe('Informer against the simulator', () => {
  let sim: KubeSimulator;
  const informers: Informer[] = [];
  beforeAll(async () => {
    sim = await startSeedSimulator({ bookmarkIntervalMs: 100, historyWindow: 50 });
  });
  afterAll(async () => {
    for (const i of informers) i.stop();
    await sim.stop();
  });

  const kubeconfig = () => {
    const kc = new KubeConfig();
    kc.loadFromFile(sim.kubeconfigPath);
    kc.setCurrentContext('mgmt-weu');
    return kc;
  };
  const make = (opts: Partial<ConstructorParameters<typeof Informer>[0]> & { path: string }) => {
    const i = new Informer({ kc: kubeconfig(), kind: 'mp', backoffMs: [50], ...opts });
    informers.push(i);
    return i;
  };

  it('keeps one watch through bookmarks and sees a change made after them', async () => {
    const informer = make({ path: MP_PATH });
    const seen: string[] = [];
    informer.on('update', (o: KubeObject) => seen.push(String(o.metadata?.annotations?.touched ?? '')));
    informer.start();
    const server = sim.cluster('mgmt-weu');
    const watches = () => server.requestCounts.get('watch') ?? 0;
    await until('the watch to open', () => (watches() > 0 ? true : undefined));
    const lists = server.requestCounts.get('list') ?? 0;
    // Several bookmark intervals go by.
    await new Promise((r) => setTimeout(r, 600));
    const MP = findByKind('cluster.x-k8s.io/v1beta2', 'MachinePool') as ResourceDef;
    const mp = server.store.get(MP, 'default', 'pool0');
    server.store.update(MP, 'default', 'pool0', { ...mp, metadata: { ...mp.metadata, annotations: { ...mp.metadata?.annotations, touched: 'yes' } } });
    await until('the change', () => (seen.includes('yes') ? true : undefined));
    expect(watches()).toBe(1);
    const q = server.watchRequests.at(-1)?.query;
    expect(q).toMatchObject({ allowWatchBookmarks: 'true', watch: 'true' });
    expect(Number(q?.timeoutSeconds)).toBeGreaterThanOrEqual(300);
    expect(Number(q?.timeoutSeconds)).toBeLessThan(600);
    expect(server.requestCounts.get('list') ?? 0).toBe(lists);
    informer.stop();
  });

  it('lists in pages through the gate, slimmed, into its owner\'s map', async () => {
    const server = sim.cluster('mgmt-weu');
    const AMPM = findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureMachinePoolMachine') as ResourceDef;
    const expected = server.store.list(AMPM).items.map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`).sort();
    expect(expected.length).toBeGreaterThan(2);
    const gate = new ListGate(1);
    const items = new Map<string, KubeObject>();
    const lists0 = server.requestCounts.get('list') ?? 0;
    const a = make({ path: AMPM_PATH, kind: 'ampm', pageSize: 2, gate, items });
    const b = make({ path: MP_PATH, gate });
    const states: string[] = [];
    const c = make({ path: AMPM_PATH, kind: 'ampm', pageSize: 2, gate, onState: (st) => states.push(st) });
    a.start();
    b.start();
    c.start();
    await until('all three listed', () => (a.lists && b.lists && c.lists ? true : undefined));
    expect([...items.keys()].sort()).toEqual(expected);
    expect(a.items).toBe(items);
    // One page per two items, for each of the two paged informers, and one list for the MachinePools.
    expect((server.requestCounts.get('list') ?? 0) - lists0).toBe(2 * Math.ceil(expected.length / 2) + 1);
    expect(gate.peak).toBe(1);
    expect(states[0]).toBe('live');
    // Slimmed: managedFields and unused metadata gone, what the model reads kept.
    const one = items.get(expected[0] as string);
    expect(one?.metadata?.managedFields).toBeUndefined();
    expect(one?.spec?.providerID).toMatch(/^azure:\/\//);
    for (const i of [a, b, c]) i.stop();
  });

  it('keeps an update the slimmed object cannot show without announcing it', async () => {
    const server = sim.cluster('mgmt-weu');
    const AMPM = findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureMachinePoolMachine') as ResourceDef;
    const informer = make({ path: AMPM_PATH, kind: 'ampm' });
    const updates: string[] = [];
    informer.on('update', (o) => updates.push(String(o.metadata?.name)));
    informer.start();
    await until('listed', () => (informer.lists ? true : undefined));
    const first = server.store.list(AMPM).items[0] as KubeObject;
    const name = String(first.metadata?.name);
    const key = `${first.metadata?.namespace}/${name}`;
    const write = (status: Record<string, unknown>) => {
      const cur = server.store.get(AMPM, String(first.metadata?.namespace), name);
      return server.store.update(AMPM, String(first.metadata?.namespace), name, { ...cur, status: { ...cur.status, ...status } }, { subresource: 'status' });
    };
    // Only a condition's time changes: the new resourceVersion is kept, nobody is told.
    const quiet = write({ conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date().toISOString() }] });
    await until('the quiet update stored', () => (informer.items.get(key)?.metadata?.resourceVersion === quiet.metadata?.resourceVersion ? true : undefined));
    expect(updates).toEqual([]);
    write({ provisioningState: 'Failed' });
    await until('the real update', () => (updates.includes(name) ? true : undefined));
    informer.stop();
  });

  it('resumes a watch the server ended, and lists afresh after 410, losing no change', async () => {
    const server = sim.cluster('mgmt-weu');
    const MP = findByKind('cluster.x-k8s.io/v1beta2', 'MachinePool') as ResourceDef;
    const informer = make({ path: MP_PATH });
    const events: string[] = [];
    informer.on('add', (o) => events.push(`add ${o.metadata?.name}`));
    informer.on('delete', (o) => events.push(`delete ${o.metadata?.name}`));
    informer.start();
    await until('listed', () => (informer.lists ? true : undefined));
    const before = informerActivity().get('mp');
    const touch = (v: string) => {
      const mp = server.store.get(MP, 'default', 'pool0');
      server.store.update(MP, 'default', 'pool0', { ...mp, metadata: { ...mp.metadata, annotations: { ...mp.metadata?.annotations, step: v } } });
    };
    const step = () => informer.items.get('default/pool0')?.metadata?.annotations?.step;
    // The server ends the watch; a change made before the informer watches again still arrives, with no list.
    server.dropWatches();
    touch('after-drop');
    await until('the change after the drop', () => (step() === 'after-drop' ? true : undefined));
    expect(informer.lists).toBe(1);
    // While the server is away, a pool is deleted and the history compacted past the informer's resume point:
    // it gets 410, lists again and sees the deletion it missed.
    const extra = server.store.create(MP, 'default', { ...server.store.get(MP, 'default', 'pool0'), metadata: { name: 'pool-410', namespace: 'default' } });
    await until('the new pool', () => (informer.items.has('default/pool-410') ? true : undefined));
    const watches = server.requestCounts.get('watch') ?? 0;
    server.setAvailable(false);
    try {
      server.store.delete(MP, 'default', String(extra.metadata?.name));
      touch('after-410');
      server.store.compact();
      touch('after-410');
    } finally {
      server.setAvailable(true);
    }
    await until('the deletion and the change', () => (!informer.items.has('default/pool-410') && step() === 'after-410' ? true : undefined));
    expect(informer.lists).toBeGreaterThanOrEqual(2);
    expect(events).toContain('delete pool-410');
    expect(server.requestCounts.get('watch') ?? 0).toBeGreaterThan(watches);
    // The process's activity counters saw it: the 410, the list after it with every pool it brought, the watches
    // and their events (other informers of this file count too, so only what this one must have added is checked).
    const after = informerActivity().get('mp');
    expect(before).toBeDefined();
    expect(after?.gone).toBeGreaterThan(before?.gone ?? Infinity);
    expect(after?.lists).toBeGreaterThan(before?.lists ?? Infinity);
    expect((after?.listedObjects ?? 0) - (before?.listedObjects ?? 0)).toBeGreaterThanOrEqual(informer.items.size);
    expect(after?.watches).toBeGreaterThan(before?.watches ?? Infinity);
    expect(after?.watchEvents).toBeGreaterThan(before?.watchEvents ?? Infinity);
    informer.stop();
  });

  it('does not spin on watches the server ends at once with nothing in them', async () => {
    const server = sim.cluster('mgmt-weu');
    const informer = make({ path: MP_PATH, backoffMs: [200] });
    informer.start();
    await until('listed', () => (informer.lists ? true : undefined));
    const w0 = server.requestCounts.get('watch') ?? 0;
    const dropper = setInterval(() => server.dropWatches(), 5);
    await new Promise((r) => setTimeout(r, 1000));
    clearInterval(dropper);
    // About one watch per 200 ms backoff; without the guard, hundreds.
    expect((server.requestCounts.get('watch') ?? 0) - w0).toBeLessThanOrEqual(8);
    informer.stop();
  });

  it('reports an unreachable server as stale, backs off, and is live again when it returns', async () => {
    const server = sim.cluster('mgmt-weu');
    const states: string[] = [];
    let restarts = 0;
    const informer = make({ path: MP_PATH, onState: (st, err) => states.push(err ? `${st}: ${err}` : st), onRestart: () => restarts++ });
    server.setAvailable(false);
    try {
      informer.start();
      await until('stale', () => (states.some((s) => s.startsWith('stale')) ? true : undefined));
      expect(informer.lists).toBe(0);
    } finally {
      server.setAvailable(true);
    }
    await until('live again', () => (states.at(-1) === 'live' && informer.lists === 1 ? true : undefined));
    expect(restarts).toBeGreaterThanOrEqual(1);
    informer.stop();
  });
});
