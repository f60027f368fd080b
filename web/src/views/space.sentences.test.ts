// The space panel's sizes: a ticket told as exactly as the lesson tells it
// (1.25 MiB, five items of 256 KiB), the gauges to one decimal.
import { describe, expect, test } from 'vitest';
import { formatSize, ticketSize } from './space.sentences';

describe('sizes on the space panel', () => {
  test('a ticket is told exactly when a quarter of its unit divides it (items of 256 KiB), else to a decimal', () => {
    expect([1.25 * 2 ** 20, 2.5 * 2 ** 20, 640 * 1024, 10 * 1024, 1310721].map(ticketSize)).toEqual(['1.25 MiB', '2.5 MiB', '640 KiB', '10 KiB', '1.3 MiB']);
  });
  test('every other size to one decimal', () => {
    expect([1.25 * 2 ** 20, 512, 4096, 17.75 * 2 ** 20].map(formatSize)).toEqual(['1.3 MiB', '512 bytes', '4.0 KiB', '17.8 MiB']);
  });
});
