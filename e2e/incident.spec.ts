// The pool page in an incident (issue #58): what is wrong as one headline with its evidence, for how long, what to
// do with the names filled in and a command to copy; and data that is no longer live says so.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import type { PoolResponse } from '../lib/api-types';
import { pool, simEnv } from './fleet';

test.describe.configure({ mode: 'serial' });

/** mgmt-neu/general's failed VM (sim/scenarios/demo.yaml), once the findings say so and its Machine exists. */
async function failedPool(request: Parameters<typeof pool>[0]): Promise<PoolResponse> {
  let p: PoolResponse | null = null;
  await expect
    .poll(
      async () => {
        p = await pool(request, 'mgmt-neu/default/general');
        const failed = p.pool.instances.find((r) => r.azure?.provisioningState === 'Failed');
        return [...p.pool.findings.map((f) => f.code), failed?.machine ? 'machine' : 'no machine'];
      },
      { timeout: 30_000 },
    )
    .toEqual(expect.arrayContaining(['readiness-gate-frozen', 'instance-failed', 'machine']));
  return p!;
}

test('the worst finding opens with what to do: the failed instance named, its Machine deleted by name, to copy', async ({
  page,
  request,
  context,
}) => {
  const p = await failedPool(request);
  const failed = p.pool.instances.find((r) => r.azure?.provisioningState === 'Failed');
  expect(failed?.machine?.name).toBeTruthy();
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.goto('/pools/mgmt-neu/default/general');
  const head = page.locator('[data-finding="readiness-gate-frozen"]');
  await expect(head.locator('details')).toHaveAttribute('open', '');
  const command = `kubectl --context mgmt-neu -n default delete machine ${failed!.machine!.name}`;
  const step = head.locator('[data-testid="next-steps"] li', { hasText: command });
  await expect(step).toBeVisible();
  await step.getByRole('button', { name: /^Copy: Replace/ }).click();
  await expect(step.getByRole('button')).toHaveText('Copied');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(command);
  // The root cause's action comes first.
  await expect(head.locator('[data-testid="what-to-do"] li').first()).toHaveText(/^Delete the Machine of each failed/);
});

test('findings that share a cause are one headline with their evidence and ages', async ({ page, request }) => {
  const p = await failedPool(request);
  const chain = p.pool.findings.filter((f) => f.cause).map((f) => [f.code, f.cause]);
  expect(chain).toContainEqual(['readiness-gate-frozen', expect.stringMatching(/^(vmss-failed|instance-failed)$/)]);
  await page.goto('/pools/mgmt-neu/default/general');
  const head = page.locator('[data-finding="readiness-gate-frozen"]');
  await expect(head.getByRole('list', { name: 'Because' }).locator('[data-finding="instance-failed"]')).toBeVisible();
  // Listed under the headline, not as a headline of its own.
  await expect(
    page.locator('section[aria-labelledby="findings-h"] > ul > li[data-finding="instance-failed"]'),
  ).toHaveCount(0);
  await expect(head.locator('[data-testid="finding-age"]').first()).toHaveText(/^since .+ · for \d+ (s|min)/);
});

test('a server that stops: the page says it is not live, with its age, and the sources stop saying live', async ({
  page,
}) => {
  // Its fleet must outlive a failed read: 30 s to the next, three retries, then a look.
  test.setTimeout(120_000);
  // A second poolscope of its own (collecting the demo fleet into its own store), which this test stops.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'poolscope-stop-'));
  const port = 3190 + Math.floor(Math.random() * 9);
  const server = spawn(process.execPath, ['.next/standalone/server.js'], {
    env: {
      ...process.env,
      ...simEnv(),
      PORT: String(port),
      HOSTNAME: '127.0.0.1',
      POOLSCOPE_DB_PATH: path.join(dir, 'poolscope.db'),
      NEXT_TELEMETRY_DISABLED: '1',
    },
    stdio: 'ignore',
  });
  try {
    const base = `http://127.0.0.1:${port}`;
    await expect
      .poll(
        () =>
          fetch(`${base}/api/readyz`).then(
            (r) => r.status,
            () => 0,
          ),
        { timeout: 60_000 },
      )
      .toBe(200);
    await page.goto(`${base}/`);
    await expect(page.locator('[data-live="live"]')).toBeVisible({ timeout: 15_000 });
    const sources = page.locator('section[aria-label="Sources"]');
    const badges = () => sources.locator('li').allInnerTexts();
    await expect.poll(async () => (await badges()).filter((t) => /live$/.test(t.trim())).length).toBeGreaterThan(0);
    await expect(page.getByTestId('stale-banner')).toHaveCount(0);
    server.kill('SIGTERM');
    const banner = page.getByTestId('stale-banner');
    await expect(banner).toBeVisible({ timeout: 15_000 });
    await expect(banner).toContainText(/Not live: the connection to poolscope was lost \d+ s ago\./);
    await expect(banner).toContainText(/What you see was read at .+ \(\d+ s ago\)/);
    await expect(sources).toContainText('live when last read');
    expect((await badges()).filter((t) => /live$/.test(t.trim()))).toEqual([]);
    // The fleet's next read fails (at 30 s, then three retries by ~37 s): the pools stay on screen, and the banner
    // says how old they are.
    await expect(banner).toContainText(/\((4[5-9]|5\d) s ago\)/, { timeout: 60_000 });
    await expect(page.getByText('The fleet could not be loaded')).toHaveCount(0);
    await expect(page.locator('tr[data-pool]').first()).toBeVisible();
  } finally {
    server.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
