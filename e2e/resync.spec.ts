// Resync in the browser, against the demo stack (its auth proxy signs the browser in as the simulator's
// `operator`): copying the list of the frozen seed pool clears its drift on screen; a viewer sees the button
// disabled and gets 403 from the API; a cross-site POST gets 403; the dialog acts on the pool as it is when it
// opens, both ways, and shows a reconcile's steps. Runs after dashboard.spec.ts, which expects mgmt-neu/general
// still frozen.

import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { patchMachinePool, pool, readMachinePool, tokenOf } from './fleet';

const GENERAL = 'mgmt-neu/default/general';
const URL_ = `/api/pools/${GENERAL}/resync`;

test.describe.configure({ mode: 'serial' });

test('a viewer sees Resync disabled with the reason, and the API refuses them', async ({ browser, request }) => {
  const viewer = await browser.newContext({ extraHTTPHeaders: { authorization: `Bearer ${tokenOf('viewer')}` } });
  const page = await viewer.newPage();
  await page.goto(`/pools/${GENERAL}`);
  await expect(page.getByTestId('resync-button')).toBeDisabled();
  await expect(page.locator('#resync-why')).toHaveText(
    /viewer may not patch machinepools\.cluster\.x-k8s\.io "general" in namespace default on mgmt-neu/,
  );
  await viewer.close();
  const r = await request.post(URL_, {
    headers: { authorization: `Bearer ${tokenOf('viewer')}`, 'x-poolscope-request': '1' },
    data: { mode: 'sync-provider-ids' },
  });
  expect(r.status()).toBe(403);
  expect((await r.json()).error.code).toBe('forbidden');
});

test('a cross-site POST is refused before anything happens', async ({ request }) => {
  const r = await request.post(URL_, {
    headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site', 'x-poolscope-request': '1' },
    data: { mode: 'sync-provider-ids' },
  });
  expect(r.status()).toBe(403);
  expect((await r.json()).error.code).toBe('cross-site');
  const form = await request.post(URL_, {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    data: 'mode=sync-provider-ids',
  });
  expect(form.status()).toBe(403);
});

test('copying the list of the frozen seed pool clears its drift on screen, with a marker in the timeline', async ({
  page,
}) => {
  await page.goto(`/pools/${GENERAL}?range=1h`);
  await expect(page.locator('[data-drift="missing-from-machinepool"]')).toHaveCount(1);
  await expect(page.locator('#resync-why')).toHaveText(/Signed in as operator \(proxy:demo-auth-proxy\)/);
  await page.getByTestId('resync-button').click();
  const dialog = page.getByTestId('resync-dialog');
  await expect(dialog).toBeVisible();
  // The recommended mode is preselected and previewed with a server-side dry run.
  await expect(dialog.getByRole('radio', { name: /Copy providerIDs/ })).toBeChecked();
  await expect(dialog.getByTestId('resync-preview')).toContainText(/1 ID added, 0 removed\)\. Nothing was written/);
  await expect(dialog.getByTestId('resync-preview')).toContainText('+ general/virtualMachines/3');
  expect(
    (await new AxeBuilder({ page }).include('[data-testid="resync-dialog"]').analyze()).violations.filter(
      (v) => v.impact === 'serious' || v.impact === 'critical',
    ),
  ).toEqual([]);
  const before = (await readMachinePool('mgmt-neu', 'general')).spec.providerIDList ?? [];
  await dialog.getByTestId('resync-confirm').click();
  await expect(dialog.getByTestId('resync-result')).toContainText(
    /Copied the AzureMachinePool list into the MachinePool: 1 ID added, 0 removed/,
  );
  expect((await readMachinePool('mgmt-neu', 'general')).spec.providerIDList).toHaveLength(before.length + 1);
  await page.screenshot({ path: 'test-results/artifacts/resync-dialog.png' });
  await dialog.getByRole('button', { name: 'Close' }).click();
  await expect(dialog).toBeHidden();
  // The collector sees the new list; the page follows without a reload.
  await expect(page.locator('[data-drift="missing-from-machinepool"]')).toHaveCount(0, { timeout: 20_000 });
  await expect(page.getByRole('region', { name: /Changes in this window/ })).toContainText(
    'Copy providerIDs by operator: done',
  );
});

test('the API reports the resync and its Event', async ({ request }) => {
  const d = await pool(request, GENERAL);
  expect(d.pool.drift.filter((x) => x.kind === 'missing-from-machinepool')).toEqual([]);
  const tl = (await (
    await request.get(`/api/pools/${GENERAL}/timeline?from=${new Date(Date.now() - 3_600_000).toISOString()}`)
  ).json()) as { entries: { field: string; to: string | null }[]; markers: { kind: string; label: string }[] };
  expect(tl.markers.filter((m) => m.kind === 'resync').map((m) => m.label)).toEqual([
    'Resync: Copy providerIDs by operator: done',
  ]);
  // The Kubernetes Event reached the collector too (it records Events about pools).
  await expect
    .poll(
      async () => {
        const t = (await (
          await request.get(`/api/pools/${GENERAL}/timeline?from=${new Date(Date.now() - 3_600_000).toISOString()}`)
        ).json()) as { entries: { field: string }[] };
        return t.entries.some((e) => e.field === 'event.PoolscopeResync');
      },
      { timeout: 20_000 },
    )
    .toBe(true);
});

const SYSTEM = 'mgmt-weu/default/system';

test('the dialog acts on the pool as it is now, after the pool changed under the page, both ways (#58)', async ({
  page,
}) => {
  test.setTimeout(150_000);
  await page.goto(`/pools/${SYSTEM}?range=1h`);
  await expect(page.locator('[data-live="live"]')).toBeVisible();
  // The page reads what the operator may do while the pool is healthy: Resync is a secondary action then.
  await expect(page.locator('#resync-why')).toHaveText(/Signed in as operator/);
  const button = page.getByTestId('resync-button');
  await expect(button).toHaveAttribute('data-emphasis', 'secondary');

  // Scaling under CAPZ < 1.20 marks the AzureMachinePool not ready: the MachinePool list freezes under the page.
  await patchMachinePool('mgmt-weu', 'system', { spec: { replicas: 6 } });
  await expect(page.locator('[data-finding="readiness-gate-frozen"]')).toBeVisible({ timeout: 20_000 });
  // Copying is recommended once Azure's read holds the new VMs the AzureMachinePool lists (until then it would add
  // IDs Azure has not shown): the scale set waits its turn at the region's Compute budget, up to a minute.
  await expect(button).toHaveAttribute('data-emphasis', 'primary', { timeout: 75_000 });

  // (a) Opened now, the dialog checks the pool afresh: copying is allowed, recommended and preselected.
  await button.click();
  const dialog = page.getByTestId('resync-dialog');
  await expect(dialog.getByRole('heading', { name: 'Resync MachinePool default/system in mgmt-weu' })).toBeVisible();
  const copy = dialog.getByRole('radio', { name: /Copy providerIDs/ });
  const copyRow = dialog.locator('label').filter({ has: page.getByRole('radio', { name: /Copy providerIDs/ }) });
  await expect(copy).toBeChecked();
  await expect(copy).toBeEnabled();
  await expect(copyRow).toContainText('recommended');
  await expect(dialog.getByTestId('resync-preview')).toContainText(/\d+ IDs? added, 0 removed\)\. Nothing was written/);
  await dialog.getByTestId('resync-confirm').click();
  await expect(dialog.getByTestId('resync-result')).toContainText(
    /Copied the AzureMachinePool list into the MachinePool/,
  );
  await dialog.getByRole('button', { name: 'Close' }).click();
  await expect(dialog).toBeHidden();

  // (b) Reopened at once, before the collector has stored the copy: the fresh state, not a preview refused with 409.
  await button.click();
  await expect(dialog.getByTestId('resync-preview')).toBeVisible();
  await expect(dialog.getByTestId('resync-preview-error')).toHaveCount(0);
  if (await copy.isDisabled()) {
    await expect(copyRow).toContainText('already holds the same IDs');
  }

  // A reconcile shows its steps: the annotations, the watch, and what the controllers did.
  await dialog.getByRole('radio', { name: /Reconcile/ }).check();
  await expect(dialog.getByTestId('resync-preview')).toContainText(/Dry run: the API server accepted the annotation/);
  await expect(dialog.getByTestId('resync-confirm')).toHaveText('Reconcile');
  await dialog.getByTestId('resync-confirm').click();
  const steps = dialog.getByTestId('resync-steps');
  await expect(steps.locator('[data-step="amp-annotated"]')).toContainText(
    /Annotated AzureMachinePool default\/system/,
  );
  await expect(dialog.getByTestId('resync-result')).toContainText(/Reconcile triggered/, { timeout: 30_000 });
  await expect(steps.locator('li[data-step]').first()).toHaveAttribute('data-step', 'checked');
  for (const code of ['mp-annotated', 'watching', 'finished'])
    await expect(steps.locator(`[data-step="${code}"]`)).toHaveCount(1);
  await dialog.getByRole('button', { name: 'Close' }).click();
});
