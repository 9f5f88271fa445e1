import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    alias: {
      '@': fileURLToPath(new URL('./', import.meta.url)),
      // `server-only` throws outside a React Server Components build; in tests it is a no-op.
      'server-only': fileURLToPath(new URL('./server/testing/server-only-stub.ts', import.meta.url)),
    },
  },
  test: {
    include: ['{lib,server,sim,components,app,scripts,deploy,bench}/**/*.test.{ts,tsx}'],
    environment: 'node',
    // Forked workers inherit NODE_EXTRA_CA_CERTS set by the global setup (threads would not read it).
    pool: 'forks',
    globalSetup: ['./sim/test-ca.setup.ts'],
  },
});
