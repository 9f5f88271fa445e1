// A watch response read as it comes: its bytes cut into lines (one JSON event a line, each bounded), and a guard
// that ends a watch gone silent. The informer applies the lines (./informer).

import type { Readable } from 'node:stream';
import { LocalFailure } from './public-error';

/** A size as the messages say it. */
export const mib = (bytes: number) =>
  bytes >= 2 ** 20 ? `${Math.round(bytes / 2 ** 20)} MiB` : `${Math.round(bytes / 1024)} KiB`;

/**
 * Aborts `controller` once `ms` pass with no data (`touch` marks data). Checked against the time of the last
 * chunk, not a timer reset at every chunk.
 */
export function silenceGuard(
  controller: AbortController,
  ms: number,
): { touch: () => void; timedOut: () => boolean; stop: () => void } {
  let lastData = performance.now();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const check = () => {
    const silent = performance.now() - lastData;
    if (silent >= ms) {
      timedOut = true;
      controller.abort();
    } else timer = setTimeout(check, ms - silent).unref();
  };
  timer = setTimeout(check, ms).unref();
  return {
    touch: () => {
      lastData = performance.now();
    },
    timedOut: () => timedOut,
    stop: () => clearTimeout(timer),
  };
}

/**
 * Reads a body to its end, line by line. A handler that throws ends the read with its error (aborting the request):
 * the watch then resumes before that event, which comes again.
 */
export function readLines(
  body: Readable,
  lines: LineSplitter,
  onLine: (line: string) => void,
  controller: AbortController,
  onData: () => void,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let failedAlready = false;
    const failed = (e: unknown) => {
      failedAlready = true;
      controller.abort();
      reject(e);
    };
    body.on('data', (chunk: Buffer) => {
      // Nothing after the event that failed may be applied (it would move the resume point past it).
      if (failedAlready) return;
      onData();
      try {
        lines.push(chunk, onLine);
      } catch (e) {
        failed(e);
      }
    });
    body.on('end', () => {
      try {
        lines.end(onLine);
        resolve();
      } catch (e) {
        failed(e);
      }
    });
    body.on('error', reject);
  });
}

/**
 * A watch response's bytes as lines (the API server writes one JSON event a line). Cut only at a newline — one
 * byte in UTF-8, never inside a character — a line, or a character, split across chunks is decoded whole once
 * its end comes. Blank lines are skipped.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  /** Bytes held in `parts`: a line longer than `maxLine` ends the stream with an error instead of growing. */
  private held = 0;

  constructor(
    private readonly maxLine = Infinity,
    private readonly what = 'the stream',
  ) {}

  push(chunk: Buffer, onLine: (line: string) => void): void {
    let start = 0;
    let nl = chunk.indexOf(10);
    while (nl >= 0) {
      let line: string;
      if (this.parts.length) {
        this.hold(nl - start);
        this.parts.push(chunk.subarray(start, nl));
        line = Buffer.concat(this.parts).toString('utf8');
        this.parts = [];
        this.held = 0;
      } else {
        if (nl - start > this.maxLine) this.hold(nl - start);
        line = chunk.toString('utf8', start, nl);
      }
      if (line.trim()) onLine(line);
      start = nl + 1;
      nl = chunk.indexOf(10, start);
    }
    if (start < chunk.length) {
      this.hold(chunk.length - start);
      this.parts.push(chunk.subarray(start));
    }
  }

  private hold(bytes: number): void {
    this.held += bytes;
    if (this.held > this.maxLine) {
      this.parts = [];
      this.held = 0;
      throw new LocalFailure(`${this.what}: an event is over ${mib(this.maxLine)}`);
    }
  }

  /** The last line, when the stream ended without a newline after it. */
  end(onLine: (line: string) => void): void {
    if (!this.parts.length) return;
    const line = Buffer.concat(this.parts).toString('utf8');
    this.parts = [];
    this.held = 0;
    if (line.trim()) onLine(line);
  }
}
