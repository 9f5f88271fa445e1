import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { sseResponse } from './sse';

async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, text: string): Promise<string> {
  const dec = new TextDecoder();
  let out = '';
  while (!out.includes(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    out += dec.decode(value);
  }
  return out;
}

describe('sseResponse', () => {
  it('says hello, streams changes with their sequence number, beats, and lets go when the client leaves', async () => {
    const bus = new EventEmitter();
    const abort = new AbortController();
    const res = sseResponse(
      new Request('http://x/api/stream', { signal: abort.signal }),
      { bus, hello: () => ({ stream: 's1', seq: 4 }) },
      20,
    );
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    expect(await readUntil(reader, '\n\n')).toBe('retry: 2000\nevent: hello\ndata: {"stream":"s1","seq":4}\n\n');
    expect(bus.listenerCount('change')).toBe(1);
    bus.emit('change', { seq: 5, poolKey: 'a/b/c', at: 't', fields: ['amp.ready'] });
    expect(await readUntil(reader, 'amp.ready"]}\n\n')).toContain(
      'id: 5\nevent: change\ndata: {"seq":5,"poolKey":"a/b/c","at":"t","fields":["amp.ready"]}\n\n',
    );
    expect(await readUntil(reader, ': heartbeat')).toContain(': heartbeat');
    abort.abort();
    expect(bus.listenerCount('change')).toBe(0);
    expect((await reader.read()).done).toBe(true);
  });
});

describe('sseResponse and a client that does not read', () => {
  it('lets the client go once the bytes waiting for it pass the ceiling, releasing its listeners', async () => {
    const bus = new EventEmitter();
    const res = sseResponse(
      new Request('http://x/api/stream'),
      { bus, hello: () => ({ stream: 's1', seq: 0 }) },
      60_000,
      4096,
    );
    const change = (seq: number) => ({
      seq,
      poolKey: 'ctx/ns/pool',
      at: '2026-12-05T10:00:00Z',
      fields: ['amp.ready', 'mp.phase'],
    });
    let seq = 0;
    while (bus.listenerCount('change') > 0 && seq < 10_000) bus.emit('change', change(++seq));
    // About 4 KiB of ~100-byte changes, not ten thousand of them.
    expect(seq).toBeLessThan(100);
    expect(bus.listenerCount('change')).toBe(0);
    expect(bus.listenerCount('shutdown')).toBe(0);
    // What was queued is still delivered, then the stream ends.
    const text = await new Response(res.body).text();
    expect(text.length).toBeLessThanOrEqual(4096 + 200);
    expect(text).toContain(`id: ${seq - 1}\n`);
  });
});
