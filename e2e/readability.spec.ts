// Readable at a glance (issue #59): the timeline's legend, folded lanes and crosshair; the changes in words; the
// fleet's replica cells and grouping; one time format in the picker; and the pool page's height on a laptop and a
// phone, checked from a full-page screenshot's size and where its parts start (no image is kept).

import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import type { FleetResponse, PoolResponse } from '../lib/api-types';
import { REPLICA_SERIES } from '../lib/timeline';

test('the timeline has a legend and folds the lanes that never changed, on request unfolded', async ({ page }) => {
  // A window that has ended: its lanes do not change while the test counts them.
  const to = new Date();
  const from = new Date(to.getTime() - 3_600_000);
  await page.goto(`/pools/mgmt-weu/default/workers?from=${from.toISOString()}&to=${to.toISOString()}`);
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

test('the fleet groups by management or workload cluster, the grouping kept in the URL and not sent to the API', async ({
  page,
  request,
}) => {
  const apiQueries: string[] = [];
  page.on('request', (r) => {
    if (new URL(r.url()).pathname === '/api/pools') apiQueries.push(new URL(r.url()).search);
  });
  await page.goto('/');
  const fleet = ((await (await request.get('/api/pools')).json()) as FleetResponse).pools;
  const group = page.getByLabel('Group by');
  await group.selectOption({ label: 'Management cluster' });
  await expect(page).toHaveURL(/[?&]group=context/);
  const contexts = [...new Set(fleet.map((p) => p.ref.context))];
  const groups = page.locator('#pools tbody[data-group]');
  await expect(groups).toHaveCount(contexts.length);
  for (const c of contexts) {
    const n = fleet.filter((p) => p.ref.context === c).length;
    const head = page.getByRole('rowheader', { name: new RegExp(`^Management cluster ${c} · ${n} pools?`) });
    await expect(head).toBeVisible();
  }
  // Each pool sits in its context's group.
  for (const p of fleet)
    await expect(page.locator(`tbody[data-group="${p.ref.context}"] tr[data-pool="${p.key}"]`)).toBeAttached();
  await group.selectOption({ label: 'Workload cluster' });
  await expect(page).toHaveURL(/[?&]group=cluster/);
  const clusters = new Set(fleet.map((p) => JSON.stringify([p.ref.context, p.ref.namespace, p.clusterName ?? ''])));
  await expect(groups).toHaveCount(clusters.size);
  await expect(page.getByRole('rowheader').first()).toHaveText(/^Workload cluster \S+ in \S+ \/ \S+ · \d+ pools?/);
  const a11y = await new AxeBuilder({ page }).analyze();
  expect(a11y.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
  // A link keeps the grouping; the API never sees it (it would refuse it), and a wrong one is refused by the page.
  await page.reload();
  await expect(groups).toHaveCount(clusters.size);
  expect(apiQueries.filter((q) => q.includes('group'))).toEqual([]);
  expect((await request.get('/api/pools?group=context')).status()).toBe(400);
  await page.goto('/?group=region');
  await expect(page.getByRole('alert').filter({ hasText: 'cannot be read' })).toContainText(
    '"group": must be one of context, cluster',
  );
});

test.describe('in Berlin', () => {
  test.use({ timezoneId: 'Europe/Berlin' });
  test('the time picker shows and reads the app’s one time format, and says what is wrong with a time', async ({
    page,
    request,
  }) => {
    await page.goto('/pools/mgmt-weu/default/workers');
    const box = page.getByRole('textbox', { name: 'Show the state at' });
    // The viewer's zone, in the format the rest of the app uses (not the browser's 12/05/2026, 09:39:58 PM).
    await expect(box).toHaveValue(/^\d{2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2}:\d{2} CET$/);
    // The pool's latest state, typed in UTC: within the demo's record, which starts when the demo does.
    const latest = ((await (await request.get('/api/pools/mgmt-weu/default/workers')).json()) as PoolResponse).pool.at;
    const then = new Date(Math.ceil(Date.parse(latest) / 1000) * 1000);
    const inZone = (timeZone: string) =>
      new Intl.DateTimeFormat('en-GB', {
        year: 'numeric',
        month: 'short',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
        hour12: false,
        timeZone,
        timeZoneName: 'short',
      }).format(then);
    await box.fill(inZone('UTC'));
    await page.getByRole('button', { name: 'Go' }).click();
    await expect(page).toHaveURL(new RegExp(`[?&]at=${encodeURIComponent(then.toISOString())}`));
    // Shown again in the viewer's zone, an hour ahead of UTC in a Berlin winter.
    await expect(box).toHaveValue(inZone('Europe/Berlin'));
    expect(inZone('Europe/Berlin')).toMatch(/ CET$/);
    await box.fill('31 Feb 2026, 10:00');
    await page.getByRole('button', { name: 'Go' }).click();
    await expect(page.getByRole('alert').filter({ hasText: 'February 2026 has 28 days' })).toBeVisible();
    await expect(box).toHaveAttribute('aria-invalid', 'true');
    await box.fill('01 Jan 2099, 10:00 UTC');
    await page.getByRole('button', { name: 'Go' }).click();
    await expect(page.getByRole('alert').filter({ hasText: 'has not happened yet' })).toContainText(
      '01 Jan 2099, 11:00:00 CET has not happened yet',
    );
    await expect(page).toHaveURL(new RegExp(`[?&]at=${encodeURIComponent(then.toISOString())}`));
  });
});

/** A PNG's width and height, from its header. */
const pngSize = (png: Buffer) => ({ width: png.readUInt32BE(16), height: png.readUInt32BE(20) });

/** Where each of the pool page's parts starts, from the top of the page. */
const tops = (page: Page) =>
  page.evaluate(() =>
    Object.fromEntries(
      ['findings-h', 'verdict-h', 'timeline-h', 'drift-h', 'instances-h', 'changes-h'].map((id) => [
        id,
        (document.getElementById(id) as HTMLElement).getBoundingClientRect().top + window.scrollY,
      ]),
    ),
  );

for (const { width, height, pool, maxScreens, firstScreen } of [
  // A settled pool on a laptop: everything down to the drift matrix on the first screen.
  { width: 1440, height: 900, pool: 'system', maxScreens: 2.5, firstScreen: ['findings-h', 'verdict-h', 'drift-h'] },
  { width: 390, height: 844, pool: 'system', maxScreens: 4, firstScreen: ['findings-h'] },
  // The demo's busiest pool, whatever state it is in: its steps may push the rest down, but the page stays bounded.
  { width: 1440, height: 900, pool: 'workers', maxScreens: 3.5, firstScreen: ['findings-h', 'verdict-h'] },
  { width: 390, height: 844, pool: 'workers', maxScreens: 7, firstScreen: ['findings-h'] },
]) {
  test(`the ${pool} pool's page on ${width}×${height} fits ${maxScreens} screens, its long tables a screenful each`, async ({
    page,
  }) => {
    await page.setViewportSize({ width, height });
    await page.goto(`/pools/mgmt-weu/default/${pool}`);
    await expect(page.getByTestId('timeline-chart')).toBeVisible();
    await expect(page.locator('section[aria-labelledby="changes-h"] tbody tr').first()).toBeVisible();
    const shot = pngSize(await page.screenshot({ fullPage: true }));
    expect(shot.width).toBe(width);
    expect(shot.height, 'page height').toBeLessThanOrEqual(height * maxScreens);
    const at = await tops(page);
    for (const id of firstScreen) expect(at[id], `${id} on the first screen`).toBeLessThan(height - 60);
    // The drift matrix, instances and changes each scroll in a box of at most 60% of the screen.
    const boxes = await page.locator('[data-scroll-box]').evaluateAll((els) => els.map((e) => e.clientHeight));
    expect(boxes).toHaveLength(3);
    for (const h of boxes) expect(h).toBeLessThanOrEqual(Math.ceil(height * 0.6));
  });
}
