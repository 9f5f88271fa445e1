import { expect, test } from '@playwright/test';

test('the home page renders, says it is not connected yet, and logs no errors', async ({ page }) => {
  const errors: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto('/');
  await expect(page.getByRole('heading', { level: 1, name: 'poolscope' })).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Not connected to a fleet yet' })).toBeVisible();
  await expect(page.getByRole('listitem').filter({ hasText: 'readiness-gate-frozen' })).toBeVisible();
  await expect(page.getByRole('listitem').filter({ hasText: 'missing-from-machinepool' })).toBeVisible();
  expect(errors).toEqual([]);
});

test('an unknown address shows the not-found page with a way back', async ({ page }) => {
  const res = await page.goto('/no/such/page');
  expect(res?.status()).toBe(404);
  await expect(page.getByRole('heading', { name: 'Page not found' })).toBeVisible();
  await page.getByRole('link', { name: 'Back to poolscope' }).click();
  await expect(page).toHaveURL('/');
});
