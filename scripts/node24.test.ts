// The image runs the Node that the node24 suite of `npm test` proves the code on (the unit tests, the build and a
// smoke start of the standalone server), the same in the stage that compiles better-sqlite3's addon and the stage
// that runs it.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { NODE24_MAJOR } from './node24.mjs';

it("the image's Node is the major the node24 suite tests, the same Debian slim tag in both stages", () => {
  const dockerfile = readFileSync(path.join(import.meta.dirname, '..', 'Dockerfile'), 'utf8');
  const stages = [...dockerfile.matchAll(/^FROM (node:\S+) AS (\w+)$/gm)].map((m) => ({ image: m[1], stage: m[2] }));
  expect(stages.map((s) => s.stage)).toEqual(['deps', 'run']);
  expect(stages[0]?.image).toMatch(new RegExp(`^node:${NODE24_MAJOR}\\.\\d+-bookworm-slim$`));
  expect(stages[1]?.image).toBe(stages[0]?.image);
});
