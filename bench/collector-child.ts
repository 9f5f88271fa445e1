// Entry of the collector benchmark's measuring process (see bench/collector.ts).
import { measureInChild } from './collector';

await measureInChild();
process.exit(0);
