import { defineConfig } from '@playwright/test';

// Runs against the production build (web/dist), served statically, in
// Debian's Chromium: no browser download.
export default defineConfig({
  testDir: '.',
  outputDir: './.artifacts/results',
  // Limits, not waits: a lesson's WASM run that takes 1 s alone takes 10 or
  // more on a machine busy with other work, and the suite must pass there too.
  timeout: 180_000,
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: [['list'], ['json', { outputFile: './.artifacts/report.json' }]],
  snapshotPathTemplate: '{testDir}/screenshots/{arg}{ext}',
  expect: { timeout: 30_000, toHaveScreenshot: { animations: 'disabled' } },
  use: {
    baseURL: 'http://127.0.0.1:4174/',
    browserName: 'chromium',
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    },
    acceptDownloads: true,
    // the built site registers a service worker; blocked so that page.route sees every request
    // (offline.spec.ts allows it: it tests the service worker)
    serviceWorkers: 'block',
    trace: 'retain-on-failure',
  },
  webServer: {
    command: 'npx vite preview --config web/vite.config.ts --host 127.0.0.1 --port 4174 --strictPort',
    cwd: '..',
    url: 'http://127.0.0.1:4174/',
    reuseExistingServer: false,
    timeout: 30_000,
  },
});
