// A timestamp: the viewer's time zone once hydrated (UTC on the server's render), UTC on hover, to the millisecond
// where the instant has them (two states of a pool can share a second).

import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { LocalTime } from './local-time';

describe('LocalTime', () => {
  it('shows the second, and the millisecond on hover when the instant has one', () => {
    const html = renderToStaticMarkup(<LocalTime iso="2026-12-04T15:46:30.562Z" />);
    expect(html).toContain('dateTime="2026-12-04T15:46:30.562Z"');
    expect(html).toContain('title="04 Dec 2026, 15:46:30.562 UTC"');
    expect(html).toContain('>04 Dec 2026, 15:46:30 UTC</time>');
  });

  it('leaves the milliseconds out of an instant on a whole second', () => {
    expect(renderToStaticMarkup(<LocalTime iso="2026-12-04T15:46:30Z" />)).toContain(
      'title="04 Dec 2026, 15:46:30 UTC"',
    );
    expect(renderToStaticMarkup(<LocalTime iso={null} />)).toBe('<span>—</span>');
  });
});
