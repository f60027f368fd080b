// The kernel beside the page: the companion (`btrfslab serve`) is started
// for the app's origin, the page opened at the URL it prints, and "Ask the
// kernel" sends lesson 2's crash point (a pending log) to it: the kernel
// mounts it (replaying the log), and its file list equals the core's own
// replay, with btrfs check passing. Without a companion the button says how
// to start one.
import { expect, test } from '@playwright/test';
import { spawn, type ChildProcess } from 'node:child_process';
import { CLI, kernelUnavailable } from '../tests/kernel/lib.mjs';

test.use({ viewport: { width: 1400, height: 950 } });

let server: ChildProcess | null = null;
test.afterAll(() => {
  server?.kill('SIGTERM');
});

async function startCompanion(appOrigin: string): Promise<{ url: string; token: string }> {
  server = spawn(CLI, ['serve', '--port', '0', '--app', appOrigin, '--timeout', '60'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    server!.stdout!.on('data', (d) => {
      out += d;
      const m = out.match(/#companion=(http:\/\/127\.0\.0\.1:\d+)&token=([0-9a-f]{64})\n/);
      if (m) resolve({ url: m[1], token: m[2] });
    });
    server!.on('exit', (c) => reject(new Error(`btrfslab serve exited ${c}: ${out}`)));
  });
}

test('without a companion, the button says how to start one', async ({ page }) => {
  await page.goto('./?lesson=02-fsync-log-tree');
  const view = page.getByRole('region', { name: 'Crash and log replay' });
  await view.getByRole('button', { name: 'Ask the kernel' }).click();
  await expect(view.getByText(/No companion yet: run sudo wasm-core\/build\/btrfslab serve/)).toBeVisible();
});

test('ask the kernel about a crash point with a pending log: its files equal the core\'s replay, check passes', async ({ page, baseURL }) => {
  const why = kernelUnavailable();
  test.skip(!!why, `KERNEL PART SKIPPED: ${why}`);
  const origin = new URL(baseURL!).origin;
  const c = await startCompanion(origin);
  await page.goto(`./?lesson=02-fsync-log-tree#companion=${c.url}&token=${c.token}`);
  // the token leaves the address bar, and stays for the tab
  await expect(page).not.toHaveURL(/token=/);
  const view = page.getByRole('region', { name: 'Crash and log replay' });
  await expect(view.locator('p.step-text')).toContainText(/Replay has \d+ actions/);
  await view.getByRole('button', { name: 'Ask the kernel' }).click();
  const verdict = view.getByTestId('kernel-verdict');
  await expect(verdict).toContainText('a log was pending; the mount replayed it', { timeout: 30000 });
  await expect(verdict).toContainText('btrfs check passed');
  await expect(verdict).toContainText(/The kernel and the core agree on all \d+ paths\./);
  const table = view.getByRole('table', { name: /the kernel's files beside the core's/ });
  await expect(table.getByRole('cell', { name: '/docs/report', exact: true })).toBeVisible();
  await expect(table.locator('tr.differs')).toHaveCount(0);
  // a crash inside the first fsync, before its superblock: no log; they agree again
  await view.getByRole('slider', { name: 'Crash point' }).focus();
  await page.keyboard.press('Home');
  await view.getByRole('slider', { name: 'Crash after write' }).focus();
  await page.keyboard.press('Home');
  // the new crash point is computed in the worker: ask once it is shown (an answer that came
  // before it would be cleared by it), as a busy machine can make it late
  await expect(view.getByText(/in the middle of the line/)).toBeVisible({ timeout: 30000 });
  await expect(verdict).toHaveCount(0);
  await view.getByRole('button', { name: 'Ask the kernel' }).click();
  await expect(verdict).toContainText('no log pending', { timeout: 30000 });
  await expect(verdict).toContainText(/agree on all \d+ paths/);
});
