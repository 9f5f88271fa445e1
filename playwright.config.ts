// Browser tests: Debian's Chromium (Playwright cannot download browsers here) against a production build
// started by Playwright. `npm test` builds first; run `npx next build` yourself before `npx playwright test`.

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
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    },
  },
  webServer: {
    command: `npx next start -H 127.0.0.1 -p ${port}`,
    url: `http://127.0.0.1:${port}/`,
    reuseExistingServer: false,
    timeout: 60_000,
    // The skeleton pages need no fleet: run without the collector, with a throw-away store.
    env: { NEXT_TELEMETRY_DISABLED: '1', POOLSCOPE_COLLECTOR: 'false', POOLSCOPE_DB_PATH: 'test-results/e2e/poolscope.db' },
  },
});
