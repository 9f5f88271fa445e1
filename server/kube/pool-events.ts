import 'server-only';
// Kubernetes Events about a pool's objects: the Event informer (Events are not kept, only their arrival matters),
// the pools each Event is about, and those parked until their object is cached.

import type { KubeConfig } from '@kubernetes/client-node';
import { AMPM_POOL_LABEL, MACHINE_POOL_LABEL as POOL_LABEL, nameOf } from '@/lib/slim';
import type { KubeObject } from '@/lib/unstructured';
import { EventMemory, latestEventTime } from './event-memory';
import { Informer } from './informer';
import type { KindName, PoolIndex } from './pool-index';

/** A Kubernetes Event about one of a pool's objects. */
export interface PoolEvent {
  uid: string;
  reason: string;
  message: string;
  type: string;
  object: string;
  time: string;
  /** How many times it happened so far (Event.count). */
  count: number;
}

/** The Event `involvedObject.kind` of each cached kind that Events are about. */
const EVENT_KIND_OF: Partial<Record<KindName, string>> = {
  mp: 'MachinePool',
  amp: 'AzureMachinePool',
  ampm: 'AzureMachinePoolMachine',
  machine: 'Machine',
  ammp: 'AzureManagedMachinePool',
  asomp: 'AzureASOManagedMachinePool',
};

/** The kinds whose Events are recorded. */
const EVENT_KINDS = new Set(Object.values(EVENT_KIND_OF));

/** Events waiting for their object, at most (see PoolEvents' `parked`). */
const PARKED_EVENTS = 1000;

/** The Event informer of a management cluster, and the Events it delivers to the pools they are about. */
export class PoolEvents {
  /**
   * Events about an object the caches do not hold yet, by `namespace/kind/name`: the Event informer and the
   * object's own race (an AMPM's Event can come before the AMPM, above all after a relist), and an Event is
   * handled once. Delivered when the object arrives; the oldest dropped beyond {@link PARKED_EVENTS}.
   */
  private readonly parked = new Map<string, PoolEvent[]>();

  constructor(
    private readonly kc: KubeConfig,
    private readonly index: PoolIndex,
    /** Called with Events about a pool's objects (MachinePool, its infra object, AMPMs, Machines). */
    private readonly onEvent: (pools: string[], event: PoolEvent) => void,
    private readonly onRestart: () => void,
  ) {}

  /** Which pools an Event's object belongs to. */
  private poolsOfEvent(ns: string, kind: string, name: string): string[] {
    if (kind === 'MachinePool') return [`${ns}/${name}`];
    // An infra object's pools, whatever its kind: the MachinePools whose infrastructureRef names it.
    if (kind === 'AzureMachinePool' || kind === 'AzureManagedMachinePool' || kind === 'AzureASOManagedMachinePool')
      return this.index.poolsOfAmp(ns, name);
    if (kind === 'AzureMachinePoolMachine') {
      const a = this.index.caches.ampm.get(`${ns}/${name}`);
      return a ? this.index.poolsOfAmp(ns, String(a.metadata?.labels?.[AMPM_POOL_LABEL])) : [];
    }
    const m = this.index.caches.machine.get(`${ns}/${name}`);
    return m ? [`${ns}/${m.metadata?.labels?.[POOL_LABEL]}`] : [];
  }

  /** Starts the Event informer, and returns it. */
  start(): Informer {
    // Events are not kept: only their arrival matters (`seen` tells a relist's replays from new ones).
    const informer = new Informer({
      kc: this.kc,
      path: '/api/v1/events',
      kind: 'event',
      keep: false,
      onRestart: this.onRestart,
    });
    const seen = new EventMemory();
    const handle = (o: KubeObject) => {
      const e = o as {
        metadata?: { uid?: string; namespace?: string };
        involvedObject?: { kind?: string; name?: string };
        reason?: string;
        message?: string;
        type?: string;
        count?: number;
        lastTimestamp?: string;
        eventTime?: string;
        firstTimestamp?: string;
      };
      const kind = e.involvedObject?.kind ?? '';
      if (!EVENT_KINDS.has(kind)) return;
      const id = `${e.metadata?.uid}:${e.count ?? 1}`;
      if (!seen.news(id, latestEventTime(e), informer.lists === 0, Date.now())) return;
      const ns = String(e.metadata?.namespace);
      const name = String(e.involvedObject?.name);
      const ev: PoolEvent = {
        uid: id,
        reason: e.reason ?? 'Unknown',
        message: e.message ?? '',
        type: e.type ?? 'Normal',
        object: `${kind}/${name}`,
        count: e.count ?? 1,
        time: e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? new Date().toISOString(),
      };
      const pools = this.poolsOfEvent(ns, kind, name);
      if (pools.length) this.onEvent(pools, ev);
      else this.park(`${ns}/${kind}/${name}`, ev);
    };
    informer.on('add', handle);
    informer.on('update', handle);
    informer.start();
    return informer;
  }

  private park(objectKey: string, ev: PoolEvent): void {
    this.parked.set(objectKey, [...(this.parked.get(objectKey) ?? []), ev]);
    if (this.parked.size > PARKED_EVENTS) this.parked.delete(this.parked.keys().next().value as string);
  }

  /** Delivers the Events parked for an object that has just arrived, if it names a pool now. */
  private unpark(ns: string, kind: string, name: string): void {
    const objectKey = `${ns}/${kind}/${name}`;
    const waiting = this.parked.get(objectKey);
    if (!waiting) return;
    const pools = this.poolsOfEvent(ns, kind, name);
    if (!pools.length) return;
    this.parked.delete(objectKey);
    for (const ev of waiting) this.onEvent(pools, ev);
  }

  /** After an informer stored `o` (replacing `old`) and the index took it: delivers its Events parked. */
  arrived(kind: KindName, o: KubeObject, ns: string, old: KubeObject | undefined): void {
    if (this.parked.size) {
      const eventKind = EVENT_KIND_OF[kind];
      if (eventKind) this.unpark(ns, eventKind, String(nameOf(o)));
      // A new AzureMachinePool or MachinePool can name the pool of objects already cached.
      if (!old && (kind === 'amp' || kind === 'ammp' || kind === 'asomp' || kind === 'mp'))
        for (const [pk] of [...this.parked]) this.unpark(...(pk.split('/') as [string, string, string]));
    }
  }
}
