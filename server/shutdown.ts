import 'server-only';
// Graceful shutdown on SIGTERM/SIGINT (a pod being stopped, Ctrl-C): readiness fails at once, live streams
// end, the collector finishes its current cycle and releases its Lease, the store closes; then the process
// exits 0 — or 1 if that took longer than the grace period. Next's own handler would exit at once, so
// poolscope takes the signals over.

import type { Runtime } from './runtime';
import { logLine } from './log';

export interface ShutdownOptions {
  graceMs: number;
  exit?: (code: number) => void;
  log?: (line: Record<string, unknown>) => void;
}

/** Stops `rt` within the grace period; resolves with the exit code it chose (and calls `exit` with it). */
export async function shutdown(rt: Runtime, signal: string, opts: ShutdownOptions): Promise<number> {
  const log = opts.log ?? logLine;
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  const t0 = Date.now();
  log({ level: 'info', msg: 'shutting down', signal, graceSeconds: opts.graceMs / 1000 });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((r) => {
    timer = setTimeout(() => r('late'), opts.graceMs);
  });
  const done = rt.stop().then(
    () => 'done' as const,
    (e: unknown) => {
      log({ level: 'error', msg: 'shutdown failed', error: (e as Error).message });
      return 'failed' as const;
    },
  );
  const how = await Promise.race([done, late]);
  clearTimeout(timer);
  const code = how === 'done' ? 0 : 1;
  log({
    level: how === 'done' ? 'info' : 'error',
    msg:
      how === 'done'
        ? 'stopped cleanly'
        : how === 'late'
          ? 'grace period over: exiting without a clean stop'
          : 'stopped with errors',
    seconds: (Date.now() - t0) / 1000,
  });
  exit(code);
  return code;
}

/** Takes SIGTERM and SIGINT over from Next's handlers and shuts `rt` down gracefully on either. */
export function installSignalHandlers(rt: Runtime, opts: ShutdownOptions): void {
  let started = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.removeAllListeners(signal);
    process.on(signal, () => {
      if (started) return;
      started = true;
      void shutdown(rt, signal, opts);
    });
  }
}
