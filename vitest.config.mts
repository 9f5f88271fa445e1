import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { alias: { '@': fileURLToPath(new URL('./', import.meta.url)) } },
  test: {
    include: ['{lib,server,sim,components,app,scripts}/**/*.test.{ts,tsx}'],
    environment: 'node',
    pool: 'threads',
  },
});
