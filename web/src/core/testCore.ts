// The WASM core loaded in Node for the web layer's tests, and a script's
// steps as the worker groups them (its session's trace).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import createBtrfsCore from './generated/btrfslab-core.mjs';
import { RunSteps } from './runs';
import { Core } from './wasm';

const wasmPath = fileURLToPath(new URL('./generated/btrfslab-core.wasm', import.meta.url));
export const RUN = { seed: 1n, now: 1700000000n, trace: true };

export async function loadCore(): Promise<Core> {
  return Core.fromModule(await createBtrfsCore({ wasmBinary: readFileSync(wasmPath) }));
}

export function stepsOf(core: Core, script: string): RunSteps {
  const h = core.session(script, RUN);
  try {
    return new RunSteps(core.trace(h), script.split('\n'), core.sessionStats(h).commandEvents);
  } finally {
    core.close(h);
  }
}
