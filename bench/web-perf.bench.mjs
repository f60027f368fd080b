// The web app's performance, in Debian's Chromium against the production
// build: first-load bytes (JS + WASM, gzipped), frame times while stepping
// through a 2,000-block tree, and how long seeking to a step of a
// 100,000-event trace takes. The "peer" column holds the target.
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export const name = 'web app in Chromium (targets in the peer column)';
const root = fileURLToPath(new URL('..', import.meta.url));

function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

export async function run() {
  const b = spawnSync(join(root, 'node_modules/.bin/vite'), ['build', '--config', 'web/vite.config.ts', '--logLevel', 'warn'], { cwd: root });
  if (b.status !== 0) throw new Error(`vite build failed: ${b.stderr}`);
  const assets = join(root, 'web/dist/assets');
  let gz = 0;
  for (const f of readdirSync(assets)) if (/\.(js|wasm)$/.test(f)) gz += gzipSync(readFileSync(join(assets, f))).length;

  const server = spawn(join(root, 'node_modules/.bin/vite'), ['preview', '--config', 'web/vite.config.ts', '--host', '127.0.0.1', '--port', '4179', '--strictPort'], { cwd: root, stdio: 'ignore' });
  const { chromium } = await import('@playwright/test');
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 950 } });
    for (let i = 0; i < 50; i++) {
      try { await page.goto('http://127.0.0.1:4179/?lesson=01-cow-btree'); break; } catch { await new Promise((r) => setTimeout(r, 200)); }
    }
    await page.getByTestId('sentence').waitFor();

    // a tree of about 2,000 blocks, stepped through with animation on
    const big = ['mkfs nodesize=4K size=512M', 'mkdir /d', ...Array.from({ length: 12 }, (_, i) => `create /d/g${i}_{1..2000}`)].join('\n');
    await page.getByLabel('Scenario script').fill(big);
    await page.getByRole('button', { name: 'Run scenario' }).click();
    await page.getByText('Step 0 of 13').waitFor({ timeout: 120000 });
    const blocks = await page.evaluate(async () => {
      const frames = [];
      let last = performance.now();
      let on = true;
      const tick = (t) => { frames.push(t - last); last = t; if (on) requestAnimationFrame(tick); };
      requestAnimationFrame(tick);
      window.__stopFrames = () => { on = false; return frames; };
      return 0;
    });
    void blocks;
    for (let i = 0; i < 13; i++) {
      await page.getByRole('button', { name: 'Step forward' }).click();
      await page.waitForTimeout(700);
    }
    const frames = await page.evaluate(() => window.__stopFrames());
    // the same page idle for as long: the display's own frame interval and jitter
    const idle = await page.evaluate(() => new Promise((resolve) => {
      const f = [];
      let last = performance.now();
      const t0 = last;
      const tick = (t) => { f.push(t - last); last = t; if (t - t0 < 4000) requestAnimationFrame(tick); else resolve(f); };
      requestAnimationFrame(tick);
    }));
    const long = frames.slice(2).filter((f) => f > 20).length;
    const treeBlocks = await page.evaluate(() => document.querySelector('[data-testid=tree-canvas] svg')?.getAttribute('aria-label'));
    const p95 = percentile(frames.slice(2), 95);

    // seeking: a trace of 100,000+ events over many steps
    const lines = ['mkfs nodesize=16K size=256M', 'mkdir /d'];
    for (let i = 0; i < 3500; i++) lines.push(`create /d/file_${i}`);
    await page.getByLabel('Scenario script').fill(lines.join('\n'));
    await page.getByRole('button', { name: 'Run scenario' }).click();
    await page.getByText('Step 0 of 3501').waitFor({ timeout: 120000 });
    const events = await page.evaluate(async () => 0);
    void events;
    const seeks = [];
    // timed in the page, from the slider's input event to the tree of that
    // step drawn (the canvas's data-state names the step it shows)
    for (const target of [3500, 10, 1750, 3499, 3, 2800, 900]) {
      seeks.push(await page.evaluate((t) => new Promise((resolve) => {
        const slider = document.querySelector('input[aria-label=Step]');
        const canvas = document.querySelector('[data-testid=tree-canvas]');
        const t0 = performance.now();
        const obs = new MutationObserver(() => {
          if (canvas.getAttribute('data-state') === String(t)) { obs.disconnect(); resolve(performance.now() - t0); }
        });
        obs.observe(canvas, { attributes: true, attributeFilter: ['data-state'] });
        Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(slider, String(t));
        slider.dispatchEvent(new Event('input', { bubbles: true }));
      }), target));
    }
    // how many events that trace has (the metrics of the same script, natively)
    const cli = join(root, 'wasm-core/build/btrfslab');
    const m = spawnSync('sh', ['-c', `printf '%s\\n' "$1" | ${cli} run - --metrics -`, "x", lines.join('\n')], { encoding: 'utf8' });
    const evs = Object.values(JSON.parse(m.stdout).events).reduce((a, b) => a + b, 0);
    return [
      { metric: 'first load, JS + WASM gzipped', unit: 'KB', ours: gz / 1024, peer: 500, peerName: 'target' },
      { metric: `stepping, p95 frame (${treeBlocks})`, unit: 'ms', ours: p95, peer: 16.7, peerName: 'target' },
      { metric: 'same page idle, p95 frame (the display)', unit: 'ms', ours: percentile(idle.slice(2), 95), peer: 16.7, peerName: 'target' },
      { metric: `stepping, frames over 20 ms of ${frames.length - 2}`, unit: 'n', ours: long, peer: frames.length - 2, peerName: 'frames' },
      { metric: `seek to a step, worst of 7 (${evs} events)`, unit: 'ms', ours: Math.max(...seeks), peer: 100, peerName: 'target' },
    ];
  } finally {
    await browser.close();
    server.kill();
  }
}
