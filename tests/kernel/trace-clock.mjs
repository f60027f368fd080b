// Trace clock x86-tsc: tracefs prints each line's timestamp as a raw TSC
// count, to the cycle. The btrfs tree-lock events carry their own end_ns
// (ktime_get_ns, nanoseconds), so the counts convert to nanoseconds by the
// rate fitted from those pairs. One fit for every kernel measurement that
// traces in x86-tsc (seed000-measure.mjs, seed003-locks.mjs).

/** Least-squares fit of ticks = intercept + rate * ns over [ns, ticks]
 * pairs: [rate (ticks a ns), intercept]; null with fewer than two distinct
 * times to fit. */
export function fitTscRate(pairs) {
  const n = pairs.length;
  if (n < 2) return null;
  const mx = pairs.reduce((s, p) => s + p[0], 0) / n, my = pairs.reduce((s, p) => s + p[1], 0) / n;
  let sxy = 0, sxx = 0;
  for (const [x, y] of pairs) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) * (x - mx);
  }
  return sxx > 0 ? [sxy / sxx, my - (sxy / sxx) * mx] : null;
}
