// Links and requests at the edges of what poolscope reads, against the demo stack: each answered with a message
// saying what is wrong (a page, or the API's JSON error), never a bare 500 or a view of something else.

import { expect, test, type Page } from '@playwright/test';
import type { ApiError } from '../lib/api-types';
import { fleet } from './fleet';

const POOL = '/pools/mgmt-weu/default/system';

const alert = (page: Page) => page.getByRole('main').getByRole('alert');

test('a fleet link the API would refuse says what is wrong, and leads to the fleet without it', async ({
  page,
  request,
}) => {
  for (const [query, message] of [
    ['sort=size', '"sort": must be one of pool, context'],
    ['severity=high', '"severity": must be one of critical, warning, info'],
    ['drifting=maybe', '"drifting": must be 1, true, 0 or false'],
    ['colour=red', 'unknown query parameter "colour"'],
  ]) {
    expect((await request.get(`/api/pools?${query}`)).status(), query).toBe(400);
    await page.goto(`/?context=mgmt-weu&${query}`);
    await expect(alert(page)).toContainText("This link's filters cannot be read");
    await expect(alert(page)).toContainText(message as string);
    await expect(page.locator('tbody tr')).toHaveCount(0);
  }
  await page.getByRole('link', { name: 'Show the fleet without them' }).click();
  await expect(page).toHaveURL(/\/\?context=mgmt-weu$/);
  const weu = (await fleet(request)).pools.filter((p) => p.ref.context === 'mgmt-weu');
  await expect(page.locator('tbody tr')).toHaveCount(weu.length);
  // Empty parameters are absent, as a form leaves them.
  await page.goto('/?q=&sort=');
  await expect(page.locator('tbody tr').first()).toBeVisible();
});

test('a pool link with an inherited key for a range, an impossible date or a future instant says so', async ({
  page,
}) => {
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

test("a path with malformed percent-encoding: a 400 page, or the API's JSON 400", async ({ page, request }) => {
  const res = await page.goto('/pools/a/%E0%A4%A/b');
  expect(res?.status()).toBe(400);
  await expect(page.getByRole('heading', { name: 'This address cannot be read' })).toBeVisible();
  await page.getByRole('link', { name: 'Back to all pools' }).click();
  await expect(page.locator('tbody tr').first()).toBeVisible();
  for (const path of ['/api/pools/%zz/x/y', '/api/pools/mgmt-weu/default/%E0%A4%A/timeline', '/api/%zz']) {
    const api = await request.get(path);
    expect(api.status(), path).toBe(400);
    expect(((await api.json()) as ApiError).error.code, path).toBe('invalid-path');
  }
});

test('TRACE is refused with 405 and Allow; a __proto__ query parameter is named as unknown', async ({ request }) => {
  const trace = await request.fetch('/api/pools', { method: 'TRACE' });
  expect([trace.status(), trace.headers().allow]).toEqual([405, 'GET, HEAD, OPTIONS']);
  expect(((await trace.json()) as ApiError).error).toEqual({
    code: 'method-not-allowed',
    message: 'TRACE is not served at /api/pools; it answers GET.',
  });
  expect((await request.fetch('/', { method: 'TRACE' })).status()).toBe(405);
  const proto = await request.get('/api/pools?__proto__=x');
  expect(proto.status()).toBe(400);
  expect(((await proto.json()) as ApiError).error).toEqual({
    code: 'invalid-query',
    message: 'unknown query parameter "__proto__"',
  });
});
