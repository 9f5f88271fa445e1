// The shared-answer machinery alone: the gate's bounds (queue, wait, run time, per client, slots handed over in order), the cache's versions, ages, failures and weight, the
// compressed copies made once, and the header parsing behind 304 and compression.

import { describe, expect, it } from 'vitest';
import { Answer, AnswerCache, Gate, Overloaded, chooseEncoding, matchesEtag, type GateLimits } from './answer-cache';

const never = new Promise<never>(() => {});

const limits = (l: Partial<GateLimits>): GateLimits => ({
  running: 1,
  runMs: 10_000,
  waiting: 10,
  waitMs: 10_000,
  perClient: 10,
  ...l,
});

/** A computation held until released. */
function held<T>(value: T): { work: () => Promise<T>; release: () => void } {
  let release = () => {};
  const p = new Promise<T>((r) => (release = () => r(value)));
  return { work: () => p, release };
}

describe('Gate', () => {
  it('sheds a read that waited longer than its bound, and counts why', async () => {
    const shed: string[] = [];
    const gate = new Gate(limits({ waitMs: 50 }), (why) => shed.push(why));
    void gate.run(() => never).catch(() => {});
    const t0 = performance.now();
    await expect(gate.run(async () => 1)).rejects.toBeInstanceOf(Overloaded);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(shed).toEqual(['waited-too-long']);
    expect(gate.load).toEqual({ running: 1, waiting: 0 });
  });
  it('refuses at once when the queue is full, and runs the queued in order as slots free', async () => {
    const shed: string[] = [];
    const gate = new Gate(limits({ waiting: 2 }), (why) => shed.push(why));
    const first = held('a');
    const running = gate.run(first.work);
    const order: string[] = [];
    const queued = [gate.run(async () => order.push('b')), gate.run(async () => order.push('c'))];
    const refused = await gate.run(async () => 'd').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Overloaded);
    expect((refused as Overloaded).headers).toEqual({ 'retry-after': '2' });
    expect(shed).toEqual(['queue-full']);
    first.release();
    expect(await running).toBe('a');
    await Promise.all(queued);
    expect(order).toEqual(['b', 'c']);
  });
  it('hands a freed slot to the first waiter: a newcomer neither overtakes it nor runs beyond the limit', async () => {
    const gate = new Gate(limits({ running: 2 }));
    let now = 0;
    let most = 0;
    const track = (w: () => Promise<unknown>) => async () => {
      most = Math.max(most, ++now);
      try {
        return await w();
      } finally {
        now--;
      }
    };
    const a = held(1);
    const b = held(2);
    const order: string[] = [];
    const runs = [gate.run(track(a.work)), gate.run(track(b.work))];
    const waiter = gate.run(track(async () => order.push('waiter')));
    a.release();
    // Arrives in the same turn as the freed slot.
    const newcomer = gate.run(track(async () => order.push('newcomer')));
    b.release();
    await Promise.all([...runs, waiter, newcomer]);
    expect(order).toEqual(['waiter', 'newcomer']);
    expect(most).toBeLessThanOrEqual(2);
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });
  it("limits one client's places in the queue, not the others'", async () => {
    const shed: string[] = [];
    const gate = new Gate(limits({ perClient: 2 }), (why) => shed.push(why));
    const first = held(0);
    const running = gate.run(first.work, '10.0.0.1');
    const mine = [gate.run(async () => 1, '10.0.0.1'), gate.run(async () => 2, '10.0.0.1')];
    await expect(gate.run(async () => 3, '10.0.0.1')).rejects.toBeInstanceOf(Overloaded);
    const other = gate.run(async () => 4, '10.0.0.2');
    expect(shed).toEqual(['client-limit']);
    first.release();
    expect(await Promise.all([running, ...mine, other])).toEqual([0, 1, 2, 4]);
    // Places given back: the client may queue again.
    const again = held(0);
    const r2 = gate.run(again.work, '10.0.0.1');
    const q2 = [gate.run(async () => 5, '10.0.0.1'), gate.run(async () => 6, '10.0.0.1')];
    again.release();
    expect(await Promise.all([r2, ...q2])).toEqual([0, 5, 6]);
  });
  it('gives up the slot of a computation that runs too long, and the next one runs', async () => {
    const shed: string[] = [];
    const gate = new Gate(limits({ runMs: 50 }), (why) => shed.push(why));
    await expect(gate.run(() => never)).rejects.toBeInstanceOf(Overloaded);
    expect(shed).toEqual(['ran-too-long']);
    expect(await gate.run(async () => 'next')).toBe('next');
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });
});

describe('AnswerCache', () => {
  const gate = () => new Gate(limits({ running: 4 }));
  it('computes once per version and age, and again for a new version or once the age is past', async () => {
    let now = 0;
    let computed = 0;
    const cache = new AnswerCache(gate(), 1 << 20, () => now);
    const read = (version: string) => cache.get('k', version, 100, async () => ({ n: ++computed }));
    const [a, b] = await Promise.all([read('v1'), read('v1')]);
    expect(a).toBe(b);
    expect(cache.stats).toEqual({ hits: 0, joins: 1, misses: 1 });
    expect((await read('v1')).value).toEqual({ n: 1 });
    expect((await read('v2')).value).toEqual({ n: 2 });
    now = 150;
    expect((await read('v2')).value).toEqual({ n: 3 });
  });
  it('keeps no failed computation: its readers get the error, the next reader computes again', async () => {
    const cache = new AnswerCache(gate());
    let calls = 0;
    const fail = () =>
      cache.get('k', 'v', 1000, async () => {
        calls++;
        throw new Error('store down');
      });
    await expect(Promise.all([fail(), fail()])).rejects.toThrow('store down');
    expect(calls).toBe(1);
    await expect(fail()).rejects.toThrow('store down');
    expect(calls).toBe(2);
  });
  it('drops the least recently used answers past its weight', async () => {
    const cache = new AnswerCache(gate(), 200_000);
    const big = 'x'.repeat(30_000);
    for (const k of ['a', 'b', 'c']) await cache.get(k, 'v', 60_000, async () => big);
    await cache.get('a', 'v', 60_000, async () => big);
    await cache.get('d', 'v', 60_000, async () => big);
    expect(cache.size.weight).toBeLessThanOrEqual(200_000);
    const misses = cache.stats.misses;
    await cache.get('a', 'v', 60_000, async () => big);
    expect(cache.stats.misses).toBe(misses);
    await cache.get('b', 'v', 60_000, async () => big);
    expect(cache.stats.misses).toBe(misses + 1);
  });
});

describe('Answer', () => {
  it('makes each compressed copy once', async () => {
    const a = new Answer({ text: 'y'.repeat(5000) });
    expect(a.encodedBody('gzip')).toBe(a.encodedBody('gzip'));
    expect((await a.encodedBody('br')).length).toBeLessThan(a.body.length / 10);
    expect(await a.encodedBody('identity')).toBe(a.body);
  });
});

describe('headers', () => {
  it.each<[string | null, number, string]>([
    [null, 5000, 'identity'],
    ['gzip, br', 500, 'identity'],
    ['gzip, deflate, br, zstd', 5000, 'br'],
    ['GZIP', 5000, 'gzip'],
    ['br;q=0, *;q=0.1', 5000, 'gzip'],
    ['br;q=bogus, gzip;q=0', 5000, 'identity'],
    ['deflate', 5000, 'identity'],
  ])('Accept-Encoding %s (%i bytes) → %s', (header, size, encoding) => {
    expect(chooseEncoding(header, size)).toBe(encoding);
  });
  it.each<[string | null, boolean]>([
    [null, false],
    ['"abc"', true],
    ['W/"abc"', true],
    ['"x", "abc"', true],
    ['*', true],
    ['"abcd"', false],
  ])('If-None-Match %s → %s', (header, match) => {
    expect(matchesEtag(header, '"abc"')).toBe(match);
  });
});
