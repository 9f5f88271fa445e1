// Preloaded (NODE_OPTIONS=--import) into every Node process of the node24 test suite: node_modules' better-sqlite3
// addon is compiled for this machine's Node, so any load of it — from node_modules or the standalone build's traced
// copy — resolves instead to the addon compiled for Node 24 (POOLSCOPE_TEST_SQLITE_ADDON, scripts/node24.mjs).
// better-sqlite3's JavaScript, and every other module, resolves as usual.

import module from 'node:module';
import { pathToFileURL } from 'node:url';

const addon = process.env.POOLSCOPE_TEST_SQLITE_ADDON;
if (!addon) throw new Error('scripts/node24-sqlite.mjs: POOLSCOPE_TEST_SQLITE_ADDON names no addon');
if (typeof module.registerHooks !== 'function')
  throw new Error(`scripts/node24-sqlite.mjs needs module.registerHooks (Node 22.15+), not Node ${process.version}`);
const target = pathToFileURL(addon).href;

module.registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    return resolved.url?.endsWith('/better-sqlite3/build/Release/better_sqlite3.node') && resolved.url !== target
      ? { ...resolved, url: target }
      : resolved;
  },
});
