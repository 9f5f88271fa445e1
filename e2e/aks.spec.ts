// AKS pools in the demo (sim/scenarios/demo.yaml, aksPools): an AzureManagedMachinePool whose scale failed for
// quota (K5) and an AzureASOManagedMachinePool whose replicas lag AKS's autoscaler (K2), read by the collector from
// the simulated management and workload clusters and shown as an operator sees them.

import { expect, test } from '@playwright/test';
import type { FleetResponse } from '../lib/api-types';
import { pool, readMachinePool } from './fleet';

const USER = 'mgmt-weu/default/aks-user';
const JOBS = 'mgmt-weu/default/aks-jobs';

test('the fleet marks AKS pools by kind, and the kind filter is a link', async ({ page, request }) => {
  await page.goto('/');
  await expect(page.locator(`tr[data-pool="${USER}"]`).getByText('AKS', { exact: true })).toBeVisible();
  await expect(page.locator(`tr[data-pool="${JOBS}"]`).getByText('AKS (ASO)', { exact: true })).toBeVisible();
  await page.getByLabel('Kind').selectOption('aks-aso');
  await expect(page).toHaveURL(/[?&]kind=aks-aso/);
  await expect(page.locator('tbody tr')).toHaveCount(1);
  await expect(page.locator(`tr[data-pool="${JOBS}"]`)).toBeVisible();
  const api = (await (await request.get('/api/pools?kind=aks-managed')).json()) as FleetResponse;
  expect(api.pools.map((p) => p.key)).toEqual([USER]);
  expect((await request.get('/api/pools?kind=vmss')).status()).toBe(400);
});

test("a failed AKS scale: the freeze chained to AKS's error, no list copy offered, its own columns", async ({
  page,
  request,
}) => {
  await expect
    .poll(async () => (await pool(request, USER)).pool.findings.map((f) => f.code), { timeout: 30_000 })
    .toEqual(expect.arrayContaining(['readiness-gate-frozen', 'aks-pool-failed']));
  const p = await pool(request, USER);
  expect(p.pool.summary.flavour).toBe('aks-managed');
  expect(p.pool.verdict.syncProviderIds.allowed).toBe(false);
  await page.goto(`/pools/${USER}`);
  await expect(page.getByText('· AzureManagedMachinePool', { exact: true })).toBeVisible();
  await expect(page.locator('[data-finding="readiness-gate-frozen"]')).toContainText('its own list is frozen too');
  await expect(page.getByText(/AKS agent pool user failed \(QuotaExceeded\)/).first()).toBeVisible();
  const drift = page.locator('section[aria-labelledby="drift-h"]');
  await expect(drift.getByRole('columnheader', { name: 'AzureManagedMachinePool spec.providerIDList' })).toBeVisible();
  await expect(drift.getByRole('columnheader', { name: 'AzureMachinePoolMachines' })).toHaveCount(0);
});

test("autoscaled ASO pool: the replicas are ASO's cached count, said as such", async ({ request }) => {
  // Once the workload cluster's Nodes are read, the finding counts them.
  await expect
    .poll(
      async () =>
        (await pool(request, JOBS)).pool.findings.find((x) => x.code === 'aks-replicas-cached')?.summary ?? null,
      { timeout: 30_000 },
    )
    .toBe("MachinePool replicas lag AKS's autoscaler: they follow ASO's cached count (3), AKS counts 5.");
});

test('Resync on an AKS pool: a reconcile of its own kind, never a list copy', async ({ page }) => {
  await page.goto(`/pools/${JOBS}`);
  await expect(page.locator('#resync-why')).toHaveText(/Signed in as operator/);
  await page.getByTestId('resync-button').click();
  const dialog = page.getByTestId('resync-dialog');
  await expect(dialog.getByRole('radio', { name: /Copy providerIDs/ })).toBeDisabled();
  await expect(dialog).toContainText("freezes with the MachinePool's");
  await expect(dialog.getByRole('radio', { name: /Reconcile/ })).toBeChecked();
  await expect(dialog).toContainText('Annotates the AzureASOManagedMachinePool, then the MachinePool');
  await expect(dialog.getByTestId('resync-preview')).toContainText(
    'the API server accepted the annotation on the AzureASOManagedMachinePool and the MachinePool',
  );
  await dialog.getByTestId('resync-confirm').click();
  await expect(dialog.getByTestId('resync-result')).toContainText(
    'Reconcile triggered on the AzureASOManagedMachinePool and the MachinePool',
    { timeout: 30_000 },
  );
  const mp = (await readMachinePool('mgmt-weu', 'aks-jobs')) as { metadata?: { annotations?: Record<string, string> } };
  expect(mp.metadata?.annotations?.['poolscope.dev/resync-requested-at']).toBeTruthy();
});
