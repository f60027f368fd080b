// The page's walk of an image's directories, and the busy bar's watchdog.
import { describe, expect, test } from 'vitest';
import { busyView, LONG_MS } from '../views/BusyBar';
import { badName, enter, modeString, pathOf, visibleName } from './files';

describe('walking directories', () => {
  test('paths from steps', () => {
    expect(pathOf([])).toBe('/');
    expect(pathOf([{ name: 'a', ino: 257n }, { name: 'b c', ino: 300n }])).toBe('/a/b c');
  });

  test('a directory already on the path, or the root, is a cycle', () => {
    const a = enter([], 'a', 258n);
    expect(a).toEqual({ steps: [{ name: 'a', ino: 258n }] });
    const steps = (a as { steps: { name: string; ino: bigint }[] }).steps;
    expect(enter(steps, 'up', 256n)).toEqual({ problem: '/a/up: corrupt: directory inode 256 is reached a second time (a directory has one name): a cycle' });
    expect(enter(steps, 'again', 258n)).toMatchObject({ problem: expect.stringMatching(/^\/a\/again: corrupt: directory inode 258/) });
    expect(enter(steps, 'b', 259n)).toEqual({ steps: [...steps, { name: 'b', ino: 259n }] });
  });

  test('names that cannot be a path component are refused', () => {
    for (const n of ['', '.', '..', 'x/y', '..\0', 'a\0b']) expect(badName(n)).not.toBeNull();
    for (const n of ['a', '...', 'a b', 'ü']) expect(badName(n)).toBeNull();
    expect(enter([], 'x/y', 300n)).toEqual({ problem: '/: corrupt: a name with "/" in it ("x/y")' });
    expect(enter([], '..\0', 300n)).toEqual({ problem: '/: corrupt: a name with a NUL byte in it ("..\\x00")' });
  });

  test('control characters are shown, not sent', () => {
    expect(visibleName('\x1b]0;owned\x07name')).toBe('\\x1b]0;owned\\x07name');
    expect(visibleName('plain ü')).toBe('plain ü');
  });

  test('modes as ls -l shows them', () => {
    expect(modeString(0o40755)).toBe('drwxr-xr-x');
    expect(modeString(0o100644)).toBe('-rw-r--r--');
    expect(modeString(0o104755)).toBe('-rwsr-xr-x');
    expect(modeString(0o120777)).toBe('lrwxrwxrwx');
    expect(modeString(0o41777)).toBe('drwxrwxrwt');
  });
});

describe('the busy bar', () => {
  const at = (op: 'open' | 'traceRun', since: number) => ({ op, since });
  test('hidden while idle and for the first 300 ms', () => {
    expect(busyView(null, 1000)).toBeNull();
    expect(busyView(at('open', 1000), 1299)).toBeNull();
    expect(busyView(at('open', 1000), 1300)).toEqual({ text: 'Opening the image… 0.3 s', long: false });
  });
  test('past the watchdog it says the image may be hostile', () => {
    expect(busyView(at('traceRun', 0), LONG_MS - 1)?.long).toBe(false);
    expect(busyView(at('traceRun', 0), LONG_MS)).toEqual({ text: 'Running the scenario… 20.0 s', long: true });
  });
});
