// A MachinePool deleted from its management cluster: poolscope records when it went, leaves it out of the fleet
// (a filter shows it), keeps its last state on its page, and offers no resync. The demo's `spot` pool is deleted
// here: no later test uses it (files run in name order, one worker).

import { expect, test } from '@playwright/test';
import { deleteMachinePool, pool } from './fleet';

const SPOT = 'mgmt-weu/default/spot';

test('a deleted MachinePool leaves the fleet, and its page says when it went and shows its last state', async ({
  page,
  request,
}) => {
  await deleteMachinePool('mgmt-weu', 'spot');
  await expect
    .poll(async () => (await pool(request, SPOT)).pool.summary.deletedAt ?? null, { timeout: 30_000 })
    .not.toBeNull();
  const gone = (await pool(request, SPOT)).pool;

  await page.goto('/');
  await expect(page.locator('tr[data-pool="mgmt-weu/default/system"]')).toBeVisible();
  await expect(page.locator(`tr[data-pool="${SPOT}"]`)).toHaveCount(0);
  await expect(page.getByText('(1 deleted or not watched, not shown)')).toBeVisible();
  await page.getByLabel('Show deleted or not watched (1)').check();
  await expect(page).toHaveURL(/[?&]deleted=1/);
  const row = page.locator(`tr[data-pool="${SPOT}"]`);
  await expect(row.getByText('deleted', { exact: true })).toBeVisible();

  await row.getByRole('link', { name: 'spot' }).click();
  await expect(page.getByTestId('deleted')).toContainText('This MachinePool was deleted at');
  await expect(page.getByTestId('resync-button')).toBeDisabled();
  await expect(page.locator('#resync-why')).toHaveText('The MachinePool is deleted: there is nothing to resync.');
  // Its last state, as the API keeps it.
  await expect(page.locator('section[aria-labelledby="instances-h"] tbody tr')).toHaveCount(gone.instances.length);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('spot');
});
