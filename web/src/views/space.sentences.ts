// The space story in words (lesson 5): a size as a learner reads it, and
// each moment as a sentence, so nothing on the space panel is told by colour
// or length alone.
import type { ShrinkPass, SpaceFrame, SpaceMoment } from '../model/space';
import { formatBytes, formatNs } from '../model/units';

/** Bytes in the unit that suits them, one decimal past a KiB: 512 bytes, 4.0 KiB, 2.5 MiB, 1.2 GiB. */
export function formatSize(bytes: number): string {
  const units: [number, string][] = [[2 ** 30, 'GiB'], [2 ** 20, 'MiB'], [2 ** 10, 'KiB']];
  for (const [size, name] of units) if (bytes >= size) return `${(bytes / size).toFixed(1)} ${name}`;
  return `${bytes} byte${bytes === 1 ? '' : 's'}`;
}

/** A ticket's size, exact when it is a whole quarter of its unit (a metadata ticket is items of 256 KiB: 1.25 MiB, not 1.3 MiB, as the lesson says it); else as formatSize. */
export function ticketSize(bytes: number): string {
  const exact = formatBytes(bytes);
  return exact.endsWith(' bytes') || exact.endsWith(' byte') ? formatSize(bytes) : exact;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en')} ${n === 1 ? one : many}`;

/** A pass's budget as the kernel of its mode counts it. */
export function budgetText(p: ShrinkPass): string {
  if (p.budget === null) return 'everything (FLUSH_DELALLOC_FULL)';
  return p.mode === 'inodes' ? `${plural(p.budget, 'inode')} (5.10: 2 × to_reclaim ÷ insert(1), each written whole)` : `${plural(p.budget, 'page')} (5.11+: min(delalloc, max(to_reclaim, delalloc ÷ 8)))`;
}

/** What a pass did: "wrote 72 pages of 20 inodes; 45 inodes (121 pages) still dirty". */
export function passText(p: ShrinkPass): string {
  const left = p.left.pages ? `${plural(p.left.inodes, 'inode')} (${plural(p.left.pages, 'page')}) still dirty` : 'no delalloc left';
  return `wrote ${plural(p.pages, 'page')} of ${plural(p.inodes, 'inode')} (${formatSize(p.pages * 4096)}); ${left}`;
}

/** One moment told: whose, what, how much. */
export function momentSentence(m: SpaceMoment, name: (task: number) => string): string {
  const at = formatNs(m.at);
  switch (m.kind) {
    case 'counters':
      return `At ${at}, the ${m.space} space_info: ${formatSize(m.counters.total)} of chunks, ${formatSize(m.counters.used)} used, ${formatSize(m.counters.mayUse)} reserved ahead (may_use).`;
    case 'ticket':
      return `At ${at}, ${name(m.task)}'s reservation of ${ticketSize(m.bytes)} of ${m.space} does not fit: it queues a ticket and sleeps.`;
    case 'trigger':
      return `At ${at}, ${name(m.task)} wakes the ${m.space} reclaim worker (btrfs_trigger_flush).`;
    case 'granted':
      return `At ${at}, ${name(m.task)}'s ticket of ${ticketSize(m.bytes)} of ${m.space} is granted after ${formatNs(m.waitNs)}.`;
    case 'failed':
      return `At ${at}, ${name(m.task)}'s ticket of ${ticketSize(m.bytes)} of ${m.space} fails with ENOSPC after ${formatNs(m.waitNs)}.`;
    case 'flush':
      return `At ${at}, the ${m.space} reclaim worker ran ${m.state}${m.numBytes === null ? '' : ` to reclaim ${formatSize(m.numBytes)}`}: ${m.granted ? `${plural(m.granted, 'ticket')} granted` : 'no ticket granted yet'}.`;
    case 'shrink':
      return `At ${at}, a delalloc flush with a budget of ${budgetText(m.pass)} ${passText(m.pass)}.`;
  }
}

/** The frame in a few sentences: the moment, the queue, the worker. */
export function frameSaid(f: SpaceFrame, name: (task: number) => string): string[] {
  const out: string[] = [];
  if (f.moment) out.push(momentSentence(f.moment, name));
  for (const q of f.queues) out.push(`Waiting on ${q.space} tickets: ${q.tickets.map((t) => `${name(t.task)} (${ticketSize(t.bytes)}, for ${formatNs(t.waited)})`).join(', ')}.`);
  if (!f.queues.length && f.totals.tickets) out.push('No ticket waits at this moment.');
  for (const l of f.ladders) {
    const cur = l.rungs.find((r) => r.current);
    if (cur) out.push(`The ${l.space} reclaim worker's last state: ${cur.state}${l.walking ? '; it walks on while tickets wait' : '; it is idle'}.`);
  }
  return out;
}
