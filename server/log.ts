import 'server-only';
// Structured JSON logs (pino), one line per event, at POOLSCOPE_LOG_LEVEL: every API request (with its request
// id), every collector cycle that stored something, every resync, start-up and shutdown.

import pino, { type Logger } from 'pino';
import { env } from './env';

const KEY = Symbol.for('poolscope.log');
type Holder = { [KEY]?: Logger };

/** Where log lines go: stdout, or (tests) any writable stream. */
let destination: pino.DestinationStream | undefined;

/** Sends the log to `stream` from now on (tests read the lines back). */
export function useLogDestination(stream: pino.DestinationStream): void {
  destination = stream;
  delete (globalThis as Holder)[KEY];
}

export function log(): Logger {
  const g = globalThis as Holder;
  if (!g[KEY]) {
    let level = 'info';
    try {
      level = env().POOLSCOPE_LOG_LEVEL;
    } catch {
      // A configuration error is reported by start-up itself; log at the default level meanwhile.
    }
    g[KEY] = pino(
      {
        level,
        base: { service: 'poolscope' },
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
      },
      destination,
    );
  }
  return g[KEY];
}

/** Adapts a `{msg, level?, …}` record (as the resync and shutdown code write them) to the logger. */
export function logLine(line: Record<string, unknown>): void {
  const { level = 'info', msg, ...rest } = line as { level?: string; msg?: string } & Record<string, unknown>;
  const l = log();
  const fn = (level in l ? (l as unknown as Record<string, (o: object, m?: string) => void>)[level] : l.info) as (
    o: object,
    m?: string,
  ) => void;
  fn.call(l, rest, typeof msg === 'string' ? msg : undefined);
}
