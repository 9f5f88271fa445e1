import 'server-only';
// Server-Sent Events from the change bus: a `hello` with the stream's identity and last sequence number, then
// one small `change` per stored change, and a heartbeat comment so proxies keep the connection open. Every
// listener and timer is released when the client goes away. A client that reads slower than changes come is
// let go once MAX_BUFFERED_BYTES wait for it (its EventSource reconnects and the page reads afresh), so no
// reader can make the server hold an unbounded queue.

import type { EventEmitter } from 'node:events';
import type { ChangeMessage, HelloMessage } from '@/lib/live';

export interface SseSource {
  bus: EventEmitter;
  hello(): HelloMessage;
}

/** What may wait for one slow client (a busy fleet sends a few hundred small changes a second). */
const MAX_BUFFERED_BYTES = 1 << 20;

export function sseResponse(
  request: Request,
  source: SseSource,
  heartbeatMs = 15_000,
  maxBufferedBytes = MAX_BUFFERED_BYTES,
): Response {
  const enc = new TextEncoder();
  let cleanup = () => {};
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const send = (text: string) => {
          // The queue is full: this client does not keep up. Closing lets it reconnect and catch up with a fresh read.
          if ((controller.desiredSize ?? 0) <= 0) {
            cleanup();
            return;
          }
          try {
            controller.enqueue(enc.encode(text));
          } catch {
            cleanup();
          }
        };
        send(`retry: 2000\nevent: hello\ndata: ${JSON.stringify(source.hello())}\n\n`);
        const onChange = (c: ChangeMessage) => send(`id: ${c.seq}\nevent: change\ndata: ${JSON.stringify(c)}\n\n`);
        source.bus.on('change', onChange);
        const onShutdown = () => cleanup();
        source.bus.once('shutdown', onShutdown);
        const beat = setInterval(() => send(`: heartbeat ${new Date().toISOString()}\n\n`), heartbeatMs);
        let done = false;
        cleanup = () => {
          if (done) return;
          done = true;
          clearInterval(beat);
          source.bus.off('change', onChange);
          source.bus.off('shutdown', onShutdown);
          try {
            controller.close();
          } catch {
            // already closed
          }
        };
        request.signal.addEventListener('abort', cleanup, { once: true });
      },
      cancel() {
        cleanup();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: maxBufferedBytes }),
  );
  return new Response(body, {
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    },
  });
}
