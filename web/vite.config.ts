import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { VitePWA } from 'vite-plugin-pwa';
import { defineConfig } from 'vitest/config';

const webRoot = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: webRoot,
  base: './', // relative URLs: the built site works from any path of any static server
  publicDir: fileURLToPath(new URL('../public', import.meta.url)),
  plugins: [
    react(),
    // Offline after the first visit: Workbox precaches the whole built site (the
    // JS, the CSS, the WASM core, the icons; the lessons are bundled into the JS)
    // and answers navigations with index.html, so a lesson's address
    // (?lesson=...&step=...) opens offline too. Relative URLs throughout, so the
    // service worker's scope is whatever directory the site is served from.
    VitePWA({
      registerType: 'autoUpdate',
      injectRegister: 'script',
      includeAssets: ['favicon.svg'],
      manifest: {
        name: 'btrfs-lab: btrfs internals, interactively',
        short_name: 'btrfs-lab',
        description: 'Learn how btrfs works by running it, watching it, and handing the result to the Linux kernel.',
        start_url: './',
        scope: './',
        display: 'standalone',
        background_color: '#ffffff',
        theme_color: '#1d3557',
        icons: [
          { src: 'icon-192.png', sizes: '192x192', type: 'image/png' },
          { src: 'icon-512.png', sizes: '512x512', type: 'image/png' },
          { src: 'icon-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
          { src: 'favicon.svg', sizes: 'any', type: 'image/svg+xml' },
        ],
      },
      workbox: {
        globPatterns: ['**/*.{js,mjs,css,html,wasm}'], // with includeAssets and the manifest's icons
        maximumFileSizeToCacheInBytes: 16 * 1024 * 1024, // the WASM core and the bundled lessons
        navigateFallback: 'index.html',
        cleanupOutdatedCaches: true,
      },
    }),
  ],
  worker: { format: 'es' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0, // keep the .wasm a file of its own
  },
  server: { host: '127.0.0.1', port: 5173, strictPort: true, fs: { allow: [fileURLToPath(new URL('..', import.meta.url))] } },
  test: {
    root: webRoot,
    include: ['src/**/*.test.ts'],
    environment: 'node',
    // Limits, not waits: a WASM run that takes 2 s alone takes 20 on a machine
    // busy with other work, and a test must pass there too.
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
