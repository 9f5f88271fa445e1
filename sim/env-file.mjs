// The simulator's env file (`<state dir>/env`): the settings a real user sets to reach a real fleet (kubeconfig,
// CA, ARM endpoint, credentials), one KEY=value per line, pointing at the simulator. Written by sim/index.ts;
// read by the demo (scripts/demo.mjs), the browser tests' helpers and the collector benchmark. Plain JavaScript
// so that `node scripts/demo.mjs` can import it; types in env-file.d.mts.

import { readFileSync, writeFileSync } from 'node:fs';

/** Writes the file (owner-only: it holds a client secret), with a comment line naming the scenario. */
export function writeEnvFile(file, title, env) {
  writeFileSync(
    file,
    `# poolscope simulator: ${title}\n${Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n')}\n`,
    { mode: 0o600 },
  );
}

/** The settings in the file: each line's text up to the first `=` is the name, the rest its value. */
export function readEnvFile(file) {
  const env = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const i = line.indexOf('=');
    if (!line || line.startsWith('#') || i < 0) continue;
    env[line.slice(0, i)] = line.slice(i + 1);
  }
  return env;
}
