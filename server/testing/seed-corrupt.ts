// A store written by poolscope in the directory given, damaged in the tables named after it (none: sound), for the
// browser test of a corrupt store (run with --conditions=react-server --import tsx). Prints the file.
import { corruptTables, seedStore } from './corrupt-store';

const [dir, ...tables] = process.argv.slice(2);
if (!dir) throw new Error('usage: seed-corrupt.ts <dir> [table…]');
const file = await seedStore(dir);
if (tables.length) corruptTables(file, tables);
process.stdout.write(`${file}\n`);
