// The informer against the simulated API server: paginated lists through a shared gate, watches asked with
// bookmarks and a server-side timeout as client-go asks them (bookmarks taken in stride: no reconnect, no
// relist), resumption after a watch ends, a fresh list after 410, and errors reported as state with backoff.
// Long because the cases share one simulated API server, and the informer is one loop seen from outside.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSeedSimulator } from '@/sim/kube/testing';
import type { KubeSimulator } from '@/sim/kube/simulator';
import { findByKind, type ResourceDef } from '@/sim/kube/resources';
import { until } from '../testing/sim-harness';
import { isInterned } from '@/lib/slim';
import type { KubeObject } from '@/lib/unstructured';
import { Informer, informerActivity, ListGate, WATCH_INACTIVITY_MS, watchQuery } from './informer';
import { LineSplitter } from './watch-stream';

describe('watchQuery', () => {
  it('asks for bookmarks and a server-side timeout of 5 to 10 minutes, keeping the resume point', () => {
    expect(watchQuery({ resourceVersion: '42' }, () => 0)).toEqual({
      resourceVersion: '42',
      allowWatchBookmarks: true,
      timeoutSeconds: 300,
    });
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
    server.store.update(MP, 'default', 'pool0', {
      ...mp,
      metadata: { ...mp.metadata, annotations: { ...mp.metadata?.annotations, touched: 'yes' } },
    });
    await until('the change', () => (seen.includes('yes') ? true : undefined));
    expect(watches()).toBe(1);
    const q = server.watchRequests.at(-1)?.query;
    expect(q).toMatchObject({ allowWatchBookmarks: 'true', watch: 'true' });
    expect(Number(q?.timeoutSeconds)).toBeGreaterThanOrEqual(300);
    expect(Number(q?.timeoutSeconds)).toBeLessThan(600);
    expect(server.requestCounts.get('list') ?? 0).toBe(lists);
    informer.stop();
  });

  it("lists in pages through the gate, slimmed, into its owner's map", async () => {
    const server = sim.cluster('mgmt-weu');
    const AMPM = findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureMachinePoolMachine') as ResourceDef;
    const expected = server.store
      .list(AMPM)
      .items.map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`)
      .sort();
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
      return server.store.update(
        AMPM,
        String(first.metadata?.namespace),
        name,
        { ...cur, status: { ...cur.status, ...status } },
        { subresource: 'status' },
      );
    };
    // Only a condition's time changes: the watch delivers it, the cached object stays the one listed, nobody is told.
    const cached = informer.items.get(key);
    expect(cached).toBeDefined();
    const events0 = informerActivity().get('ampm')?.watchEvents ?? 0;
    write({ conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date().toISOString() }] });
    await until('the quiet update delivered', () =>
      (informerActivity().get('ampm')?.watchEvents ?? 0) > events0 ? true : undefined,
    );
    expect(informer.items.get(key)).toBe(cached);
    expect(updates).toEqual([]);
    write({ provisioningState: 'Failed' });
    await until('the real update', () => (updates.includes(name) ? true : undefined));
    // The watch delivers in order: by the real update the quiet one was seen, and only the real one announced.
    expect(updates.filter((n) => n === name)).toEqual([name]);
    expect(informer.items.get(key)).not.toBe(cached);
    expect(informer.items.get(key)?.status?.provisioningState).toBe('Failed');
    informer.stop();
  });

  it("forgets a deleted VM object's ID in lib/'s shared tables", async () => {
    const server = sim.cluster('mgmt-weu');
    const AMPM = findByKind('infrastructure.cluster.x-k8s.io/v1beta1', 'AzureMachinePoolMachine') as ResourceDef;
    const informer = make({ path: AMPM_PATH, kind: 'ampm' });
    const deleted: string[] = [];
    informer.on('delete', (o) => deleted.push(String(o.metadata?.name)));
    informer.start();
    await until('listed', () => (informer.lists ? true : undefined));
    const model = server.store.list(AMPM).items[0] as KubeObject;
    // No finalizers: the delete removes it at once.
    const { uid: _uid, resourceVersion: _rv, creationTimestamp: _ct, finalizers: _f, ...meta } = model.metadata ?? {};
    const id = `azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/gone/virtualMachines/${Date.now()}`;
    server.store.create(AMPM, String(meta.namespace), {
      ...model,
      metadata: { ...meta, name: 'ampm-gone' },
      spec: { ...model.spec, providerID: id },
    });
    await until('the new AMPM', () => (informer.items.get(`${meta.namespace}/ampm-gone`) ? true : undefined));
    expect(isInterned(id)).toBe(true);
    server.store.delete(AMPM, String(meta.namespace), 'ampm-gone');
    await until('the delete', () => (deleted.includes('ampm-gone') ? true : undefined));
    expect(isInterned(id)).toBe(false);
    informer.stop();
  });

  it("forgets the IDs a MachinePool's list update drops", async () => {
    const server = sim.cluster('mgmt-weu');
    const MP = findByKind('cluster.x-k8s.io/v1beta2', 'MachinePool') as ResourceDef;
    const informer = make({ path: MP_PATH });
    informer.start();
    await until('listed', () => (informer.lists ? true : undefined));
    const id = `azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/dropped/virtualMachines/${Date.now()}`;
    const list = () => informer.items.get('default/pool0')?.spec?.providerIDList as string[] | undefined;
    const setList = (f: (ids: string[]) => string[]) => {
      const mp = server.store.get(MP, 'default', 'pool0');
      server.store.update(MP, 'default', 'pool0', {
        ...mp,
        spec: { ...mp.spec, providerIDList: f((mp.spec?.providerIDList as string[] | undefined) ?? []) },
      });
    };
    setList((ids) => [...ids, id]);
    await until('the ID listed', () => (list()?.includes(id) ? true : undefined));
    expect(isInterned(id)).toBe(true);
    setList((ids) => ids.filter((x) => x !== id));
    await until('the ID dropped', () => (list() && !list()?.includes(id) ? true : undefined));
    expect(isInterned(id)).toBe(false);
    // The IDs the list keeps stay shared.
    expect(list()?.every(isInterned)).toBe(true);
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
      server.store.update(MP, 'default', 'pool0', {
        ...mp,
        metadata: { ...mp.metadata, annotations: { ...mp.metadata?.annotations, step: v } },
      });
    };
    const step = () => informer.items.get('default/pool0')?.metadata?.annotations?.step;
    // The server ends the watch; a change made before the informer watches again still arrives, with no list.
    server.dropWatches();
    touch('after-drop');
    await until('the change after the drop', () => (step() === 'after-drop' ? true : undefined));
    expect(informer.lists).toBe(1);
    // While the server is away, a pool is deleted and the history compacted past the informer's resume point:
    // it gets 410, lists again and sees the deletion it missed.
    const extra = server.store.create(MP, 'default', {
      ...server.store.get(MP, 'default', 'pool0'),
      metadata: { name: 'pool-410', namespace: 'default' },
    });
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
    await until('the deletion and the change', () =>
      !informer.items.has('default/pool-410') && step() === 'after-410' ? true : undefined,
    );
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

  it('is live again when a watch resumes after an outage, though nothing changed meanwhile', async () => {
    // A server with a real API server's bookmark interval (a minute): no bookmark comes within the test.
    const quiet = await startSeedSimulator({});
    const server = quiet.cluster('mgmt-weu');
    const states: string[] = [];
    const kc = new KubeConfig();
    kc.loadFromFile(quiet.kubeconfigPath);
    kc.setCurrentContext('mgmt-weu');
    const informer = make({ kc, path: MP_PATH, backoffMs: [200], onState: (st) => states.push(st) });
    informer.start();
    await until('listed', () => (informer.lists ? true : undefined));
    server.setAvailable(false);
    try {
      await until('stale', () => (states.at(-1) === 'stale' ? true : undefined));
    } finally {
      server.setAvailable(true);
    }
    // No list (its cache is current) and no event: the watch taken from its resourceVersion says it is back.
    try {
      await until('live again', () => (states.at(-1) === 'live' ? true : undefined), 5000);
      expect(informer.lists).toBe(1);
    } finally {
      informer.stop();
      await quiet.stop();
    }
  });

  it('reports an unreachable server as stale, backs off, and is live again when it returns', async () => {
    const server = sim.cluster('mgmt-weu');
    const states: string[] = [];
    let restarts = 0;
    const informer = make({
      path: MP_PATH,
      onState: (st, err) => states.push(err ? `${st}: ${err}` : st),
      onRestart: () => restarts++,
    });
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

describe('LineSplitter', () => {
  const split = (chunks: Buffer[]) => {
    const out: string[] = [];
    const s = new LineSplitter();
    for (const c of chunks) s.push(c, (l) => out.push(l));
    s.end((l) => out.push(l));
    return out;
  };

  it('gives each line whole however the chunks cut it, a character cut in two included', () => {
    const text = '{"a":"één"}\n{"b":"ß→✓"}\r\n\n{"c":3}';
    const bytes = Buffer.from(text, 'utf8');
    const want = ['{"a":"één"}', '{"b":"ß→✓"}\r', '{"c":3}'];
    // Every way of cutting it in two and in three (many cut inside a multi-byte character).
    for (let i = 0; i <= bytes.length; i++) {
      expect(split([bytes.subarray(0, i), bytes.subarray(i)])).toEqual(want);
      for (let j = i; j <= bytes.length; j += 3)
        expect(split([bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)])).toEqual(want);
    }
    // Byte by byte.
    expect(split([...bytes].map((b) => Buffer.from([b])))).toEqual(want);
  });

  it('gives nothing for blank input and keeps an unfinished line until the end', () => {
    expect(split([Buffer.from('\n\n  \n')])).toEqual([]);
    const out: string[] = [];
    const s = new LineSplitter();
    s.push(Buffer.from('{"x":'), (l) => out.push(l));
    expect(out).toEqual([]);
    s.push(Buffer.from('1}\n{"y"'), (l) => out.push(l));
    expect(out).toEqual(['{"x":1}']);
  });
});

describe('Informer against a plain HTTP server', () => {
  // What the simulator cannot be made to do: send a line that is not JSON, or fall silent mid-watch.
  let server: http.Server;
  let base = '';
  // Each test watches a path of its own: a request an earlier test's informer had in flight when it stopped
  // cannot count as another's.
  const watchBodies = new Map<string, (res: http.ServerResponse) => void>();
  const watchCounts = new Map<string, number>();
  const watches = (path: string) => watchCounts.get(path) ?? 0;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      res.setHeader('Content-Type', 'application/json');
      if (url.searchParams.get('watch') === 'true') {
        watchCounts.set(url.pathname, watches(url.pathname) + 1);
        (watchBodies.get(url.pathname) ?? ((r) => r.end()))(res);
        return;
      }
      res.end(
        JSON.stringify({
          kind: 'List',
          metadata: { resourceVersion: '10' },
          items: [{ metadata: { name: 'a', namespace: 'n', resourceVersion: '10' } }],
        }),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  const kubeconfig = () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: base, skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return kc;
  };

  it('ends a watch that sends a line that is not JSON with an error saying so, and resumes from before it', async () => {
    const path = '/apis/x/v1/not-json';
    const rvs: string[] = [];
    watchBodies.set(path, (res) => {
      rvs.push(String(new URL(`http://x${res.req.url}`).searchParams.get('resourceVersion')));
      res.write(
        `${JSON.stringify({ type: 'MODIFIED', object: { metadata: { name: 'a', namespace: 'n', resourceVersion: '11' }, spec: { x: 1 } } })}\n`,
      );
      res.write('<html>not json</html>\n');
    });
    const states: string[] = [];
    const informer = new Informer({
      kc: kubeconfig(),
      path,
      kind: 'mp',
      backoffMs: [50],
      onState: (st, err) => states.push(err ? `${st}: ${err}` : st),
    });
    informer.start();
    try {
      await until('stale', () => states.find((s) => s.startsWith('stale')));
      // Said in poolscope's words: what the server sent is for the log, not for readers.
      expect(states.find((s) => s.startsWith('stale'))).toBe(
        'stale: watch /apis/x/v1/not-json: the server sent a line that is not JSON',
      );
      await until('a second watch', () => (watches(path) >= 2 ? true : undefined));
      // The event before the bad line was taken; the next watch resumes after it.
      expect(rvs.slice(0, 2)).toEqual(['10', '11']);
      expect(informer.items.get('n/a')?.spec).toEqual({ x: 1 });
    } finally {
      informer.stop();
    }
  });

  it('ends a watch whose handler throws with that error, the event coming again on the next watch', async () => {
    const path = '/apis/x/v1/throwing';
    watchBodies.set(path, (res) =>
      res.end(
        `${JSON.stringify({ type: 'MODIFIED', object: { metadata: { name: 'a', namespace: 'n', resourceVersion: '12' }, spec: { x: 2 } } })}\n`,
      ),
    );
    const states: string[] = [];
    let calls = 0;
    const informer = new Informer({
      kc: kubeconfig(),
      path,
      kind: 'mp',
      backoffMs: [50],
      onState: (st, err) => states.push(err ? `${st}: ${err}` : st),
    });
    informer.on('update', () => {
      calls++;
      if (calls === 1) throw new Error('handler broke');
    });
    informer.start();
    try {
      await until('the update handled', () => (calls >= 2 ? true : undefined));
      expect(states).toContain('stale: /apis/x/v1/throwing: failed (the server log has the details)');
    } finally {
      informer.stop();
    }
  });

  it('gives up on a watch that stays silent, as a timeout, and resumes at once', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const path = '/apis/x/v1/silent';
    watchBodies.set(path, (res) => res.write('\n')); // headers and a byte, then nothing
    const states: string[] = [];
    let restarts = 0;
    const informer = new Informer({
      kc: kubeconfig(),
      path,
      kind: 'mp',
      backoffMs: [50],
      onState: (st, err) => states.push(err ? `${st}: ${err}` : st),
      onRestart: () => restarts++,
    });
    informer.start();
    try {
      await vi.waitFor(() => expect(watches(path)).toBe(1));
      await vi.advanceTimersByTimeAsync(WATCH_INACTIVITY_MS - 1000);
      expect(watches(path)).toBe(1);
      await vi.advanceTimersByTimeAsync(2000);
      await vi.waitFor(() => expect(watches(path)).toBe(2));
      // A silent connection is not an error of the source: no stale state, no restart counted.
      expect(states.filter((s) => s !== 'live')).toEqual([]);
      expect(restarts).toBe(0);
    } finally {
      informer.stop();
      vi.useRealTimers();
    }
  });
});

describe('Informer facing a hostile or hung server', () => {
  // A server that answers lists as each test says (by path), and watches with nothing.
  let server: http.Server;
  let base = '';
  const lists = new Map<string, (res: http.ServerResponse) => void>();
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.searchParams.get('watch') === 'true') return void res.end();
      (lists.get(url.pathname) ?? ((r) => r.end(JSON.stringify({ metadata: { resourceVersion: '1' }, items: [] }))))(
        res,
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  const informerOn = (path: string, extra: Partial<ConstructorParameters<typeof Informer>[0]> = {}) => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: base, skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const states: string[] = [];
    const informer = new Informer({
      kc,
      path,
      kind: 'mp',
      backoffMs: [50],
      onState: (st, err) => states.push(err ? `${st}: ${err}` : st),
      ...extra,
    });
    return { informer, states };
  };

  it('shows an error answer by its status only, never the text the server sent', async () => {
    lists.set('/apis/x/v1/forbidden', (res) => {
      res.statusCode = 403;
      res.end(JSON.stringify({ kind: 'Status', reason: 'Forbidden', message: 'Call +1-555-0100 now: <b>urgent</b>' }));
    });
    const { informer, states } = informerOn('/apis/x/v1/forbidden');
    informer.start();
    try {
      const stale = await until('stale', () => states.find((s) => s.startsWith('stale')));
      expect(stale).toBe(
        "stale: list /apis/x/v1/forbidden: HTTP 403 Forbidden: poolscope's identity may not do this (its RBAC)",
      );
    } finally {
      informer.stop();
    }
  });

  it('stops reading a list page over its ceiling and says so', async () => {
    let sent = 0;
    lists.set('/apis/x/v1/huge', (res) => {
      // An endless page: the informer must stop reading, not hold it.
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const more = () => {
        while (sent < 64 * 2 ** 20 && res.write(chunk)) sent += chunk.length;
        if (sent < 64 * 2 ** 20) res.once('drain', more);
        else res.end();
      };
      res.on('close', () => res.removeAllListeners('drain'));
      res.write('{"items":[');
      more();
    });
    const { informer, states } = informerOn('/apis/x/v1/huge', { maxPageBytes: 2 ** 20 });
    informer.start();
    try {
      const stale = await until('stale', () => states.find((s) => s.startsWith('stale')));
      expect(stale).toBe('stale: list /apis/x/v1/huge: a page of the answer is over 1 MiB');
      expect(sent).toBeLessThan(32 * 2 ** 20);
    } finally {
      informer.stop();
    }
  });

  it('ends a watch whose event grows past its ceiling without a newline', () => {
    const s = new LineSplitter(1024, 'watch /x');
    const lines: string[] = [];
    s.push(Buffer.alloc(600, 0x61), (l) => lines.push(l));
    expect(() => s.push(Buffer.alloc(600, 0x61), (l) => lines.push(l))).toThrow('watch /x: an event is over 1 KiB');
    // A whole line over the ceiling in one chunk is refused too; lines within it still pass.
    expect(() => new LineSplitter(10).push(Buffer.from('x'.repeat(20) + '\n'), () => {})).toThrow(/an event is over/);
    const ok: string[] = [];
    new LineSplitter(10).push(Buffer.from('{"a":1}\n{"b":2}\n'), (l) => ok.push(l));
    expect(ok).toEqual(['{"a":1}', '{"b":2}']);
  });

  it('lets another cluster list while one server never answers: a hung list holds no place at the gate', async () => {
    const hung: http.ServerResponse[] = [];
    lists.set('/apis/x/v1/hung', (res) => void hung.push(res));
    const gate = new ListGate(1);
    const a = informerOn('/apis/x/v1/hung', { gate });
    const b = informerOn('/apis/x/v1/fine', { gate });
    a.informer.start();
    await until('the hung list asked', () => (hung.length > 0 ? true : undefined));
    b.informer.start();
    try {
      await until('the other listed', () => (b.states.includes('live') ? true : undefined), 3000);
      expect(a.states).toEqual([]);
    } finally {
      a.informer.stop();
      b.informer.stop();
      for (const r of hung) r.destroy();
    }
  });
});
