#!/usr/bin/env node
// `npm run demo`: will build poolscope, start the simulated fleet and the dashboard pointed at it, and print
// http://localhost:3000. The simulator and the dashboard are not built yet (issues #3, #4 and #6), so for
// now it says so and fails rather than pretend.

console.error(`poolscope demo is not available yet.

What exists today: the domain core (lib/: providerIDs, drift, diagnosis, resync verdict) with its tests,
and the app skeleton. Try:

    npm test            # every suite
    npm run bench       # drift + diagnosis benchmark (JSON)
    npx next build && npx next start   # the skeleton page on http://localhost:3000

Still to come before the demo works: the simulated clusters and Azure (sim/), the collector and store
(server/), and the dashboard (app/).`);
process.exit(1);
