// The Node.js half of instrumentation.ts: start the runtime (store, collector) and its graceful shutdown on
// SIGTERM/SIGINT; a configuration error stops start-up with its message, without a stack trace.

import { runtime } from './server/collector/start';
import { ConfigError } from './server/env';
import { installSignalHandlers } from './server/shutdown';

export async function startCollectorProcess(): Promise<void> {
  try {
    const rt = await runtime();
    installSignalHandlers(rt, { graceMs: rt.env.POOLSCOPE_SHUTDOWN_GRACE_SECONDS * 1000 });
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      process.exit(1);
    }
    throw e;
  }
}
