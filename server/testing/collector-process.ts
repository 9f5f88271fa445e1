// A collector in its own process, started from the environment exactly as the server starts it; used by tests
// that kill it with SIGKILL. Prints "collecting" once its first cycle is stored.
import { startRuntime } from '../runtime';

const rt = await startRuntime();
for (;;) {
  if (await rt.store.lastCycle()) break;
  await new Promise((r) => setTimeout(r, 100));
}
process.stdout.write('collecting\n');
