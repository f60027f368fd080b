// The companion (`btrfslab serve`): the page asks the real kernel about a
// state's image through it. The URL it prints carries its address and a
// token in the fragment (#companion=URL&token=T, never sent to a server);
// they are kept for this tab (sessionStorage) and removed from the address
// bar. Errors are values: { ok: false, message }.
import type { KernelAnswer } from '../model/kernelAnswer';

export interface Companion {
  url: string;
  token: string;
}

const KEY = 'btrfslab-companion';

/** Takes #companion=…&token=… from the address (once, at startup) and keeps them; returns the companion known, or null. */
export function companionFromAddress(loc: Location = window.location, store: Storage = window.sessionStorage): Companion | null {
  const h = new URLSearchParams(loc.hash.replace(/^#/, ''));
  const url = h.get('companion'), token = h.get('token');
  if (url && token && /^http:\/\/(127\.0\.0\.1|localhost):\d+$/.test(url) && /^[0-9a-f]{64}$/.test(token)) {
    store.setItem(KEY, JSON.stringify({ url, token }));
    h.delete('companion');
    h.delete('token');
    const rest = h.toString();
    window.history.replaceState(window.history.state, '', `${loc.pathname}${loc.search}${rest ? `#${rest}` : ''}`);
  }
  return companion(store);
}

export function companion(store: Storage = window.sessionStorage): Companion | null {
  try {
    const c = JSON.parse(store.getItem(KEY) ?? 'null') as Companion | null;
    return c && typeof c.url === 'string' && typeof c.token === 'string' ? c : null;
  } catch {
    return null;
  }
}

export type Asked<T> = { ok: true; value: T } | { ok: false; message: string };

async function call<T>(c: Companion, path: string, init: RequestInit = {}): Promise<Asked<T>> {
  try {
    const r = await fetch(`${c.url}${path}`, { ...init, headers: { ...(init.headers ?? {}), Authorization: `Bearer ${c.token}` } });
    const text = await r.text();
    const body = text ? JSON.parse(text) : {};
    if (!r.ok) return { ok: false, message: `the companion answered ${r.status}: ${body.error ?? r.statusText}` };
    return { ok: true, value: body as T };
  } catch (e) {
    return { ok: false, message: `the companion at ${c.url} does not answer (${(e as Error).message}): is \`btrfslab serve\` still running?` };
  }
}

export const companionHello = (c: Companion) => call<{ version: string; kernel: string; root: boolean; busy: boolean }>(c, '/v1/hello');

/** The kernel's view of an image (whole, or in the sparse form: sparseImageParts): it mounts a copy (replaying a pending log), lists it, runs btrfs check. */
export const askKernel = (c: Companion, image: Blob) =>
  call<KernelAnswer>(c, '/v1/kernel', { method: 'POST', body: image, headers: { 'Content-Type': image.type || 'application/octet-stream' } });
