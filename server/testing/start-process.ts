// poolscope's start-up in a process of its own, as Next runs it (instrumentation's register, from the environment);
// used by tests of how start-up fails. Start-up that succeeds prints "started" and stops; one that rejects (which
// under Next leaves a server answering every request with 500) prints "start-up rejected" and exits 3.
import { register } from '../../instrumentation';
import { runtime } from '../runtime';

process.env.NEXT_RUNTIME = 'nodejs';
try {
  await register();
} catch (e) {
  process.stdout.write(`start-up rejected: ${(e as Error).message}\n`);
  process.exit(3);
}
process.stdout.write('started\n');
await (await runtime()).stop();
process.exit(0);
