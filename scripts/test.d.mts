// Types for scripts/test.mjs (`npm test`): its suites, which the tests run with the commands they spawn stubbed.

export const suites: Record<
  'lint' | 'typecheck' | 'unit' | 'node24' | 'browser',
  () => { passed: number; failed: number; skipped: number; note?: string }
>;
