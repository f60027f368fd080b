// The WASM build of the core, loaded in Node the way the Worker loads it:
// same module, same wrapper. Its images are byte-identical to the native
// CLI's for the same seed and time, and its errors are typed.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import createBtrfsCore from './generated/btrfslab-core.mjs';
import { CoreError } from './errors';
import { Core } from './wasm';

const wasmPath = fileURLToPath(new URL('./generated/btrfslab-core.wasm', import.meta.url));
const cliPath = fileURLToPath(new URL('../../../wasm-core/build/btrfslab', import.meta.url));
let core: Core;
const dir = mkdtempSync(join(tmpdir(), 'btrfslab-wasm-'));

beforeAll(async () => {
  core = Core.fromModule(await createBtrfsCore({ wasmBinary: readFileSync(wasmPath) }));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('mkfs through WASM', () => {
  test.each([4096, 16384, 65536])('nodesize %i: bytes equal the native CLI', (nodesize) => {
    const size = 96n << 20n;
    const h = core.mkfs({ size, nodesize, label: 'same', seed: 123456789n, now: 1700000000n });
    const ours = core.imageBytes(h);
    core.close(h);
    const img = join(dir, `native-${nodesize}.img`);
    execFileSync(cliPath, ['mkfs', '--size', String(size), '--nodesize', String(nodesize), '--label', 'same',
      '--seed', '123456789', '--time', '1700000000', img]);
    const native = readFileSync(img);
    expect(ours.length).toBe(native.length);
    expect(Buffer.from(ours).equals(native)).toBe(true);
  });

  test('64-bit values cross without loss', () => {
    const seed = 0xfedcba9876543210n; // above 2^53
    const h = core.mkfs({ size: 64n << 20n, nodesize: 16384, seed, now: 1700000000n });
    const dump = core.dumpTrees(h);
    expect(core.imageSize(h)).toBe(64n << 20n);
    const root = dump.trees.find((t) => t.name === 'root')!;
    const dirItem = root.blocks[0].entries.find((e) => e.key.type === 84)!;
    expect(dirItem.key.offset).toBe(2378154706n);
    const reloc = dump.trees.find((t) => t.name === 'data reloc')!;
    expect(reloc.id).toBe(18446744073709551607n); // (u64)-9, not representable as a Number
    core.close(h);
  });

  test('the dump names every tree and the trace every step', () => {
    const h = core.mkfs({ size: 128n << 20n, nodesize: 16384, seed: 1n, now: 1700000000n });
    const dump = core.dumpTrees(h);
    expect(dump.trees.map((t) => t.name)).toEqual(['root', 'chunk', 'extent', 'device', 'fs', 'checksum', 'uuid', 'free space', 'data reloc']);
    expect(dump.bytesUsed).toBe(9n * 16384n);
    const fs = dump.trees.find((t) => t.name === 'fs')!;
    expect(fs.blocks[0].entries.map((e) => e.key.text)).toEqual(['256 INODE_ITEM 0', '256 INODE_REF 256']);
    const kinds = core.trace(h).map((e) => e.kind);
    expect(kinds[0]).toBe('trans_start');
    expect(kinds.filter((k) => k === 'block_alloc')).toHaveLength(9);
    expect(kinds.at(-1)).toBe('commit');
    core.close(h);
  });

  test('the sparse form for the companion: its records expand to the image byte for byte, and it is small', () => {
    const h = core.mkfs({ size: 256n << 20n, nodesize: 16384, seed: 5n, now: 1n });
    const whole = core.imageBytes(h);
    const parts = core.sparseImageParts(h);
    core.close(h);
    const body = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      body.set(p, at);
      at += p.length;
    }
    const dv = new DataView(body.buffer);
    expect(new TextDecoder().decode(body.subarray(0, 8))).toBe('BLSPARS1');
    const size = dv.getBigUint64(8, true);
    expect(size).toBe(256n << 20n);
    const out = new Uint8Array(Number(size));
    let pos = 16, prevEnd = 0, records = 0;
    while (pos < body.length) {
      const off = Number(dv.getBigUint64(pos, true)), len = Number(dv.getBigUint64(pos + 8, true));
      if (records) expect(off).toBeGreaterThan(prevEnd); // apart: runs of present pages are joined
      out.set(body.subarray(pos + 16, pos + 16 + len), off);
      pos += 16 + len;
      prevEnd = off + len;
      records++;
    }
    expect(pos).toBe(body.length);
    expect(Buffer.from(out).equals(Buffer.from(whole))).toBe(true);
    expect(records).toBeGreaterThan(2); // the superblock, the system chunk, the metadata chunk at least
    expect(body.length).toBeLessThan(whole.length / 20);
  });

  test('an image made here opens again and reads the same', () => {
    const h = core.mkfs({ size: 64n << 20n, nodesize: 4096, seed: 3n, now: 1n });
    const bytes = core.imageBytes(h);
    const h2 = core.open(bytes);
    expect(core.dumpTrees(h2)).toEqual(core.dumpTrees(h));
    core.close(h);
    core.close(h2);
  });
});

describe('errors are typed values', () => {
  test('too small names the minimum', () => {
    let err: unknown;
    try {
      core.mkfs({ size: 1n << 20n, nodesize: 16384, seed: 1n, now: 0n });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CoreError);
    expect((err as CoreError).errname).toBe('ETOOSMALL');
    expect((err as CoreError).message).toMatch(/minimum is 25165824 bytes/);
  });

  test('a corrupt image is refused with the checker message, and the core stays usable', () => {
    const h = core.mkfs({ size: 64n << 20n, nodesize: 16384, seed: 4n, now: 0n });
    const bytes = core.imageBytes(h);
    core.close(h);
    const rootTree = core.dumpTrees(core.open(bytes)).trees[0].blocks[0].bytenr;
    bytes[Number(rootTree) + 300] ^= 0xff;
    expect(() => core.open(bytes)).toThrow(/checksum verify failed on logical/);
    expect(() => core.open(new Uint8Array(100))).toThrow(/too small to hold a superblock/);
    expect(() => core.open(new Uint8Array(1 << 20))).toThrow(/no btrfs magic/);
    const again = core.mkfs({ size: 32n << 20n, nodesize: 16384, seed: 5n, now: 0n });
    expect(core.imageSize(again)).toBe(32n << 20n);
    core.close(again);
  });

  test('reloc trees a kernel balance left: readable, checked, never written to', async () => {
    // a crashed run with its log pending, and a TREE_RELOC root item crafted in (tests/cli/craft.mjs):
    // the WASM core reads the files, check names the reloc tree, replay refuses and leaves the handle usable
    // @ts-expect-error tests/cli/craft.mjs is plain JavaScript, without types
    const { Image, KEY_TYPE } = await import('../../../tests/cli/craft.mjs');
    const script = join(dir, 'reloc.txt'), img = join(dir, 'reloc.img');
    writeFileSync(script, 'mkfs nodesize=4K size=64M\nmkdir /d\ncreate /d/f\nwrite /d/f 0 5000 1\ncommit\ncreate /d/g\nfsync /d/g\ncrash\n');
    execFileSync(cliPath, ['run', script, '--image', img, '--seed', '1', '--time', '1']);
    const im = new Image(readFileSync(img));
    const fsItem = im.get('root', { objectid: 5n, type: KEY_TYPE.ROOT_ITEM, offset: 0n });
    const data = Buffer.from(fsItem.data.subarray(0, 239)); // a version 1 root item: the leaf is nearly full
    data.writeBigUInt64LE(1n << 40n, 176); // a root block no chunk maps
    im.insertNear('root', im.findAll('root', () => true).at(-1).key, [{ key: { objectid: 0xfffffffffffffff8n, type: KEY_TYPE.ROOT_ITEM, offset: 5n }, data }]);
    const h = core.open(new Uint8Array(im.buf));
    expect(core.ls(h, '/d').map((e) => e.name)).toEqual(['f']);
    expect(core.cat(h, '/d/f').length).toBe(5000);
    expect(core.checkFs(h).problems.join('\n')).toMatch(/reloc tree \(TREE_RELOC ROOT_ITEM 5\): EIO: logical 1099511627776/);
    let err: unknown;
    try {
      core.replay(h);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CoreError);
    expect((err as CoreError).errname).toBe('ENOTSUP');
    expect((err as CoreError).message).toMatch(/holds 1 reloc tree \(TREE_RELOC ROOT_ITEM 5\).*next mounts the filesystem read-write/);
    expect(core.ls(h, '/d').map((e) => e.name)).toEqual(['f']);
    core.close(h);
  });

  test('a closed handle is an error, not a crash', () => {
    expect(() => core.dumpTrees(999 as never)).toThrow(/no open filesystem with handle 999/);
  });
});

describe('scenarios through WASM', () => {
  const script = 'mkfs nodesize=4K size=64M\nmkdir /d\ncreate /d/f_{1..300}\nwrite /d/f_150 100 70000 4\nsymlink /d/f_150 /s\ncommit\nunlink /d/f_{1..100}\nrename /d/f_150 /top\n';

  test('the image is byte-identical to the native CLI run', () => {
    const h = core.run(script, { seed: 9n, now: 1700000000n, trace: false });
    const ours = core.imageBytes(h);
    core.close(h);
    const s = join(dir, 'run.txt');
    const img = join(dir, 'run.img');
    execFileSync('sh', ['-c', `cat > ${s}`], { input: script });
    execFileSync(cliPath, ['run', s, '--image', img, '--seed', '9', '--time', '1700000000']);
    expect(Buffer.from(ours).equals(readFileSync(img))).toBe(true);
  });

  /** A timed script through WASM and through the native CLI, same seed: each
   * one's events (kind@atNs) and whether the images are byte for byte equal. */
  function bothWays(text: string, seed: number, tag: string) {
    const h = core.run(text, { seed: BigInt(seed), now: 1n, trace: true });
    const ours = core.imageBytes(h);
    const events = core.trace(h).map((e) => `${e.kind}@${'atNs' in e ? String(e.atNs) : ''}`);
    core.close(h);
    const s = join(dir, `${tag}.txt`);
    const img = join(dir, `${tag}.img`);
    const tr = join(dir, `${tag}.jsonl`);
    execFileSync('sh', ['-c', `cat > ${s}`], { input: text });
    execFileSync(cliPath, ['run', s, '--image', img, '--trace', tr, '--seed', String(seed), '--time', '1']);
    const theirs = readFileSync(tr, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).map((e) => `${e.kind}@${e.atNs ?? ''}`);
    return { events, theirs, sameImage: Buffer.from(ours).equals(readFileSync(img)) };
  }

  test('threads: the same seed gives the native CLI\'s trace and image, byte for byte', () => {
    const threads = 'mkfs size=256M\nset device=nvme\nfio jobs=3 size=256K bs=64K fsync=1 rw=write\nA: write /writers.0.0 0 8K 3\nB: fsync /writers.1.0\nA: fsync /writers.0.0\n';
    const { events, theirs, sameImage } = bothWays(threads, 4, 'threads');
    expect(events.length).toBeGreaterThan(1000);
    expect(events).toEqual(theirs);
    expect(events.some((e) => e.startsWith('ordered_logged@'))).toBe(true);
    expect(sameImage).toBe(true);
  });

  test('path locks, clone copies and memory pressure: the same seed gives the native CLI\'s trace and image', () => {
    const lines = ['mkfs size=256M', 'set device=loop', 'set tree_locks=path', 'set log_copy=clone', 'set memory_pressure=heavy', 'mkdir /d', 'commit'];
    for (const t of ['A', 'B']) {
      lines.push(`thread ${t}`);
      for (let k = 0; k < 12; k++) lines.push(`create /d/${t}${k}`, `write /d/${t}${k} 0 4096 ${k + 1}`, `setxattr /d/${t}${k} user.x v`, `fsync /d/${t}${k}`);
      lines.push('end');
    }
    const { events, theirs, sameImage } = bothWays(lines.join('\n') + '\n', 9, 'locks');
    expect(events).toEqual(theirs);
    expect(events.some((e) => e.startsWith('lock_wait@'))).toBe(true);
    expect(sameImage).toBe(true);
  });

  test('ls, cat, check and metrics', () => {
    const h = core.run(script, { seed: 1n, now: 1n, trace: true });
    expect(core.ls(h, '/').map((e) => e.name)).toEqual(['d', 's', 'top']);
    expect(core.ls(h, '/d')).toHaveLength(199);
    const top = core.cat(h, '/top');
    expect(top.length).toBe(70100);
    expect(top.slice(0, 100).every((b) => b === 0)).toBe(true);
    expect(core.checkFs(h)).toEqual({ errors: 0, problems: [] });
    const m = core.metrics(h);
    expect(m.commits).toBe(2);
    expect(m.events.split).toBeGreaterThan(0);
    expect(core.trace(h).some((e) => e.kind === 'cow')).toBe(true);
    expect(() => core.cat(h, '/d')).toThrow(/not a regular file/);
    expect(() => core.ls(h, '/nope')).toThrow(/\/nope: no such file or directory/);
    core.close(h);
  });

  test('crash and replay: the metrics count every event the trace holds, and replay appends its steps', () => {
    const h = core.run('mkdir /d\ncreate /d/a{1..3}\ncommit\ncreate /d/b\nwrite /d/b 0 5000 2\nfsync /d\ncrash\n', { seed: 1n, now: 1n, trace: true });
    const m = core.metrics(h);
    expect(m.crashed).toBe(true);
    expect(m.fsyncs[0].items.DIR_INDEX).toBe(1);
    const n0 = core.trace(h).length;
    expect(Object.values(m.events).reduce((a, b) => a + b, 0)).toBe(n0);
    expect(core.ls(h, '/d').map((e) => e.name)).toEqual(['a1', 'a2', 'a3']);
    core.replay(h);
    const after = core.trace(h).slice(n0);
    expect(after.filter((e) => e.kind === 'replay').length).toBeGreaterThan(3);
    expect(core.ls(h, '/d').map((e) => e.name)).toEqual(['a1', 'a2', 'a3', 'b']);
    core.close(h);
  });

  test('a bad script is a typed error naming the line', () => {
    expect(() => core.run('mkdir /a\nrmdir /b\n', { seed: 1n, now: 1n, trace: false })).toThrow(/scenario:2: rmdir: ENOENT: \/b: no such file or directory/);
  });
});
