// Browser tests: Debian's Chromium (Playwright cannot download browsers here) against the demo stack — the
// simulated fleet (sim/scenarios/demo.yaml at 10× speed) and a production build pointed at it, started by
// Playwright through `npm run demo -- --no-build`. `npm test` builds first; run `npm run build` yourself
// before `npx playwright test`. The simulator's state (kubeconfig, env file) is in test-results/demo-state.

import { defineConfig } from '@playwright/test';

const port = Number(process.env.POOLSCOPE_E2E_PORT ?? 3100);

export default defineConfig({
  testDir: 'e2e',
  workers: 1,
  retries: process.env.CI ? 1 : 0,
  reporter: [['list'], ['json', { outputFile: 'test-results/playwright.json' }]],
  outputDir: 'test-results/artifacts',
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.POOLSCOPE_CHROMIUM ?? '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
  webServer: {
    command: `node scripts/demo.mjs --no-build --port ${port} --speed 10 --state-dir test-results/demo-state`,
    // Ready once the collector has stored its first cycle.
    url: `http://127.0.0.1:${port}/api/readyz`,
    reuseExistingServer: false,
    timeout: 90_000,
    stdout: 'ignore',
    env: { NEXT_TELEMETRY_DISABLED: '1' },
  },
});
