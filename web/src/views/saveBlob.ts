// Saving a blob the page made (an image) as a file: a link clicked, its URL
// revoked once the browser has had time to save a big one.
import type { CoreClient } from '../core/client';
import type { RunOptions } from '../core/wasm';

export function saveBlob(name: string, blob: Blob): void {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
}

/** The image a power cut after the step's line leaves (its log pending), saved as state-lineN.img. */
export async function saveStateImage(core: CoreClient, script: string, opts: RunOptions, line: number): Promise<void> {
  const { blob } = await core.call({ op: 'crashImage', script, opts, line });
  saveBlob(`state-line${line}.img`, blob);
}
