// The collector benchmark's report travels on the measuring process's stdout, beside the collector's own log lines
// (JSON too). One may come after the report: pino writes asynchronously, and the runtime logs as it stops.

const PREFIX = 'poolscope-bench-report ';

/** The report as the measuring process prints it: one line, told apart from log lines by its prefix. */
export function reportLine(report: Record<string, unknown>): string {
  return `${PREFIX}${JSON.stringify(report)}`;
}

/** The report in the measuring process's stdout: its last report line. */
export function reportOf(stdout: string): Record<string, unknown> {
  const line = stdout.split('\n').findLast((l) => l.startsWith(PREFIX));
  if (!line)
    throw new Error(`collector benchmark: no report in the measuring process's output: ${stdout.slice(-2000)}`);
  return JSON.parse(line.slice(PREFIX.length)) as Record<string, unknown>;
}
