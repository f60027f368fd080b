// The web app's performance, in Debian's Chromium against the production
// build: first-load bytes (JS + WASM, gzipped), frame times while stepping
// through a 2,000-block tree, and how long seeking to a step of a
// million-event trace takes (at 10%, 50% and 100% of it: stepping by
// checkpoint costs the same anywhere), with the checkpoints' memory. The
// "peer" column holds the target (for memory: the image held in memory).
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export const name = 'web app in Chromium (targets in the peer column)';
const root = fileURLToPath(new URL('..', import.meta.url));

/** Runs script as the worker's session does and returns its checkpoint figures and event count. */
function sessionStats(m, script, steps) {
  const n = m.lengthBytesUTF8(script) + 1;
  const p = m._blab_alloc(n);
  m.stringToUTF8(script, p, n);
  const h = m._blab_session(p, n - 1, 1n, 1700000000n, 1, 0);
  m._blab_free(p);
  if (h < 0) throw new Error(m.UTF8ToString(m._blab_last_error()));
  // the core's part of a seek (restore a checkpoint, run to the line) and of the dump the page draws
  const core = { '10%': [], '50%': [], '100%': [] };
  const dump = { '10%': [], '50%': [], '100%': [] };
  for (let k = 0; k < 12; k++) {
    for (const [pos, f] of [['10%', 0.1], ['50%', 0.5], ['100%', 1]]) {
      const line = Math.round(steps * f) + 2 - k * 37;
      const t0 = performance.now();
      const a = m._blab_session_seek(h, line);
      const t1 = performance.now();
      m.UTF8ToString(m._blab_dump_json_tree(a, 5n, 24));
      core[pos].push(t1 - t0);
      dump[pos].push(performance.now() - t1);
    }
  }
  const st = JSON.parse(m.UTF8ToString(m._blab_session_stats_json(h)));
  st.core = core;
  st.dump = dump;
  const metrics = JSON.parse(m.UTF8ToString(m._blab_metrics_json(h)));
  st.events = Object.values(metrics.events).reduce((a, b) => a + b, 0);
  // the image's pages held in memory at the end (what one copy of the state costs)
  const size = Number(m._blab_image_size(h));
  let pages = 0;
  for (let i = 0; i < size / m._blab_page_size(); i++) if (m._blab_image_page(h, BigInt(i))) pages++;
  st.image = pages * m._blab_page_size();
  m._blab_close(h);
  return st;
}

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

    // a long run: 20,000 files, from Run to the first tree of the new run
    // drawn (the player starts it at step 0; the page showed step 3 before),
    // and the longest task the page's thread ran meanwhile (longtask entries)
    await page.goto('http://127.0.0.1:4179/?lesson=01-cow-btree&step=3');
    await page.locator('[data-testid=tree-canvas][data-state="3"]').waitFor({ timeout: 60000 });
    const many = 'mkfs nodesize=4K size=256M\nmkdir /d\ncreate /d/f_{1..20000}\n';
    await page.evaluate((text) => {
      const ta = document.querySelector('textarea[aria-label="Scenario script"]');
      Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set.call(ta, text);
      ta.dispatchEvent(new Event('input', { bubbles: true }));
      window.__long = [];
      new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(e.duration); }).observe({ type: 'longtask' });
    }, many);
    const firstTree = await page.evaluate(() => new Promise((resolve) => {
      const canvas = document.querySelector('[data-testid=tree-canvas]');
      const button = [...document.querySelectorAll('button')].find((b) => b.textContent === 'Run scenario');
      const t0 = performance.now();
      const obs = new MutationObserver(() => {
        if (canvas.getAttribute('data-state') === '0') { obs.disconnect(); resolve(performance.now() - t0); }
      });
      obs.observe(canvas, { attributes: true, attributeFilter: ['data-state'] });
      button.click();
    }));
    const longest = await page.evaluate(() => Math.max(0, ...window.__long));
    // then into the step of 20,000 files (a million events, kept in the worker):
    // its tree drawn, then its last event (Shift+←: the core stops just before
    // the step's end), and the longest task meanwhile
    const into = await page.evaluate(() => new Promise((resolve) => {
      window.__long = [];
      const slider = document.querySelector('input[aria-label=Step]');
      const canvas = document.querySelector('[data-testid=tree-canvas]');
      const t = String(Number(slider.max) - 1); // the last line's step (the final commit's is after it)
      const t0 = performance.now();
      let drawn = 0;
      const obs = new MutationObserver(() => {
        const at = canvas.getAttribute('data-state');
        if (!drawn && at === t) {
          drawn = performance.now() - t0;
          document.activeElement?.blur();
          window.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowLeft', shiftKey: true, bubbles: true }));
        } else if (drawn && at?.startsWith(`${t}.`)) { obs.disconnect(); resolve({ drawn, moment: performance.now() - t0 - drawn }); }
      });
      obs.observe(canvas, { attributes: true, attributeFilter: ['data-state'] });
      Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(slider, t);
      slider.dispatchEvent(new Event('input', { bubbles: true }));
    }));
    const longestInto = await page.evaluate(() => Math.max(0, ...window.__long));

    // a tree of about 2,000 blocks, stepped through with animation on
    const big = ['mkfs nodesize=4K size=512M', 'mkdir /d', ...Array.from({ length: 12 }, (_, i) => `create /d/g${i}_{1..2000}`)].join('\n');
    await page.getByLabel('Scenario script').fill(big);
    await page.getByRole('button', { name: 'Run scenario' }).click();
    await page.getByText('Step 0 of 14').waitFor({ timeout: 120000 }); // mkfs, 13 lines, the commit that ends the script
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

    // seeking: a trace of about a million events over 36,000 steps, kept in
    // the worker as one run with checkpoints (wasm-core/src/checkpoint.h).
    // Files are created and, 400 later, unlinked (a commit every 4,000
    // lines): the tree stays the same size all along, so what a seek costs
    // at 10%, 50% and 100% of the trace is what its position costs.
    const N = 36000;
    const lines = ['mkfs nodesize=16K size=1G', 'mkdir /d'];
    for (let i = 1; lines.length - 2 < N; i++) {
      lines.push(`create /d/file_${i}`);
      if (i > 400) lines.push(`unlink /d/file_${i - 400}`);
      if (i % 2000 === 0) lines.push('commit');
    }
    lines.length = N + 2;
    // set as React's onChange sees it (typing 600 KB would take minutes)
    await page.evaluate((text) => {
      const ta = document.querySelector('textarea[aria-label="Scenario script"]');
      Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set.call(ta, text);
      ta.dispatchEvent(new Event('input', { bubbles: true }));
    }, lines.join('\n'));
    await page.getByRole('button', { name: 'Run scenario' }).click();
    const last = N + 1 + (lines[lines.length - 1] === 'commit' ? 0 : 1); // mkfs, N lines, and the final commit's own step unless the script ends with one
    await page.getByText(`Step 0 of ${last}`).waitFor({ timeout: 300000 });
    // timed in the page, from the slider's input event to the tree of that
    // step drawn (the canvas's data-state names the step it shows); the
    // positions alternate, so each seek starts from a checkpoint, not from
    // the last seek, and no step is asked twice (the page caches steps)
    const at = { '10%': [], '50%': [], '100%': [] };
    for (let k = 0; k < 12; k++) {
      for (const [pos, f] of [['10%', 0.1], ['50%', 0.5], ['100%', 1]]) {
        const target = Math.round((N + 1) * f) - 1 - k * 37;
        at[pos].push(await page.evaluate((t) => new Promise((resolve) => {
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
    }
    const seeks = Object.values(at).flat();
    // the trace's events and the checkpoints' memory: the same core (WASM) in Node, same script
    const { default: createBtrfsCore } = await import(join(root, 'web/src/core/generated/btrfslab-core.mjs'));
    const mod = await createBtrfsCore({ wasmBinary: readFileSync(join(root, 'web/src/core/generated/btrfslab-core.wasm')) });
    const stats = sessionStats(mod, lines.join('\n') + '\n', N);
    return [
      { metric: 'first load, JS + WASM gzipped', unit: 'KB', ours: gz / 1024, peer: 500, peerName: 'target' },
      { metric: 'run 20,000 files to the first tree drawn', unit: 'ms', ours: firstTree, peer: 7500, peerName: 'issue 11 (before)' },
      { metric: '  longest main-thread task meanwhile', unit: 'ms', ours: longest, peer: 50, peerName: 'target (long task)' },
      { metric: "  then its 20,000 files' step drawn", unit: 'ms', ours: into.drawn, peer: 2000, peerName: 'target' },
      { metric: '  then its last event (Shift+←) drawn', unit: 'ms', ours: into.moment, peer: 1000, peerName: 'target' },
      { metric: '  longest main-thread task meanwhile', unit: 'ms', ours: longestInto, peer: 50, peerName: 'target (long task)' },
      { metric: `stepping, p95 frame (${treeBlocks})`, unit: 'ms', ours: p95, peer: 16.7, peerName: 'target' },
      { metric: 'same page idle, p95 frame (the display)', unit: 'ms', ours: percentile(idle.slice(2), 95), peer: 16.7, peerName: 'target' },
      { metric: `stepping, frames over 20 ms of ${frames.length - 2}`, unit: 'n', ours: long, peer: frames.length - 2, peerName: 'frames' },
      { metric: `seek, p95 of ${seeks.length} (${(stats.events / 1e6).toFixed(2)}M events)`, unit: 'ms', ours: percentile(seeks, 95), peer: 100, peerName: 'target' },
      ...Object.entries(at).map(([pos, xs]) => ({ metric: `seek at ${pos} of the trace, median of ${xs.length}`, unit: 'ms', ours: percentile(xs, 50), peer: 100, peerName: 'target' })),
      ...Object.entries(stats.core).map(([pos, xs]) => ({ metric: `  core: checkpoint + run to ${pos}, p95`, unit: 'ms', ours: percentile(xs, 95), peer: 100, peerName: 'target' })),
      ...Object.entries(stats.dump).map(([pos, xs]) => ({ metric: `  core: the fs tree's dump at ${pos}, p95`, unit: 'ms', ours: percentile(xs, 95), peer: 100, peerName: 'target' })),
      { metric: `checkpoints' memory (${stats.checkpoints}, every ${stats.every} units)`, unit: 'MB', ours: stats.bytes / 1048576, peer: stats.image / 1048576, peerName: 'image in memory' },
    ];
  } finally {
    await browser.close();
    server.kill();
  }
}
