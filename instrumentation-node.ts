// The Node.js half of instrumentation.ts: start the runtime (store, collector) and its graceful shutdown on
// SIGTERM/SIGINT. Any start-up failure ends the process with exit code 1 and a message, without a stack trace:
// Next would otherwise keep serving, answering every request (liveness included) with 500.

import { runtime } from './server/runtime';
import { ConfigError } from './server/env';
import { log } from './server/log';
import { installSignalHandlers } from './server/shutdown';
import { faultText, StoreFailingError } from './server/store/health';

export async function startCollectorProcess(
  exit: (code: number) => void = (code) => process.exit(code),
): Promise<void> {
  try {
    const rt = await runtime();
    installSignalHandlers(rt, { graceMs: rt.env.POOLSCOPE_SHUTDOWN_GRACE_SECONDS * 1000 });
  } catch (e) {
    console.error(startFailure(e));
    // The stack, for a failure nobody foresaw, at debug level only.
    if (!(e instanceof ConfigError)) log().debug({ err: e }, 'start-up failure');
    exit(1);
  }
}

/** What start-up says when it fails: a configuration error's or a failing store's own message, anything else named. */
function startFailure(e: unknown): string {
  if (e instanceof ConfigError || e instanceof StoreFailingError) return e.message;
  return `poolscope could not start: ${faultText(e)}`;
}
