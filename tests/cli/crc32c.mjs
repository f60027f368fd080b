// CRC-32C for tests that re-checksum blocks they damage on purpose.
const T = new Uint32Array(256);
for (let i = 0; i < 256; i++) {
  let c = i;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  T[i] = c >>> 0;
}
/** The raw update from crc (no inversion in or out). */
export function crc32cRaw(crc, buf) {
  let c = crc >>> 0;
  for (const b of buf) c = T[(c ^ b) & 0xff] ^ (c >>> 8);
  return c >>> 0;
}
export function crc32c(buf) {
  return (crc32cRaw(0xffffffff, buf) ^ 0xffffffff) >>> 0;
}
