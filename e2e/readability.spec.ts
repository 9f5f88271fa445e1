// The timeline readable at a glance (issue #59, the parts built so far): a legend, the lanes that never changed
// folded into one line, and the replica chart's crosshair listing every series at one instant.

import { expect, test } from '@playwright/test';
import type { FleetResponse } from '../lib/api-types';
import { REPLICA_SERIES } from '../lib/timeline';

test('the timeline has a legend and folds the lanes that never changed, on request unfolded', async ({ page }) => {
  await page.goto('/pools/mgmt-weu/default/workers?range=1h');
  const chart = page.getByTestId('timeline-chart');
  await expect(chart).toBeVisible();
  const legend = page.getByRole('list', { name: 'Timeline legend' });
  await expect(legend).toContainText('failed, not ready, critical');
  await expect(legend).toContainText('▲ Event');
  await expect(legend).toContainText('◆ resync');
  const folded = page.getByTestId('unchanged-lanes');
  await expect(folded).toContainText(/^\d+ lanes? unchanged in this window: /);
  const n = Number((await folded.innerText()).split(' ')[0]);
  const shown = Number(await chart.getAttribute('data-lanes'));
  await page.getByRole('button', { name: 'Show them' }).click();
  await expect(chart).toHaveAttribute('data-lanes', String(shown + n));
  // One lane per fact: each ready flag and the condition that restates it are one lane.
  const fields = (await chart.getAttribute('data-lane-fields'))?.split(' ') ?? [];
  expect(fields).toEqual(expect.arrayContaining(['amp.ready', 'mp.infrastructureReady']));
  expect(fields).not.toContain('condition.amp.Ready');
  expect(fields).not.toContain('condition.mp.InfrastructureReady');
  await page.getByRole('button', { name: 'Fold the unchanged lanes' }).click();
  await expect(chart).toHaveAttribute('data-lanes', String(shown));
});

test("the replica chart's crosshair lists every series at the instant under the pointer", async ({ page }) => {
  await page.goto('/pools/mgmt-weu/default/workers?range=1h');
  const chart = page.getByTestId('timeline-chart');
  await expect(chart).toBeVisible();
  await chart.scrollIntoViewIfNeeded();
  const box = await chart.boundingBox();
  // The replica grid: 180 px tall, 50 px above the chart's bottom (the zoom bar below it).
  await page.mouse.move(box!.x + box!.width * 0.8, box!.y + box!.height - 140);
  const tip = page.locator('[data-crosshair]');
  await expect(tip).toBeVisible();
  for (const s of REPLICA_SERIES)
    await expect(tip).toContainText(new RegExp(`${s.label.replace(/[()]/g, '\\$&')}: (\\d+|unknown)`));
});

test('the changes read in words, grouped by instant, and filter by kind', async ({ page }) => {
  await page.goto('/pools/mgmt-weu/default/workers?range=1h');
  const changes = page.locator('section[aria-labelledby="changes-h"]');
  const rows = changes.locator('tbody tr');
  await expect(rows.first()).toBeVisible();
  // Every change of the hour on screen (the newest 50 may be list churn alone).
  while (await changes.getByRole('button', { name: 'Show more' }).isVisible())
    await changes.getByRole('button', { name: 'Show more' }).click();
  // No raw keys: "MachinePool list", "4 IDs", not "list.mp" and "4:3f2a…".
  await expect(changes.locator('td[data-label="What"]', { hasText: /^list\.|^replicas\./ })).toHaveCount(0);
  await expect(
    changes.locator('td[data-label="From"], td[data-label="To"]', { hasText: /^\d+:[0-9a-f]{8}$/ }),
  ).toHaveCount(0);
  // Changes of one instant: its time once.
  const grouped = changes.locator('tbody tr[data-same-instant]');
  await expect(grouped.first()).toBeAttached();
  await expect(grouped.first().locator('td[data-label="Time"]')).toHaveText('same instant');
  // Each kind can be hidden.
  const filters = changes.getByRole('group', { name: 'Show changes of kind' });
  const findings = filters.getByRole('button', { name: /^Findings \(\d+\)$/ });
  await expect(changes.locator('tbody tr[data-kind="finding"]').first()).toBeAttached();
  await findings.click();
  await expect(findings).toHaveAttribute('aria-pressed', 'false');
  await expect(changes.locator('tbody tr[data-kind="finding"]')).toHaveCount(0);
  await findings.click();
  await expect(changes.locator('tbody tr[data-kind="finding"]').first()).toBeVisible();
});

test('the fleet names each replica count and marks one that differs; worst first reads as descending', async ({
  page,
  request,
}) => {
  await page.goto('/');
  const api = (await (await request.get('/api/pools')).json()) as FleetResponse;
  const p = api.pools[0]!;
  const row = page.locator(`tr[data-pool="${p.key}"]`);
  await expect(row).toBeVisible();
  for (const [k, short] of [
    ['desired', 'want'],
    ['azureInstances', 'Azure'],
    ['capz', 'CAPZ'],
    ['capi', 'CAPI'],
    ['readyNodes', 'Ready'],
  ] as const) {
    await expect(row.locator('td[data-label="Replicas"]')).toContainText(short);
    await expect(row.locator(`[data-replica="${k}"]`)).toBeAttached();
  }
  // A count that differs from the desired one is marked, and only such a count (the page may be newer than the API).
  await expect(async () => {
    const fresh = ((await (await request.get('/api/pools')).json()) as FleetResponse).pools;
    for (const q of fresh) {
      const marked = await page
        .locator(`tr[data-pool="${q.key}"] [data-replica][data-off]`)
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-replica')));
      const off = (['azureInstances', 'capz', 'capi', 'readyNodes'] as const).filter(
        (k) => q.replicas[k] !== q.replicas.desired,
      );
      expect(marked.sort(), q.key).toEqual([...off].sort());
    }
  }).toPass({ timeout: 20_000 });
  await expect(page.getByRole('columnheader', { name: /Worst finding/ })).toHaveAttribute('aria-sort', 'descending');
  await expect(row.locator('td[data-label="Last change"]')).toContainText(/\d+ (s|min|h|d)( \d+ (min|h))? ago/);
  // A keyboard user skips the sources and the filters.
  const skip = page.getByRole('link', { name: 'Skip to the pools' });
  await skip.focus();
  await page.keyboard.press('Enter');
  await expect(page.locator('#pools')).toBeFocused();
});

test('a drag across the chart zooms to that span, in the URL; a double-click goes back to the range', async ({
  page,
}) => {
  await page.goto('/pools/mgmt-weu/default/workers?range=1h');
  const chart = page.getByTestId('timeline-chart');
  await expect(chart).toBeVisible();
  await chart.scrollIntoViewIfNeeded();
  const box = (await chart.boundingBox())!;
  const y = box.y + box.height - 140;
  await page.mouse.move(box.x + box.width * 0.5, y);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.7, y, { steps: 5 });
  await page.mouse.up();
  await expect(page).toHaveURL(/[?&]from=[^&]+&to=/);
  const u = new URL(page.url());
  expect(Date.parse(u.searchParams.get('to')!)).toBeGreaterThan(Date.parse(u.searchParams.get('from')!));
  await expect(page).not.toHaveURL(/[?&]at=/);
  await chart.scrollIntoViewIfNeeded();
  const again = (await chart.boundingBox())!;
  await page.mouse.dblclick(again.x + again.width * 0.6, again.y + again.height - 140);
  await expect(page).not.toHaveURL(/from=/);
});
