import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const webRoot = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: webRoot,
  base: './', // relative URLs: the built site works from any path of any static server
  publicDir: fileURLToPath(new URL('../public', import.meta.url)),
  plugins: [react()],
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
