// Types for scripts/promtool.mjs, which the tests use to find promtool the way `npm test` does.

export const PROMTOOL_CACHE: string;
export function findPromtool(cacheDir?: string, env?: Record<string, string | undefined>): string | null;
export function ensurePromtool(cacheDir?: string): string | null;
