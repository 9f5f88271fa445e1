// Types for scripts/node24.mjs (Node 24 and better-sqlite3 built for it, for the node24 test suite).

export const NODE24_CACHE: string;
export const NODE24_MAJOR: number;
export function prepareNode24(
  base?: Record<string, string | undefined>,
  cache?: string,
): { node: string; version: string; env: Record<string, string | undefined> };
