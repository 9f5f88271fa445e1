// The dashboard against the demo stack (simulated fleet at 10× speed): fleet, filters in the URL, the seed
// pools' pages, live updates, time travel, keyboard use, accessibility, screenshots.
// Long because the specs share one demo stack, started once for the run.

import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { DEMO_POOLS, fleet, patchMachinePool, pool } from './fleet';

function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}

async function axe(page: Page) {
  const r = await new AxeBuilder({ page }).analyze();
  return r.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

test.describe.configure({ mode: 'serial' });

test('the fleet lists every demo pool with the drift counts the API reports', async ({ page, request }) => {
  const errors = watchErrors(page);
  // The failed VM of mgmt-neu/general (40 s simulated) freezes its list for good: wait for it.
  await expect
    .poll(
      async () =>
        (await fleet(request)).pools.find((p) => p.key === 'mgmt-neu/default/general')?.driftCounts[
          'missing-from-machinepool'
        ],
      { timeout: 30_000 },
    )
    .toBe(1);
  await page.goto('/');
  for (const key of DEMO_POOLS) await expect(page.locator(`tr[data-pool="${key}"]`)).toBeVisible();
  // The fleet keeps moving (10× speed); the live page must agree with the API once it has caught up.
  await expect(async () => {
    const api = await fleet(request);
    for (const p of api.pools) {
      const shown = await page
        .locator(`tr[data-pool="${p.key}"] [data-drift-kind]`)
        .evaluateAll((els) =>
          els.map((e) => `${e.getAttribute('data-drift-kind')}: ${e.textContent?.split(': ').pop()}`).sort(),
        );
      expect(shown, p.key).toEqual(
        Object.entries(p.driftCounts)
          .map(([k, n]) => `${k}: ${n}`)
          .sort(),
      );
    }
  }).toPass({ timeout: 40_000 });
  // The failed VM: the autoscaler cannot see it. It has no Node, but it is failed, not running: no 'no Node' count.
  await expect(
    page.locator('tr[data-pool="mgmt-neu/default/general"] [data-drift-kind="missing-from-machinepool"]'),
  ).toHaveText(/: 1$/);
  await expect(
    page.locator('tr[data-pool="mgmt-neu/default/general"] [data-drift-kind="instance-without-node"]'),
  ).toHaveCount(0);
  await expect(page.locator('tr[data-pool="mgmt-weu/default/system"]')).toContainText('none');
  await expect(page.locator('tr[data-pool="mgmt-neu/default/general"]')).toContainText(
    'MachinePool providerIDList frozen',
  );
  await expect(page.getByRole('region', { name: 'Sources' })).toContainText('mgmt-weu');
  expect(errors).toEqual([]);
});

test('filters and sort live in the URL and survive a reload', async ({ page }) => {
  await page.goto('/');
  await page.getByLabel('Drifting only').check();
  await expect(page).toHaveURL(/[?&]drifting=1/);
  await expect(page.locator('tr[data-pool="mgmt-weu/default/system"]')).toHaveCount(0);
  await expect(page.locator('tr[data-pool="mgmt-neu/default/general"]')).toBeVisible();
  await page.reload();
  await expect(page.getByLabel('Drifting only')).toBeChecked();
  await expect(page.locator('tr[data-pool="mgmt-weu/default/system"]')).toHaveCount(0);
  await page.goto('/');
  await page.getByRole('searchbox').fill('batch');
  await expect(page).toHaveURL(/[?&]q=batch/);
  await expect(page.locator('tbody tr')).toHaveCount(1);
  await page.goto('/?sort=-pool&context=mgmt-weu');
  await expect(page.locator('tbody tr').first()).toHaveAttribute('data-pool', 'mgmt-weu/default/workers');
  // mgmt-weu's three self-managed pools and its two AKS pools.
  await expect(page.locator('tbody tr')).toHaveCount(5);
  await expect(page.getByLabel('Context')).toHaveValue('mgmt-weu');
});

test('the fleet counts pools by worst finding, and a count shows only those pools, in the URL', async ({
  page,
  request,
}) => {
  const errors = watchErrors(page);
  await page.goto('/');
  const tally = page.getByRole('group', { name: 'Pools by worst finding' });
  // The fleet keeps moving (10× speed): the counts agree with the API's pools once the page has caught up.
  await expect(async () => {
    const api = (await fleet(request)).pools;
    for (const s of ['critical', 'warning'] as const) {
      await expect(tally.getByTestId(`severity-${s}`)).toHaveText(
        `${api.filter((p) => p.worstFinding?.severity === s).length} ${s}`,
        { timeout: 1_000 },
      );
    }
    // Healthy pools are counted apart from the other info ones (the toggle shows both).
    const healthy = api.filter((p) => p.worstFinding?.code === 'healthy').length;
    const info = api.filter((p) => p.worstFinding?.severity === 'info').length - healthy;
    await expect(tally.getByTestId('severity-info')).toHaveText(
      healthy ? `${healthy} healthy · ${info} info` : `${info} info`,
      {
        timeout: 1_000,
      },
    );
  }).toPass({ timeout: 20_000 });
  // mgmt-neu/general's failed VM keeps its list frozen for good: critical; mgmt-weu/system stays healthy.
  await tally.getByTestId('severity-critical').click();
  await expect(page).toHaveURL(/[?&]severity=critical/);
  await expect(tally.getByTestId('severity-critical')).toHaveAttribute('aria-pressed', 'true');
  await expect(page.locator('tr[data-pool="mgmt-neu/default/general"]')).toBeVisible();
  await expect(page.locator('tr[data-pool="mgmt-weu/default/system"]')).toHaveCount(0);
  await expect(async () => {
    const api = await fleet(request);
    const critical = api.pools
      .filter((p) => p.worstFinding?.severity === 'critical')
      .map((p) => p.key)
      .sort();
    expect(
      (await page.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-pool')))).sort(),
    ).toEqual(critical);
    await expect(page.getByTestId('pool-count')).toHaveText(`${critical.length} of ${api.total} pools match`, {
      timeout: 1_000,
    });
  }).toPass({ timeout: 20_000 });
  await page.reload();
  await expect(tally.getByTestId('severity-critical')).toHaveAttribute('aria-pressed', 'true');
  await expect(page.locator('tr[data-pool="mgmt-weu/default/system"]')).toHaveCount(0);
  // Pressed again, it shows every severity.
  await tally.getByTestId('severity-critical').click();
  await expect(page).not.toHaveURL(/severity=/);
  await expect(page.locator('tr[data-pool="mgmt-weu/default/system"]')).toBeVisible();
  expect(errors).toEqual([]);
});

test('the seed pool page explains the freeze and shows the instances the autoscaler cannot see', async ({ page }) => {
  const errors = watchErrors(page);
  await page.goto('/pools/mgmt-neu/default/general?range=1h');
  await expect(page.getByRole('heading', { level: 1, name: 'general' })).toBeVisible();
  await expect(page.locator('[data-finding="readiness-gate-frozen"]')).toContainText(
    /MachinePool providerIDList frozen for .*OSProvisioningTimedOut/,
  );
  await expect(page.locator('[data-drift="missing-from-machinepool"]')).toHaveCount(1);
  // The drift line names its instance (the full providerID on hover).
  await expect(page.locator('[data-drift="missing-from-machinepool"] code')).toHaveAttribute(
    'title',
    /^azure:\/\/\/subscriptions\/.*\/virtualMachines\/\d+$/,
  );
  await expect(page.getByTestId('timeline-chart')).toBeVisible();
  // The simulator's pools are minutes old: the hour's chart opens where poolscope first saw the pool.
  await expect(page.getByTestId('timeline-chart')).toHaveAttribute('data-opens-at', /^\d{4}-/);
  await expect(page.getByTestId('timeline-chart')).toHaveAttribute('data-lane-labels', 'full');
  const opensAt = await page.getByTestId('timeline-chart').getAttribute('data-opens-at');
  expect(Date.parse(opensAt ?? '')).toBeGreaterThan(Date.now() - 40 * 60_000);
  await expect(page.getByRole('region', { name: /^Resync$/ })).toContainText('Copy providerIDs');
  expect(errors).toEqual([]);
});

test('the scale-up seed pool records the whole frozen period, start and end', async ({ page, request }) => {
  // mgmt-weu/workers scales 3 → 5 at 30 s simulated under CAPZ < 1.20: frozen until the new Nodes are ready.
  // It scales again (5 → 6) at 180 s and freezes again: the page shows a window that ends just after a freeze
  // ended, not the moving last hour, which may by then hold the next freeze's start.
  const from = new Date(Date.now() - 3_600_000).toISOString();
  let ended = '';
  await expect
    .poll(
      async () => {
        const r = await request.get(`/api/pools/mgmt-weu/default/workers/timeline?from=${from}`);
        const tl = (await r.json()) as { entries: { at: string; field: string; to: string | null }[] };
        const frozen = tl.entries.filter((e) => e.field === 'finding.readiness-gate-frozen');
        ended = frozen.at(-1)?.to === null ? (frozen.at(-1)?.at ?? '') : '';
        return frozen.length >= 2 && ended !== '';
      },
      { timeout: 60_000 },
    )
    .toBe(true);
  await page.goto(
    `/pools/mgmt-weu/default/workers?from=${from}&to=${new Date(Date.parse(ended) + 1000).toISOString()}`,
  );
  const changes = page.getByRole('region', { name: /Changes in this window/ });
  while (await changes.getByRole('button', { name: 'Show more' }).isVisible())
    await changes.getByRole('button', { name: 'Show more' }).click();
  // Newest first: the freeze's end (warning → —) on top, its start (— → warning) at the bottom. A scale-up's freeze
  // on CAPZ before v1.20 is a warning for its first 10 minutes, and this one is over in seconds.
  const rows = changes.locator('tr', { hasText: 'Finding: readiness-gate-frozen' });
  await expect(rows.first().locator('td').nth(2)).toHaveText('warning');
  await expect(rows.first().locator('td').nth(3)).toHaveText('—');
  await expect(rows.last().locator('td').nth(2)).toHaveText('—');
  await expect(rows.last().locator('td').nth(3)).toHaveText('warning');
  // A drift change names its kind and instance in a few words, the full ID on hover, spelled as Azure spells it
  // (not the lower-cased key that joins the sources).
  const drift = changes.locator('[data-drift-key^="missing-from-machinepool:"]').first();
  await expect(drift).toHaveText(/^missing from MP: virtualMachines\/\d+$/);
  await expect(drift).toHaveAttribute(
    'title',
    /^missing-from-machinepool:azure:\/\/\/subscriptions\/.*\/resourceGroups\/.*\/virtualMachines\/\d+$/,
  );
});

test('a change in the simulator shows on the open page within 2 s, without a reload', async ({ page }) => {
  await page.goto('/');
  await expect(page.locator('[data-live="live"]')).toBeVisible();
  const row = page.locator('tr[data-pool="mgmt-weu/default/system"]');
  await expect(row).toBeVisible();
  await page.evaluate(() => {
    (window as unknown as { marker: boolean }).marker = true;
  });
  await patchMachinePool('mgmt-weu', 'system', { metadata: { annotations: { 'cluster.x-k8s.io/paused': 'true' } } });
  await expect(row.getByText('paused', { exact: true })).toBeVisible({ timeout: 2_000 });
  // Same document: no reload happened.
  expect(await page.evaluate(() => (window as unknown as { marker?: boolean }).marker)).toBe(true);
  await patchMachinePool('mgmt-weu', 'system', { metadata: { annotations: { 'cluster.x-k8s.io/paused': null } } });
  await expect(row.getByText('paused', { exact: true })).toHaveCount(0, { timeout: 2_000 });
});

test('a frozen list\'s "frozen for" counts on while the page is open, with no change and no reload', async ({
  page,
}) => {
  // mgmt-neu/general's list stays frozen (its failed VM). The browser's clock jumps 10 minutes: the durations
  // shown must follow it, on the fleet and on the pool page; a view of a past instant must not.
  const shown = async (where: string) => {
    const m = /frozen for (\d+) (s|min):/.exec(await page.locator(where).innerText());
    return m ? Number(m[1]) * (m[2] === 'min' ? 60 : 1) : NaN;
  };
  await page.clock.install();
  for (const [url, where] of [
    ['/', 'tr[data-pool="mgmt-neu/default/general"]'],
    ['/pools/mgmt-neu/default/general', '[data-finding="readiness-gate-frozen"]'],
  ] as const) {
    await page.goto(url);
    await expect(page.locator(where)).toContainText(/frozen for \d+ (s|min):/, { timeout: 30_000 });
    const before = await shown(where);
    await page.clock.fastForward('10:00');
    await expect.poll(() => shown(where)).toBeGreaterThanOrEqual(before + 9 * 60);
  }
  const at = new Date(Date.now() - 5_000).toISOString();
  await page.goto(`/pools/mgmt-neu/default/general?at=${at}`);
  await expect(page.locator('[data-finding="readiness-gate-frozen"]')).toContainText(/frozen for \d+ (s|min):/);
  const past = await shown('[data-finding="readiness-gate-frozen"]');
  await page.clock.fastForward('10:00');
  await page.waitForTimeout(500);
  expect(await shown('[data-finding="readiness-gate-frozen"]')).toBe(past);
});

test("the pool page says how long ago Azure was last read (the API's azureReadAt) and when it is read next, not on a view of a past instant", async ({
  page,
  request,
}) => {
  const key = 'mgmt-weu/default/workers';
  let readAt: string | null = null;
  await expect.poll(async () => (readAt = (await pool(request, key)).azureReadAt), { timeout: 30_000 }).not.toBeNull();
  expect(Date.now() - Date.parse(readAt as unknown as string)).toBeLessThan(5 * 60_000);
  expect((await pool(request, key, new Date(Date.now() - 1_000).toISOString())).azureReadAt).toBeNull();
  await page.goto(`/pools/${key}`);
  const age = page.getByTestId('azure-read');
  await expect(age).toContainText(/Azure read \d+ (s|min) ago/);
  // As old as the API says the read is, give or take a refetch (15 s) and the time the page took.
  const latest = Date.parse((await pool(request, key)).azureReadAt as string);
  const m = /read (\d+) (s|min) ago/.exec(await age.innerText()) as RegExpExecArray;
  const shownSeconds = Number(m[1]) * (m[2] === 'min' ? 60 : 1);
  expect(Math.abs(shownSeconds - (Date.now() - latest) / 1000)).toBeLessThan(m[2] === 'min' ? 75 : 25);
  // The next planned read: within a slow lane's period (2 min, jittered) of now, and said on the page with why.
  const next = (await pool(request, key)).azureNextRead;
  expect(next).not.toBeNull();
  expect(Date.parse(next!.at) - Date.now()).toBeLessThan(135_000);
  const planned = page.getByTestId('azure-next-read');
  await expect(planned).toContainText(/next read (due now|in ~?\d+ (s|min))/);
  await expect(planned).toHaveAttribute('title', /Planned for .*(Read every|Compute read budget|Retry-After)/);
  expect((await pool(request, key, new Date(Date.now() - 1_000).toISOString())).azureNextRead).toBeNull();
  await page.goto(`/pools/${key}?at=${encodeURIComponent(new Date(Date.now() - 1_000).toISOString())}`);
  await expect(page.getByTestId('as-of')).toBeVisible();
  await expect(page.getByTestId('azure-read')).toHaveCount(0);
  await expect(page.getByTestId('azure-next-read')).toHaveCount(0);
});

test('an ?at= link reproduces a past state and says so', async ({ page, request }) => {
  // A moment while system was paused (the previous test paused it, then resumed it).
  const tl = (await (
    await request.get(
      `/api/pools/mgmt-weu/default/system/timeline?from=${new Date(Date.now() - 3_600_000).toISOString()}`,
    )
  ).json()) as { entries: { at: string; field: string; to: string | null }[] };
  const paused = tl.entries.find((e) => e.field === 'paused' && e.to === 'true');
  expect(paused).toBeDefined();
  const at = new Date(Date.parse(paused!.at) + 1).toISOString();
  expect((await pool(request, 'mgmt-weu/default/system', at)).pool.summary.paused).toBe(true);
  expect((await pool(request, 'mgmt-weu/default/system')).pool.summary.paused).toBe(false);
  await page.goto(`/pools/mgmt-weu/default/system?range=1h&at=${encodeURIComponent(at)}`);
  await expect(page.getByTestId('as-of')).toContainText('as it was at');
  await expect(page.locator('[data-finding="paused"]')).toBeVisible();
  await page.getByRole('link', { name: 'Back to now' }).first().click();
  await expect(page).not.toHaveURL(/at=/);
  await expect(page.locator('[data-finding="paused"]')).toHaveCount(0);
});

test("a link to an instant before the pool's record says where the record starts, and leads there", async ({
  page,
  request,
}) => {
  const res = await request.get('/api/pools/mgmt-weu/default/system?at=2000-01-01T00:00:00Z');
  expect(res.status()).toBe(404);
  const start = /Its record starts at (\S+)\.$/.exec(
    ((await res.json()) as { error: { message: string } }).error.message,
  )?.[1];
  expect(start).toBeDefined();
  // The page has no pool data to hydrate: the live stream connects at once, not after its 5 s wait for one.
  const stream = page.waitForRequest((r) => r.url().endsWith('/api/stream'), { timeout: 4_000 });
  await page.goto('/pools/mgmt-weu/default/system?at=2000-01-01T00:00:00Z');
  await stream;
  await expect(page.getByRole('main').getByRole('alert')).toContainText('No record of this pool at');
  await expect(page.getByRole('main').getByRole('alert').locator('time').nth(1)).toHaveAttribute(
    'datetime',
    start as string,
  );
  await page.getByRole('link', { name: 'Show it as its record starts' }).click();
  await expect.poll(() => new URL(page.url()).searchParams.get('at')).toBe(start);
  await expect(page.getByTestId('as-of')).toContainText('as it was at');
  await expect(page.getByRole('heading', { level: 1, name: 'system' })).toBeVisible();
});

test('a malformed range or instant shows a message; an unknown pool a 404 page with a way back', async ({ page }) => {
  await page.goto('/pools/mgmt-weu/default/system?at=yesterday');
  await expect(page.getByRole('main').getByRole('alert')).toContainText('"at" must be an RFC 3339 instant');
  await page.goto('/pools/mgmt-weu/default/system?range=2w');
  await expect(page.getByRole('main').getByRole('alert')).toContainText('"range" must be one of 1h, 6h, 24h, 7d, 30d');
  // The page and the API both answer 404 (no loading boundary streams the page before it knows).
  expect((await page.request.get('/api/pools/mgmt-weu/default/no-such-pool')).status()).toBe(404);
  expect((await page.goto('/pools/mgmt-weu/default/no-such-pool'))?.status()).toBe(404);
  await expect(page.getByRole('heading', { name: 'Unknown pool' })).toBeVisible();
  await page.getByRole('link', { name: 'Back to all pools' }).click();
  await expect(page).toHaveURL('/');
});

test('the main flow works from the keyboard alone', async ({ page }) => {
  await page.goto('/');
  await page.keyboard.press('Tab');
  await expect(page.getByRole('link', { name: 'Skip to content' })).toBeFocused();
  await page.keyboard.press('Enter');
  // Tab to the general pool's link, then open it.
  let found = false;
  for (let i = 0; i < 60 && !found; i++) {
    await page.keyboard.press('Tab');
    found = await page.evaluate(() => document.activeElement?.textContent === 'general');
  }
  expect(found).toBe(true);
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/\/pools\/mgmt-neu\/default\/general/);
  // The range links are reachable and work.
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate(() => document.activeElement?.textContent === '24h')) break;
  }
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/range=24h/);
});

test("the fleet table fits a laptop's width; on a phone each pool is a block, sorted by a select, and the pool page does not overflow: lanes labelled in short, wide tables keeping their first column, its changes one block each", async ({
  page,
}) => {
  const tableOverflow = () =>
    page
      .locator('table')
      .first()
      .evaluate((t) => (t.parentElement as HTMLElement).scrollWidth - (t.parentElement as HTMLElement).clientWidth);
  const overflow = () =>
    page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto('/');
  await expect(page.locator('tbody tr')).toHaveCount(DEMO_POOLS.length);
  expect(await tableOverflow()).toBe(0);
  await expect(page.getByLabel('Sort by')).toBeHidden();
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('/');
  await expect(page.locator('tbody tr')).toHaveCount(DEMO_POOLS.length);
  // No sideways scrolling (the table was 1,200 pixels wide there: a pool's name on one screen, its finding on
  // another); each pool a block of sane height, its name on top, its finding and counts named in it.
  expect(await tableOverflow()).toBe(0);
  expect(await overflow()).toBe(0);
  await expect(page.locator('thead')).toBeHidden();
  const pools = await page.locator('tbody tr').evaluateAll((rows) =>
    rows.map((r) => {
      const box = r.getBoundingClientRect();
      const link = r.querySelector('a') as HTMLElement;
      const shown = [...r.querySelectorAll('td')].filter((td) => getComputedStyle(td).display !== 'none');
      return {
        display: getComputedStyle(r).display,
        height: box.height,
        width: box.width,
        linkOnTop: link.getBoundingClientRect().top - box.top < 20,
        labels: shown.map((td) => getComputedStyle(td, '::before').content),
      };
    }),
  );
  for (const b of pools) {
    expect(b.display).toBe('flex');
    expect(b.height).toBeLessThan(600);
    expect(b.width).toBeLessThanOrEqual(390);
    expect(b.linkOnTop).toBe(true);
    expect(b.labels).toEqual(expect.arrayContaining(['"Replicas"', '"Drift"', '"Finding"', '"Last change"']));
  }
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    expect(await axe(page), `fleet page on a phone, ${scheme}`).toEqual([]);
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await expect(page.locator('tr[data-pool="mgmt-weu/default/system"]')).toContainText(
    /desired \d+ · VMSS \d+ · Azure \d+ · CAPZ \d+ · CAPI \d+ · Ready \d+/,
  );
  await page.getByLabel('Sort by').selectOption('pool');
  await expect(page).toHaveURL(/[?&]sort=pool/);
  await expect(page.locator('tbody tr').first()).toHaveAttribute('data-pool', 'mgmt-weu/default/aks-jobs');
  await page.getByLabel('Reversed').check();
  await expect(page).toHaveURL(/[?&]sort=-pool/);
  await expect(page.locator('tbody tr').first()).toHaveAttribute('data-pool', 'mgmt-weu/default/workers');
  await page.goto('/pools/mgmt-neu/default/general?range=1h');
  await expect(page.locator('[data-finding="readiness-gate-frozen"]')).toBeVisible();
  await expect(page.getByTestId('timeline-chart')).toBeVisible();
  // The lanes' labels in short (AMP, MP), leaving the lanes room.
  await expect(page.getByTestId('timeline-chart')).toHaveAttribute('data-lane-labels', 'short');
  expect(await overflow()).toBe(0);
  // The drift matrix and the instance table scroll sideways, each row's instance staying in view.
  for (const section of ['drift-h', 'instances-h']) {
    const table = page.locator(`section[aria-labelledby="${section}"] table`);
    await expect(table.locator('tbody th').first()).toBeVisible();
    const moved = await table.evaluate((t) => {
      const box = t.parentElement as HTMLElement;
      const cell = t.querySelector('tbody th') as HTMLElement;
      const other = t.querySelector('tbody td') as HTMLElement;
      const before = [cell.getBoundingClientRect().left, other.getBoundingClientRect().left];
      box.scrollLeft = box.scrollWidth;
      return {
        scrolled: box.scrollLeft,
        cell: cell.getBoundingClientRect().left - (before[0] as number),
        other: other.getBoundingClientRect().left - (before[1] as number),
      };
    });
    expect(moved.scrolled, section).toBeGreaterThan(0);
    expect(moved.cell, section).toBe(0);
    expect(moved.other, section).toBeLessThan(0);
  }
  // The changes list: no sideways scrolling, no column headers, each change a block naming its values.
  const changes = page.locator('section[aria-labelledby="changes-h"]');
  const list = changes.locator('table');
  await expect(list.locator('tbody tr').first()).toBeVisible();
  await expect(list.locator('thead')).toBeHidden();
  expect(
    await list.evaluate(
      (t) => (t.parentElement as HTMLElement).scrollWidth - (t.parentElement as HTMLElement).clientWidth,
    ),
  ).toBe(0);
  const blocks = await list.locator('tbody tr').evaluateAll((rows) =>
    rows.map((r) => ({
      display: getComputedStyle(r).display,
      height: r.getBoundingClientRect().height,
      label: getComputedStyle(r.querySelector('td') as Element, '::before').content,
    })),
  );
  expect(blocks.every((b) => b.display === 'block')).toBe(true);
  expect(Math.max(...blocks.map((b) => b.height))).toBeLessThan(400);
  expect(blocks[0]?.label).toBe('"Time"');
});

test('both pages have no serious or critical accessibility violations, in light and dark; screenshots saved', async ({
  page,
}, testInfo) => {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto('/');
    await expect(page.locator('tbody tr').first()).toBeVisible();
    expect(await axe(page), `fleet page, ${scheme}`).toEqual([]);
    await page.screenshot({ path: testInfo.outputPath(`fleet-${scheme}.png`), fullPage: true });
    await page.goto('/pools/mgmt-neu/default/general?range=1h');
    await expect(page.getByTestId('timeline-chart')).toBeVisible();
    expect(await axe(page), `pool page, ${scheme}`).toEqual([]);
    await page.screenshot({ path: testInfo.outputPath(`pool-${scheme}.png`), fullPage: true });
  }
});
