// The built site as a class would host it: served from a sub-path of a plain
// static server (every request stays under it), and, after a first visit,
// offline: the service worker (Workbox, precaching the whole build) serves the
// page, the WASM core and every lesson, and a lesson runs its steps.
import { expect, test, type Page } from '@playwright/test';
import { createReadStream, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const DIST = fileURLToPath(new URL('../web/dist/', import.meta.url));
const PREFIX = '/class/btrfs/';
const LESSONS = readdirSync(fileURLToPath(new URL('../lessons/', import.meta.url))).filter((d) => /^\d\d-/.test(d)).sort();
const TYPES: Record<string, string> = {
  '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.webmanifest': 'application/manifest+json', '.json': 'application/json',
};

// The service worker this spec is about (the rest of the suite blocks it, so its page.route calls see every request).
test.use({ serviceWorkers: 'allow', viewport: { width: 1400, height: 950 } });

let server: Server;
let origin = '';
const requested: string[] = [];
let down = false; // the server gone too: a connection is dropped unanswered

test.beforeAll(async () => {
  // a static server as plain as a class's web space: files under PREFIX, nothing else (404)
  server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    requested.push(path);
    if (down) return req.socket.destroy();
    if (!path.startsWith(PREFIX)) return res.writeHead(404).end('not here');
    let file = normalize(join(DIST, path.slice(PREFIX.length)));
    if (!file.startsWith(DIST)) return res.writeHead(403).end();
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
    if (!existsSync(file)) return res.writeHead(404).end('no such file');
    res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream', 'Cache-Control': 'no-cache' });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

test.afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** Lesson 1 stepped once: the question before the first COW answered, the step's sentence and tree shown. */
async function stepLessonOne(page: Page) {
  await expect(page.getByRole('heading', { name: 'The copy-on-write B-tree' })).toBeVisible();
  await expect(page.getByTestId('sentence')).not.toBeEmpty();
  await page.getByRole('button', { name: 'Step forward' }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByRole('radio').first()).toBeFocused();
  await page.keyboard.press('Enter');
  await dialog.getByRole('button', { name: 'See it happen' }).click();
  await expect(dialog).toHaveCount(0);
  await expect(page.getByRole('slider', { name: 'Step' })).toHaveValue('1');
  await expect(page.getByTestId('sentence')).toContainText('mkdir /docs');
  await expect(page.getByTestId('tree-canvas').locator('g.block').first()).toBeVisible();
}

test('served from a sub-path, every request stays under it and lesson 1 steps', async ({ page }) => {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  requested.length = 0;
  await page.goto(`${origin}${PREFIX}?lesson=01-cow-btree`);
  await stepLessonOne(page);
  expect(requested.length).toBeGreaterThan(3);
  expect(requested.filter((p) => !p.startsWith(PREFIX)), 'requests outside the sub-path').toEqual([]);
  // the manifest is found and names icons the server has
  const manifest = await (await page.request.get(`${origin}${PREFIX}manifest.webmanifest`)).json();
  expect(manifest.scope).toBe('./');
  for (const icon of manifest.icons) expect((await page.request.get(`${origin}${PREFIX}${icon.src}`)).status(), icon.src).toBe(200);
});

test('after a first visit, the site, its WASM core and every lesson work offline', async ({ page, context }) => {
  test.setTimeout(900_000); // seven lessons, each run by the core on opening (minutes on a busy machine)
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto(`${origin}${PREFIX}`);
  // the service worker installed (its precache complete) and controlling the page
  await page.waitForFunction(async () => (await navigator.serviceWorker.ready).active?.state === 'activated' && !!navigator.serviceWorker.controller,
    undefined, { timeout: 30_000 });
  const cached = await page.evaluate(async () => {
    const urls: string[] = [];
    for (const name of await caches.keys()) for (const r of await (await caches.open(name)).keys()) urls.push(new URL(r.url).pathname);
    return urls;
  });
  const built = readdirSync(join(DIST, 'assets'));
  for (const f of built) expect(cached, `precached: assets/${f}`).toContain(`${PREFIX}assets/${f}`);
  expect(built.some((f) => f.endsWith('.wasm'))).toBe(true);

  await context.setOffline(true);
  down = true;
  requested.length = 0;
  await page.goto(`${origin}${PREFIX}?lesson=01-cow-btree`);
  await stepLessonOne(page);
  for (const id of LESSONS.slice(1)) {
    await page.goto(`${origin}${PREFIX}?lesson=${id}`);
    const title = readFileSync(fileURLToPath(new URL(`../lessons/${id}/lesson.md`, import.meta.url)), 'utf8').match(/^# (.+)$/m)![1];
    await expect(page.getByRole('heading', { level: 2, name: title }), `lesson ${id}'s text offline`).toBeVisible();
    // its scenario run by the core to its first step (lesson 5's takes half a minute on a busy machine)
    await expect(page.getByTestId('sentence'), `lesson ${id} run offline`).not.toBeEmpty({ timeout: 120_000 });
  }
  // only the browser's own update check of the service worker (its script and what it imports) tried the server
  expect(requested.filter((p) => !/^\/class\/btrfs\/(sw|workbox-[\w-]+)\.js$/.test(p)), 'page requests while offline').toEqual([]);
  down = false;
  await context.setOffline(false);
});
