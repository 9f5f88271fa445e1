import { describe, expect, it } from 'vitest';
import { reportLine, reportOf } from './report-line';

describe('the collector benchmark report line', () => {
  it('is found among the collector log lines, also when one comes after it', () => {
    const log = (msg: string) => JSON.stringify({ level: 'info', msg });
    const out = [log('collector started'), reportLine({ steadyRssMB: { p50: 380 } }), log('collector cycles'), ''].join(
      '\n',
    );
    expect(reportOf(out)).toEqual({ steadyRssMB: { p50: 380 } });
  });

  it('is an error naming the output when the process printed none', () => {
    expect(() => reportOf(`${JSON.stringify({ level: 'info', msg: 'collector cycles' })}\n`)).toThrow(
      /no report in the measuring process's output: .*collector cycles/,
    );
  });
});
