// Links and requests at the edges of what poolscope reads, against the demo stack: each answered with a message
// saying what is wrong (a page, or the API's JSON error), never a bare 500 or a view of something else.

import { expect, test, type Page } from '@playwright/test';

const POOL = '/pools/mgmt-weu/default/system';

const alert = (page: Page) => page.getByRole('main').getByRole('alert');

test('a pool link with an inherited key for a range, an impossible date or a future instant says so', async ({ page }) => {
  for (const [query, message] of [
    ['range=toString', '"range" must be one of 1h, 6h, 24h, 7d, 30d; got "toString"'],
    ['range=__proto__', '"range" must be one of 1h, 6h, 24h, 7d, 30d; got "__proto__"'],
    ['at=2026-02-30T10:00:00Z', '"at" names a day that does not exist (February 2026 has 28 days)'],
    ['at=2026-11-29T25:00:00Z', '"at" names a time of day that does not exist'],
    [`at=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}`, 'is in the future'],
    ['from=0001-01-01T00:00:00Z', 'A time range can span at most 31 days'],
  ]) {
    const res = await page.goto(`${POOL}?${query}`);
    expect(res?.status(), query).toBe(200);
    await expect(alert(page)).toContainText("This link's time range cannot be read");
    await expect(alert(page)).toContainText(message as string);
  }
});
