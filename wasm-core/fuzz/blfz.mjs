// BLFZ, the fuzz inputs' compact image format (see fuzz.h): the non-zero
// 4 KiB pages of an image and their places.
import { closeSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import { crc32c } from '../../tests/cli/crc32c.mjs';

const PAGE = 4096;

/** The BLFZ form of an image (a Buffer). */
export function pack(img) {
  const idx = [];
  for (let off = 0; off < img.length; off += PAGE) {
    const page = img.subarray(off, off + PAGE);
    if (page.some((b) => b !== 0)) idx.push(off / PAGE);
  }
  const out = Buffer.alloc(8 + 4 * idx.length + PAGE * idx.length);
  out.write('BLFZ', 0, 'latin1');
  out.writeUInt32LE(idx.length, 4);
  idx.forEach((p, i) => {
    out.writeUInt32LE(p, 8 + 4 * i);
    img.copy(out, 8 + 4 * idx.length + PAGE * i, p * PAGE, p * PAGE + PAGE);
  });
  return out;
}

/** Checksums made right again, as the fuzz targets do before opening (fuzz.c's
 * fix_csums): the superblock's, and every nodesize block carrying the
 * filesystem's fsid. */
function fixCsums(img, pages) {
  const sb = 0x10000;
  const present = new Set(pages);
  if (img.length < sb + PAGE) return;
  const nodesize = img.readUInt32LE(sb + 0x94);
  if (nodesize >= 4096 && nodesize <= 65536 && (nodesize & (nodesize - 1)) === 0) {
    const fsid = img.subarray(sb + 0x20, sb + 0x30);
    for (let off = 0; off + nodesize <= img.length; off += nodesize) {
      // only blocks holding a page of the input, as in fuzz.c
      let held = false;
      for (let p = off / PAGE; p < (off + nodesize) / PAGE && !held; p++) held = present.has(p);
      if (!held || !img.subarray(off + 32, off + 48).equals(fsid)) continue;
      // a superblock copy (the mirror at 64 MiB) is summed over 4 KiB
      const len = img.readBigUInt64LE(off + 64) === 0x4D5F53665248425Fn ? PAGE : nodesize;
      img.writeUInt32LE(crc32c(img.subarray(off + 32, off + len)), off);
      img.fill(0, off + 4, off + 32);
    }
  }
  img.writeUInt32LE(crc32c(img.subarray(sb + 32, sb + PAGE)), sb);
  img.fill(0, sb + 4, sb + 32);
}

/** The image a BLFZ input stands for, as the fuzz targets see it (checksums
 * made right), or null when it does not parse. */
export function unpack(blfz) {
  if (blfz.length < 8 || blfz.toString('latin1', 0, 4) !== 'BLFZ') return null;
  const n = blfz.readUInt32LE(4);
  if (n === 0 || 8 + 4 * n > blfz.length) return null;
  const data = 8 + 4 * n;
  let size = 0;
  const pages = [];
  for (let i = 0; i < n; i++) {
    const p = blfz.readUInt32LE(8 + 4 * i);
    if (i && p <= pages[i - 1]) return null;
    pages.push(p);
    size = (p + 1) * PAGE;
  }
  const sb = pages.indexOf(0x10000 / PAGE);
  if (sb >= 0 && data + (sb + 1) * PAGE <= blfz.length) {
    const total = Number(blfz.readBigUInt64LE(data + sb * PAGE + 0x70));
    if (total > size) size = Math.min(total, 256 * 2 ** 20);
  }
  if (size > 256 * 2 ** 20) return null;
  const img = Buffer.alloc(size);
  // pages past the end of the input are zeros (a short tail is zero-padded)
  pages.forEach((p, i) => {
    if (data + i * PAGE < blfz.length) blfz.copy(img, p * PAGE, data + i * PAGE, Math.min(data + (i + 1) * PAGE, blfz.length));
  });
  fixCsums(img, pages);
  return { img, pages };
}

/** Writes unpack(blfz) to path (sparse); false when it does not parse. */
export function unpackToFile(blfz, path) {
  const u = unpack(blfz);
  if (!u) return false;
  const fd = openSync(path, 'w');
  try {
    ftruncateSync(fd, u.img.length);
    for (const p of u.pages) writeSync(fd, u.img, p * PAGE, PAGE, p * PAGE);
    if (u.img.length >= 0x11000) writeSync(fd, u.img, 0x10000, PAGE, 0x10000);
  } finally {
    closeSync(fd);
  }
  return true;
}
