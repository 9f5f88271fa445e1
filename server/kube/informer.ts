import 'server-only';
// A list+watch informer as client-go's reflector runs one, fed slimmed objects: lists in pages (500 items) so
// no list response is held whole, a process-wide gate so the lists of a whole fleet do not all run at once
// (the start-up peak of memory), one map of items that is also its owner's cache, and watches that ask for
// bookmarks and a server-side timeout of 5–10 minutes and resume from the last resourceVersion when they end.
// 410 Gone (a watch or a continue token too old) → a fresh list; other errors → backoff, reported as data.
// ~470 lines: the reflector's loop, its list and its watch share the cache, the resume point and the abort;
// what stands apart is apart (./watch-stream, ./api-answers, ./list-gate, ./informer-activity).

import { HttpMethod, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { fetch, request, type Dispatcher, type Response } from 'undici';
import { forgetDropped, forgetInstance } from '@/lib/forget';
import { itemKey, sameContent, slim, type SlimKind } from '@/lib/slim';
import type { KubeObject } from '@/lib/unstructured';
import { BodyTooLargeError, readCappedText } from '../http/read-capped';
import { log } from '../log';
import { isSharedDispatcher } from './calls';
import { LocalFailure, logDetail, publicError } from './public-error';
import { ApiStatusError, isGone, parseJson, statusError } from './api-answers';
import { activityOf } from './informer-activity';
import { sharedListGate, type ListGate } from './list-gate';
import { LineSplitter, mib, readLines, silenceGuard } from './watch-stream';

export { informerActivity, type InformerActivity } from './informer-activity';
export { ListGate } from './list-gate';

/** client-go's minimum watch timeout; each watch asks for between one and two times it. */
const MIN_WATCH_TIMEOUT_SECONDS = 300;

/**
 * How long a watch may stay silent before the client gives up on its connection. client-node's `Watch` aborts
 * after 30 s of silence, so every quiet watch reconnected (a new TLS handshake) twice a minute: at 100,000 VMs,
 * with a few hundred watches, that was most of the collector's CPU. API servers send a bookmark about every minute to
 * watches that allow them, so three minutes of silence still means a dead connection.
 */
export const WATCH_INACTIVITY_MS = 180_000;

/** Items per list page, as client-go's reflector asks. */
const LIST_PAGE_SIZE = 500;

const BACKOFF_MS = [1000, 2000, 5000, 10_000, 30_000];

export function watchQuery(
  query: Record<string, string | number | boolean | undefined>,
  random = Math.random,
): Record<string, string | number | boolean | undefined> {
  return {
    ...query,
    allowWatchBookmarks: true,
    timeoutSeconds: Math.floor(MIN_WATCH_TIMEOUT_SECONDS * (1 + random())),
  };
}

/** The most a list page may weigh: 500 objects of a real API server's ~1.5 MiB ceiling would not fit, 500 Nodes do. */
const LIST_PAGE_MAX_BYTES = 64 * 2 ** 20;

/** The most a watch event may weigh (an API server stores objects of at most ~1.5 MiB). */
const WATCH_LINE_MAX_BYTES = 8 * 2 ** 20;

/** How long a list page may take, answer and body (a real API server ends a list after 60 s itself). */
const LIST_PAGE_TIMEOUT_MS = 60_000;

/** How much of an error answer is read (for the log). */
const ERROR_BODY_MAX_BYTES = 64 * 1024;

export interface InformerOptions {
  kc: KubeConfig;
  /** The collection's path, e.g. `/api/v1/nodes` or `/apis/cluster.x-k8s.io/v1beta2/machinepools`. */
  path: string;
  kind: SlimKind;
  labelSelector?: string;
  /** The map the items live in (the owner's cache); a new one when absent. */
  items?: Map<string, KubeObject>;
  /**
   * Another cache whose objects' keys a new object takes when equal (AMPMs and Machines: CAPI names a MachinePool's
   * Machine after its AMPM, so the two caches can hold one string for both).
   */
  keysFrom?: Map<string, KubeObject>;
  /** false: hand each object to the handlers without keeping it (Events: only their arrival matters). */
  keep?: boolean;
  pageSize?: number;
  gate?: ListGate;
  /** live: listed, or a watch delivered; stale: the last list or watch failed (with why). */
  onState?: (state: 'live' | 'stale', error?: string) => void;
  /** Called once per restart after an error. */
  onRestart?: () => void;
  backoffMs?: readonly number[];
  random?: () => number;
  /** Ceilings on what a server can make the informer hold (defaults LIST_PAGE_MAX_BYTES, WATCH_LINE_MAX_BYTES). */
  maxPageBytes?: number;
  maxLineBytes?: number;
}

/**
 * `key`: what the informer keeps the object under (itemKey). On an add it is the very string the cache keeps;
 * on an update or a delete an equal one (a Map keeps the key it first stored), so an owner's index that shares
 * the cache's strings takes them from adds and leaves an updated object's entry as it is (see ContextSource).
 */
type Handler = (obj: KubeObject, old: KubeObject | undefined, key: string) => void;

/** Two versions of an object that is not slimmed to an instance, with the same resourceVersion. */
function sameVersion(a: KubeObject, b: KubeObject): boolean {
  const rv = a.metadata?.resourceVersion;
  return rv !== undefined && rv === b.metadata?.resourceVersion;
}

export class Informer {
  readonly items: Map<string, KubeObject>;
  private readonly handlers: Record<'add' | 'update' | 'delete', Handler[]> = { add: [], update: [], delete: [] };
  private resourceVersion = '';
  private stopped = true;
  private controller: AbortController | null = null;
  private sleeping: { timer: NodeJS.Timeout; wake: () => void } | null = null;
  private generation = 0;
  /** Completed lists (the first one and every relist after 410). */
  lists = 0;

  constructor(private readonly opts: InformerOptions) {
    this.items = opts.items ?? new Map();
  }

  on(verb: 'add' | 'update' | 'delete', handler: Handler): void {
    this.handlers[verb].push(handler);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.loop(++this.generation);
  }

  stop(): void {
    this.stopped = true;
    this.generation++;
    this.controller?.abort();
    if (this.sleeping) {
      clearTimeout(this.sleeping.timer);
      this.sleeping.wake();
    }
  }

  /** A loop runs while its generation is current: a stop and a start never leave two loops running. */
  private async loop(generation: number): Promise<void> {
    let attempt = 0;
    let gone = 0;
    const backoff = this.opts.backoffMs ?? BACKOFF_MS;
    const alive = () => !this.stopped && generation === this.generation;
    while (alive()) {
      try {
        if (!this.resourceVersion) {
          await this.relist();
          if (!alive()) return;
          this.opts.onState?.('live');
        }
        const t0 = Date.now();
        const delivered = await this.watchOnce();
        gone = 0;
        // A watch the server ends at once, with nothing in it, is not a healthy one: do not spin on it.
        if (!delivered && Date.now() - t0 < 1000)
          await this.sleep(backoff[Math.min(attempt++, backoff.length - 1)] as number);
        else attempt = 0;
      } catch (e) {
        if (!alive()) return;
        if (isGone(e)) {
          activityOf(this.opts.kind).gone++;
          // Too old: list afresh. Twice in a row (the new list already too old) waits like an error.
          this.resourceVersion = '';
          if (gone++ === 0) continue;
        }
        if ((e as Error).name === 'TimeoutError' && this.resourceVersion) continue; // a silent connection: resume at once
        this.opts.onRestart?.();
        this.reportFailure(e);
        await this.sleep(backoff[Math.min(attempt++, backoff.length - 1)] as number);
      }
    }
  }

  /** Reports a failure as the source's state, in words safe to show anyone; the server's own words go to the log. */
  private lastLogged = '';

  private reportFailure(e: unknown): void {
    const text = publicError(e, this.opts.path);
    this.opts.onState?.('stale', text);
    const detail = logDetail(e);
    if (`${text}\0${detail}` === this.lastLogged) return;
    this.lastLogged = `${text}\0${detail}`;
    log().warn(
      { path: this.opts.path, server: this.opts.kc.getCurrentCluster()?.server, error: text, detail },
      'kubernetes source failing',
    );
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        this.sleeping = null;
        resolve();
      };
      this.sleeping = { timer: setTimeout(wake, ms), wake };
    });
  }

  /**
   * What lib/slim may take strings from for a new version of `o` (raw): the cached object it replaces, or else an
   * object of the `keysFrom` cache under the same key.
   */
  private cachedAs(o: KubeObject): KubeObject | undefined {
    if (this.opts.keep === false) return undefined;
    const k = itemKey(o);
    return this.items.get(k) ?? this.opts.keysFrom?.get(k);
  }

  private emit(verb: 'add' | 'update' | 'delete', obj: KubeObject, old: KubeObject | undefined, k: string): void {
    for (const h of this.handlers[verb]) h(obj, old, k);
  }

  private put(obj: KubeObject): void {
    if (this.opts.keep === false) {
      this.emit('add', obj, undefined, itemKey(obj));
      return;
    }
    const k = itemKey(obj);
    const old = this.items.get(k);
    // An update whose slimmed content is the same (a Node's status refresh, a condition's time) leaves the cached
    // object as it is, unannounced: it cannot change an analysis, and at 100,000 VMs such updates are most of
    // them (the new copy dies young instead of the cached one dying old). Slimmed instances keep no
    // resourceVersion (lib/slim); other objects are the same when their resourceVersions are.
    if (old && (sameContent(old, obj) || sameVersion(old, obj))) return;
    this.items.set(k, obj);
    if (!old) this.announce(k, old, 'add', obj);
    else {
      this.announce(k, old, 'update', obj, old);
      forgetDropped(old, obj);
    }
  }

  private drop(obj: KubeObject): void {
    const k = itemKey(obj);
    const old = this.items.get(k);
    this.items.delete(k);
    if (old || this.opts.keep === false) this.announce(k, old, 'delete', old ?? obj);
    forgetInstance(old ?? obj);
  }

  /**
   * Tells the handlers of a change already made to the items; when one throws, the item `k` is put back as it
   * was (`old`) before the error goes on, so the event, coming again, is announced again.
   */
  private announce(
    k: string,
    old: KubeObject | undefined,
    verb: 'add' | 'update' | 'delete',
    obj: KubeObject,
    previous?: KubeObject,
  ): void {
    try {
      this.emit(verb, obj, previous, k);
    } catch (e) {
      if (old) this.items.set(k, old);
      else this.items.delete(k);
      throw e;
    }
  }

  /** Lists every page (a fresh list when a continue token expires), then reconciles the items with it. */
  private async relist(): Promise<void> {
    let listed;
    try {
      listed = await this.listThroughGate();
    } catch (e) {
      if (!isGone(e) || this.stopped) throw e;
      activityOf(this.opts.kind).gone++;
      listed = await this.listThroughGate();
    }
    const { items, resourceVersion } = listed;
    if (this.stopped) return;
    if (this.opts.keep !== false) {
      for (const [k, old] of this.items) {
        if (!items.has(k)) {
          this.items.delete(k);
          this.announce(k, old, 'delete', old);
          forgetInstance(old);
        }
      }
    }
    for (const o of items.values()) this.put(o);
    this.resourceVersion = resourceVersion;
    this.lists++;
    const a = activityOf(this.opts.kind);
    a.lists++;
    a.listedObjects += items.size;
  }

  /**
   * A whole list, its pages read while holding a place at the process's list gate. The first page's answer is
   * awaited before taking a place: a server that does not answer (or refuses) holds none, so one hung API server
   * cannot keep every other cluster's lists waiting.
   */
  private async listThroughGate(): Promise<{ items: Map<string, KubeObject>; resourceVersion: string }> {
    const first = await this.requestPage(undefined, undefined);
    try {
      return await (this.opts.gate ?? sharedListGate).run(() => this.listPages(first));
    } finally {
      // A list's own dispatcher (a plain KubeConfig builds one per request) is closed; a shared one stays open.
      if (!isSharedDispatcher(first.dispatcher)) void first.dispatcher?.close().catch(() => {});
    }
  }

  /** One page's answer (its headers; a status other than 200 thrown), within LIST_PAGE_TIMEOUT_MS for the page. */
  private async requestPage(
    cont: string | undefined,
    dispatcher: Dispatcher | undefined,
  ): Promise<{ res: Response; dispatcher: Dispatcher | undefined }> {
    const server = this.opts.kc.getCurrentCluster()?.server;
    if (!server) throw new LocalFailure('No currently active cluster');
    const url = new URL(server + this.opts.path);
    url.searchParams.set('limit', String(this.opts.pageSize ?? LIST_PAGE_SIZE));
    if (this.opts.labelSelector) url.searchParams.set('labelSelector', this.opts.labelSelector);
    if (cont) url.searchParams.set('continue', cont);
    const ctx = new RequestContext(url.toString(), HttpMethod.GET);
    await this.opts.kc.applySecurityAuthentication(ctx);
    // One connection for every page of this list.
    const d = dispatcher ?? (ctx.getDispatcher() as Dispatcher | undefined);
    const controller = new AbortController();
    this.controller = controller;
    if (this.stopped) controller.abort();
    let res: Response;
    try {
      res = await fetch(url, {
        headers: { ...ctx.getHeaders(), Accept: 'application/json' },
        dispatcher: d,
        signal: AbortSignal.any([controller.signal, AbortSignal.timeout(LIST_PAGE_TIMEOUT_MS)]),
      });
      if (res.status !== 200)
        throw statusError(
          `list ${this.opts.path}`,
          res.status,
          await readCappedText(res.body, ERROR_BODY_MAX_BYTES).catch(() => ''),
        );
    } catch (e) {
      if (!dispatcher && !isSharedDispatcher(d)) void d?.close().catch(() => {});
      throw e;
    }
    return { res, dispatcher: d };
  }

  /** Reads every page, the first one already answered. */
  private async listPages(first: {
    res: Response;
    dispatcher: Dispatcher | undefined;
  }): Promise<{ items: Map<string, KubeObject>; resourceVersion: string }> {
    const items = new Map<string, KubeObject>();
    let page = first;
    for (;;) {
      const what = `list ${this.opts.path}`;
      const max = this.opts.maxPageBytes ?? LIST_PAGE_MAX_BYTES;
      const text = await readCappedText(page.res.body, max).catch((e: unknown) => {
        throw e instanceof BodyTooLargeError
          ? new LocalFailure(`${what}: a page of the answer is over ${mib(max)}`)
          : e;
      });
      const body = parseJson(text, what) as {
        metadata?: { resourceVersion?: string; continue?: string };
        items?: KubeObject[];
      };
      for (const o of body.items ?? []) {
        // The cached object it will replace, if any: whose strings it may share (lib/slim).
        const s = slim(this.opts.kind, o, this.cachedAs(o));
        items.set(itemKey(s), s);
      }
      const cont = body.metadata?.continue || undefined;
      if (!cont || this.stopped) return { items, resourceVersion: body.metadata?.resourceVersion ?? '' };
      page = await this.requestPage(cont, first.dispatcher);
    }
  }

  /**
   * One watch from the current resourceVersion; resolves (with whether anything came) when the server ends it,
   * rejects on errors. Made as client-node's `Watch` makes it (the KubeConfig's authentication, the same query),
   * but read as undici gives the bytes, split into lines here: client-node turns the response into a web stream,
   * back into a Node stream and through `readline`, and resets a timer at every chunk — ~30% more CPU per event
   * where events come one at a time, as a fleet's ~350 a second over a few hundred watches do.
   */
  /** The watch's URL (from the last resourceVersion) and its request's headers and dispatcher. */
  private async watchRequest(): Promise<{ url: URL; headers: Record<string, string>; dispatcher?: Dispatcher }> {
    const server = this.opts.kc.getCurrentCluster()?.server;
    if (!server) throw new Error('No currently active cluster');
    const url = new URL(server + this.opts.path);
    url.searchParams.set('watch', 'true');
    for (const [k, v] of Object.entries(
      watchQuery({ resourceVersion: this.resourceVersion, labelSelector: this.opts.labelSelector }, this.opts.random),
    )) {
      if (v !== undefined) url.searchParams.set(k, String(v));
    }
    const ctx = new RequestContext(url.toString(), HttpMethod.GET);
    await this.opts.kc.applySecurityAuthentication(ctx);
    return { url, headers: ctx.getHeaders(), dispatcher: ctx.getDispatcher() as Dispatcher | undefined };
  }

  /**
   * One watch, from the last resourceVersion until the server ends it; true when it delivered an event. Silence for
   * WATCH_INACTIVITY_MS (no byte, not even a bookmark) ends it as a TimeoutError.
   */
  private async watchOnce(): Promise<boolean> {
    const { url, headers, dispatcher } = await this.watchRequest();
    activityOf(this.opts.kind).watches++;
    const controller = new AbortController();
    this.controller = controller;
    if (this.stopped) controller.abort();
    const silence = silenceGuard(controller, WATCH_INACTIVITY_MS);
    const seen: WatchSeen = { failure: null, delivered: false };
    try {
      const res = await request(url, { method: 'GET', headers, dispatcher, signal: controller.signal });
      if (res.statusCode !== 200)
        throw statusError(
          `watch ${this.opts.path}`,
          res.statusCode,
          await readCappedText(res.body, ERROR_BODY_MAX_BYTES).catch(() => ''),
        );
      // The server took the watch from the cache's resourceVersion: the cache is current, whatever comes next. A
      // quiet cluster back after an outage sends no event, and would otherwise stay stale until something changed.
      this.opts.onState?.('live');
      const lines = new LineSplitter(this.opts.maxLineBytes ?? WATCH_LINE_MAX_BYTES, `watch ${this.opts.path}`);
      await readLines(res.body, lines, (line) => this.watchEvent(line, seen), controller, silence.touch);
    } catch (e) {
      if (silence.timedOut())
        throw Object.assign(new LocalFailure(`watch ${this.opts.path}: no data for ${WATCH_INACTIVITY_MS / 1000} s`), {
          name: 'TimeoutError',
        });
      throw e;
    } finally {
      silence.stop();
      if (this.controller === controller) this.controller = null;
    }
    if (seen.failure) throw seen.failure;
    return seen.delivered;
  }

  /** Applies one line of a watch: an event to the cache, or an ERROR event kept as the watch's failure. */
  private watchEvent(line: string, seen: WatchSeen): void {
    let event: { type?: string; object?: KubeObject & { code?: number; message?: string; reason?: string } };
    try {
      event = JSON.parse(line) as typeof event;
    } catch {
      // client-node skipped such a line (and with it a change, unseen); client-go ends the watch, as here.
      throw new LocalFailure(`watch ${this.opts.path}: the server sent a line that is not JSON`, line.slice(0, 200));
    }
    const o = event.object ?? {};
    if (event.type === 'ERROR') {
      seen.failure = new ApiStatusError(
        typeof o.code === 'number' ? o.code : 500,
        `watch ${this.opts.path}`,
        typeof o.reason === 'string' ? o.reason : undefined,
        typeof o.message === 'string' ? o.message : undefined,
      );
      return;
    }
    if (!seen.delivered) {
      seen.delivered = true;
      this.opts.onState?.('live');
    }
    if (event.type !== 'BOOKMARK') activityOf(this.opts.kind).watchEvents++;
    if (event.type === 'ADDED' || event.type === 'MODIFIED') this.put(slim(this.opts.kind, o, this.cachedAs(o)));
    else if (event.type === 'DELETED') this.drop(slim(this.opts.kind, o));
    const rv = o.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
  }
}

/** What a watch met: the first ERROR event's failure, and whether it delivered any event. */
interface WatchSeen {
  failure: unknown;
  delivered: boolean;
}
