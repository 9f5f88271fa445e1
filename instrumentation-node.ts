// The Node.js half of instrumentation.ts: start the runtime (store, collector); a configuration error stops
// start-up with its message, without a stack trace.

import { runtime } from './server/collector/start';
import { ConfigError } from './server/env';

export async function startCollectorProcess(): Promise<void> {
  try {
    await runtime();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      process.exit(1);
    }
    throw e;
  }
}
