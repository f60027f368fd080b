// Durations and sizes as a learner reads them: "1.70 ms", "64 KiB".

/** Virtual nanoseconds in the unit that suits them: 950 ns, 60.8 µs, 1.70 ms, 2.50 s. */
export function formatNs(ns: number | bigint): string {
  const n = Number(ns);
  const fix = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
  if (n < 1000) return `${n.toFixed(0)} ns`;
  if (n < 1e6) return `${fix(n / 1e3)} µs`;
  if (n < 1e9) return `${fix(n / 1e6)} ms`;
  return `${fix(n / 1e9)} s`;
}

/** Bytes in binary units when they divide evenly, else in bytes: 64 KiB, 4 KiB, 100 bytes, 1.5 MiB. */
export function formatBytes(b: number | bigint): string {
  const n = Number(b);
  const units: [number, string][] = [[1 << 30, 'GiB'], [1 << 20, 'MiB'], [1 << 10, 'KiB']];
  for (const [size, name] of units) {
    if (n >= size && n % (size / 4) === 0) return `${+(n / size).toFixed(2)} ${name}`;
  }
  return `${n} byte${n === 1 ? '' : 's'}`;
}
