// The app's state and the only ways it changes (a reducer: pure, testable).
import type { TreeDump } from './dump';
import type { TraceKind } from './trace';

export type Source = { kind: 'mkfs'; label: string } | { kind: 'file'; name: string };

export interface LoadedImage {
  handle: number;
  size: bigint;
  source: Source;
  dump: TreeDump;
  events: Partial<Record<TraceKind, number>>;
}

export interface AppState {
  busy: string | null; // what the core is doing, for the status line
  image: LoadedImage | null;
  error: string | null;
}

export type Action =
  | { type: 'busy'; what: string }
  | { type: 'loaded'; image: LoadedImage }
  | { type: 'failed'; message: string }
  | { type: 'idle' }
  | { type: 'restarted'; message: string }; // the core was cancelled and restarted: its handles are gone

export const initialState: AppState = { busy: 'Loading the core…', image: null, error: null };

export function reduce(state: AppState, action: Action): AppState {
  switch (action.type) {
    case 'busy':
      return { ...state, busy: action.what, error: null };
    case 'loaded':
      return { busy: null, image: action.image, error: null };
    case 'failed':
      return { ...state, busy: null, error: action.message };
    case 'idle':
      return { ...state, busy: null };
    case 'restarted':
      return { busy: null, image: null, error: action.message };
  }
}

/** Sizes people type: "128M", "1G", "65536". Returns null when it is not one. */
export function parseSize(text: string): bigint | null {
  const m = /^\s*(\d+)\s*([KMGT]?)(i?B)?\s*$/i.exec(text);
  if (!m) return null;
  const shift = { '': 0n, K: 10n, M: 20n, G: 30n, T: 40n }[m[2].toUpperCase() as '' | 'K' | 'M' | 'G' | 'T'];
  return BigInt(m[1]) << shift;
}

/** 134217728n -> "128 MiB". */
export function formatBytes(n: bigint): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (i < units.length - 1 && v >= 1024n && v % 1024n === 0n) {
    v /= 1024n;
    i++;
  }
  return `${v} ${units[i]}`;
}
