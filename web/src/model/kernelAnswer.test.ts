import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { compareFiles, typeOfFt, type FileView } from './kernelAnswer';
import { sha256Hex } from './sha256';

describe('the kernel\'s files beside the core\'s', () => {
  const f = (path: string, extra: Partial<FileView> = {}): FileView => ({ path, type: 'file', mode: 0o644, nlink: 1, size: 3, sha256: 'ab', ...extra });
  test('agreement, a path on one side only, fields that differ; "/" compared by type only', () => {
    const kernel = [{ path: '/', type: 'dir', mode: 0o755, nlink: 1, size: 20 } as FileView, f('/a'), f('/b', { size: 4 }), f('/k')];
    const core = [{ path: '/', type: 'dir' } as FileView, f('/a'), f('/b', { size: 5, sha256: 'cd' }), f('/c')];
    const r = compareFiles(kernel, core);
    expect(r.agree).toBe(2);
    expect(r.differences.map((d) => [d.path, d.what])).toEqual([['/b', 'size, sha256'], ['/c', 'only in the core'], ['/k', 'only in the kernel']]);
    expect(compareFiles(kernel, kernel).differences).toEqual([]);
  });
  test('entry types by BTRFS_FT_*', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map(typeOfFt)).toEqual(['file', 'dir', 'chr', 'blk', 'fifo', 'sock', 'symlink']);
  });
  test('SHA-256 equals node\'s for empty, short, block-boundary and long inputs (seeded)', () => {
    let x = 12345;
    for (const n of [0, 1, 55, 56, 63, 64, 65, 1000, 100000]) {
      const b = new Uint8Array(n).map(() => ((x = (x * 1103515245 + 12345) >>> 0) >>> 24));
      expect(sha256Hex(b)).toBe(createHash('sha256').update(b).digest('hex'));
    }
  });
});
