// Graceful shutdown: live streams end, readiness fails, the store closes and the exit code says whether the
// stop was clean and within the grace period.

import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startRuntime, type Runtime } from './runtime';
import { parseEnv } from './env';
import { sseResponse } from './http/sse';
import { shutdown } from './shutdown';

describe('shutdown', () => {
  it('ends live streams, closes the store and exits 0', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'poolscope-stop-'));
    const rt = await startRuntime(
      parseEnv({ POOLSCOPE_COLLECTOR: 'false', POOLSCOPE_DB_PATH: path.join(dir, 'db.sqlite') }),
    );
    const res = sseResponse(new Request('http://localhost/api/stream'), { bus: rt.bus, hello: rt.hello });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toMatch(/event: hello/);
    const logs: Record<string, unknown>[] = [];
    const exits: number[] = [];
    const code = await shutdown(rt, 'SIGTERM', { graceMs: 5000, exit: (c) => exits.push(c), log: (l) => logs.push(l) });
    expect(code).toBe(0);
    expect(exits).toEqual([0]);
    expect(rt.stopping).toBe(true);
    expect((await reader.read()).done).toBe(true);
    await expect(rt.store.lastCycle()).rejects.toThrow();
    expect(logs.map((l) => l.msg)).toEqual(['shutting down', 'stopped cleanly']);
  });

  it('exits 1 when the stop outlasts the grace period', async () => {
    const stuck = { stop: () => new Promise<void>(() => {}) } as unknown as Runtime;
    const logs: Record<string, unknown>[] = [];
    const exits: number[] = [];
    const t0 = Date.now();
    expect(
      await shutdown(stuck, 'SIGTERM', { graceMs: 300, exit: (c) => exits.push(c), log: (l) => logs.push(l) }),
    ).toBe(1);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(exits).toEqual([1]);
    expect(logs.at(-1)?.msg).toBe('grace period over: exiting without a clean stop');
  });
});
