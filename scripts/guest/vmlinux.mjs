// The ELF vmlinux inside an x86 bzImage (vmlinuz), so that QEMU boots it
// straight through its PVH entry and skips the emulated decompressor. From
// the boot protocol (Documentation/x86/boot): the setup header's
// setup_sects (0x1f1) gives where the protected-mode part starts
// ((setup_sects || 4) + 1 sectors), and its payload_offset (0x248) and
// payload_length (0x24c) where the compressed kernel lies inside that part.
// The build appends the uncompressed size (4 bytes, little-endian) to the
// compressed stream; it is stripped before decompressing and checked after.
import { spawnSync } from 'node:child_process';
import { gunzipSync } from 'node:zlib';

const MAGICS = [
  ['xz', Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00])],
  ['zstd', Buffer.from([0x28, 0xb5, 0x2f, 0xfd])],
  ['gzip', Buffer.from([0x1f, 0x8b])],
];

/** Where the compressed payload is in bzImage buf, and how it is compressed. */
export function bzImagePayload(buf) {
  if (buf.length < 0x250 || buf.toString('ascii', 0x202, 0x206) !== 'HdrS') throw new Error('not a bzImage: no "HdrS" setup header at 0x202');
  const version = buf.readUInt16LE(0x206);
  if (version < 0x208) throw new Error(`boot protocol ${version.toString(16)} has no payload fields (2.08 and later do)`);
  const setupSects = buf[0x1f1] || 4;
  const pm = (setupSects + 1) * 512;
  const offset = pm + buf.readUInt32LE(0x248);
  const length = buf.readUInt32LE(0x24c);
  if (length < 8 || offset + length > buf.length) throw new Error(`bzImage payload ${offset}+${length} lies outside the file (${buf.length} bytes)`);
  const head = buf.subarray(offset, offset + 8);
  const kind = MAGICS.find(([, m]) => head.subarray(0, m.length).equals(m))?.[0];
  if (!kind) throw new Error(`bzImage payload at ${offset}: unknown compression (starts ${head.toString('hex')})`);
  return { offset, length, kind, size: buf.readUInt32LE(offset + length - 4) };
}

function decompress(kind, data) {
  if (kind === 'gzip') return gunzipSync(data);
  const [cmd, args] = kind === 'xz' ? ['xz', ['-dc', '--single-stream']] : ['zstd', ['-dc', '-q']];
  const r = spawnSync(cmd, args, { input: data, maxBuffer: 1 << 30 });
  if (r.error) throw new Error(`${cmd}: ${r.error.message} (install ${kind === 'xz' ? 'xz-utils' : 'zstd'})`);
  if (r.status !== 0) throw new Error(`${cmd} -dc failed: ${r.stderr.toString().slice(0, 500)}`);
  return r.stdout;
}

/** The ELF vmlinux of bzImage buf (a Buffer), checked: ELF magic, and the size the build recorded. */
export function extractVmlinux(buf) {
  const p = bzImagePayload(buf);
  const out = decompress(p.kind, buf.subarray(p.offset, p.offset + p.length - 4));
  if (out.length !== p.size) throw new Error(`decompressed ${out.length} bytes, the bzImage records ${p.size}`);
  if (!out.subarray(0, 4).equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]))) throw new Error('the decompressed payload is not an ELF file');
  return out;
}
