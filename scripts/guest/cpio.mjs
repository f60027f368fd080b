// A cpio archive in the "newc" format (the one the kernel unpacks as an
// initramfs): per entry a 110-byte ASCII header ("070701" and thirteen
// 8-digit hex fields), the name with its NUL, padding to 4 bytes, the data,
// padding to 4 bytes; "TRAILER!!!" ends the archive. Archives can be
// concatenated: the kernel unpacks each in turn, later entries replacing
// earlier ones.

const S_IFREG = 0o100000, S_IFDIR = 0o040000, S_IFLNK = 0o120000, S_IFCHR = 0o020000;

/**
 * entries: [{ name, type: 'file'|'dir'|'symlink'|'char', mode (permission
 * bits), data (Buffer or string, files), target (symlinks), major/minor
 * (char devices) }]. Names are relative ("bin/sh"); a directory must come
 * before what it holds. Returns a Buffer.
 */
export function cpioNewc(entries) {
  const parts = [];
  let ino = 1;
  let off = 0;
  const push = (b) => {
    parts.push(b);
    off += b.length;
  };
  const pad = () => {
    if (off % 4) push(Buffer.alloc(4 - (off % 4)));
  };
  const seen = new Set();
  const one = (name, mode, data, rmajor = 0, rminor = 0, nlink = 1) => {
    const nameBuf = Buffer.from(`${name}\0`);
    const hex = (n) => {
      if (!(Number.isInteger(n) && n >= 0 && n <= 0xffffffff)) throw new Error(`cpio: ${name}: field ${n} does not fit 32 bits`);
      return n.toString(16).padStart(8, '0');
    };
    const fields = [ino++, mode, 0, 0, nlink, 0, data.length, 0, 0, rmajor, rminor, nameBuf.length, 0];
    push(Buffer.from(`070701${fields.map(hex).join('')}`, 'ascii'));
    push(nameBuf);
    pad();
    push(data);
    pad();
  };
  for (const e of entries) {
    const name = e.name.replace(/^\/+/, '');
    if (!name || name.split('/').some((c) => c === '..' || c === '')) throw new Error(`cpio: bad entry name '${e.name}'`);
    if (seen.has(name)) throw new Error(`cpio: '${name}' twice`);
    seen.add(name);
    const perm = (e.mode ?? (e.type === 'dir' ? 0o755 : e.type === 'symlink' ? 0o777 : 0o644)) & 0o7777;
    switch (e.type) {
      case 'file': one(name, S_IFREG | perm, Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data ?? '')); break;
      case 'dir': one(name, S_IFDIR | perm, Buffer.alloc(0), 0, 0, 2); break;
      case 'symlink': one(name, S_IFLNK | perm, Buffer.from(e.target)); break;
      case 'char': one(name, S_IFCHR | perm, Buffer.alloc(0), e.major, e.minor); break;
      default: throw new Error(`cpio: '${name}': unknown type ${e.type}`);
    }
  }
  ino = 0;
  one('TRAILER!!!', 0, Buffer.alloc(0), 0, 0, 1);
  return Buffer.concat(parts);
}

/** Reads a newc archive back (for tests and checks): [{ name, mode, size, data, rmajor, rminor }]. */
export function readCpioNewc(buf) {
  const out = [];
  let off = 0;
  const align = (n) => (n + 3) & ~3;
  for (;;) {
    if (off + 110 > buf.length) throw new Error(`cpio: truncated header at ${off}`);
    const magic = buf.toString('ascii', off, off + 6);
    if (magic !== '070701') throw new Error(`cpio: bad magic '${magic}' at ${off}`);
    const f = (i) => parseInt(buf.toString('ascii', off + 6 + i * 8, off + 14 + i * 8), 16);
    const mode = f(1), size = f(6), rmajor = f(9), rminor = f(10), namesize = f(11);
    const nameStart = off + 110;
    const name = buf.toString('utf8', nameStart, nameStart + namesize - 1);
    const dataStart = align(nameStart + namesize);
    if (dataStart + size > buf.length) throw new Error(`cpio: '${name}' runs past the end`);
    off = align(dataStart + size);
    if (name === 'TRAILER!!!') return out;
    out.push({ name, mode, size, data: buf.subarray(dataStart, dataStart + size), rmajor, rminor });
  }
}
