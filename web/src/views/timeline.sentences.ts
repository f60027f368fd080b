// Sentences for simulated time, the page cache and ordered extents: the
// events the timeline view (lesson 3) draws. A task is told by its number
// here; the timeline (model/timeline.ts) tells it by its lane's name ("A",
// "endio-write 2") through `who`.
import { treeName } from '../model/names';
import { formatBytes as size, formatNs as dur } from '../model/units';
import type { EventOf, TraceKind } from '../model/trace';
import type { Sentences } from './sentences';

type Who = (task: number) => string;
const byNumber: Who = (t) => `Task ${t}`;

const range = (offset: bigint, length: bigint) => `${size(length)} at ${size(offset)}`;
const ino = (i: bigint) => (i === 0n ? 'every inode' : `inode ${i}`);

/** What a wait is for: its cause and object (trace-events.h's task_wait). */
export function waitWhat(cause: string, object: bigint): string {
  switch (cause) {
    case 'writeback': return `writeback of ${ino(object)} (its pages' bios)`;
    case 'ordered extent': return `the ordered extents of ${ino(object)} to complete`;
    case 'tree lock': return `a lock on the ${treeName(object)}`;
    case 'transaction commit': return `the commit of transaction ${object}`;
    case 'transaction writers': return `the transaction's other writers (transaction ${object})`;
    case 'log sync': return `another task's log sync (log transaction ${object})`;
    case 'log writers': return `the other tasks still logging (log transaction ${object})`;
    case 'log mutex': return `the log mutex, held by the task writing log transaction ${object} (this fsync then joins the next one)`;
    case 'bio': return 'its bio';
    case 'dirty throttle': return `dirty pages to be written (${size(object)} dirty)`;
    case 'sleep': return `${dur(object)} of sleep`;
    case 'idle': return 'work';
    case 'cpu': return 'a CPU';
    case 'schedule': return 'its turn in the schedule';
    case 'ticket': return 'space (a reservation ticket)';
    case 'memory allocation': return `memory: an extent buffer of ${size(object)}, allocated in direct reclaim`;
    case 'delayed node mutex': return `the delayed node mutex of inode ${object} (its delayed items being flushed, or the inode evicted)`;
    case 'inode lock': return `the lock of inode ${object} (a namespace command in that directory, or a write to that file, under way)`;
    default: return cause;
  }
}

/** A task's op in words: "write 64 KiB at 0 of inode 257". */
function opWhat(e: EventOf<'task_op'>): string {
  switch (e.op) {
    case 'write': return `write ${range(e.offset, e.length)} of inode ${e.ino}`;
    case 'fsync': return `fsync of inode ${e.ino}`;
    case 'sync': return 'sync';
    case 'sleep': return 'sleep';
    case 'namespace': return `a namespace change (inode ${e.ino})`;
    default: return e.op;
  }
}

/** One timed event in a sentence, tasks named by who. */
export function timedSentences(who: Who): Sentences {
  return {
    page_dirty: (e) => `A write copies ${range(e.offset, e.length)} of inode ${e.ino} into the page cache: dirty pages, delalloc (no extent yet)`,
    write_inline: (e) => `Writeback stores inode ${e.ino}'s ${size(e.size)} inline, in its fs tree leaf`,
    ordered_add: (e) => `Writeback of inode ${e.ino}, ${range(e.offset, e.length)}: ordered extent ${e.id} made (extent at ${e.diskBytenr}); its pages go under writeback`,
    ordered_io_done: (e) => `Ordered extent ${e.id}'s bio is done: inode ${e.ino}'s data is on the device and its pages leave writeback, but the extent is not in the trees yet`,
    ordered_logged: (e) => `A fast fsync logs ordered extent ${e.id} (inode ${e.ino}) while it is in flight, its checksums taken from it`,
    ordered_finish: (e) => `Ordered extent ${e.id} completes: inode ${e.ino}'s file extent item and checksums are in the fs and csum trees`,
    task_new: (e) => `${who(e.task)} begins (${e.taskKind}${e.taskKind === 'thread' ? ` ${e.index}` : ''})`,
    task_op: (e) => `${who(e.task)} starts line ${e.line}: ${opWhat(e)}`,
    task_op_end: (e) => `${who(e.task)}'s ${e.op} (line ${e.line}) returns after ${dur(e.durNs)}`,
    task_cpu: (e) => `${who(e.task)} runs on a CPU for ${dur(e.durNs)}: ${e.work}`,
    task_wait: (e) => `${who(e.task)} waits for ${waitWhat(e.cause, e.object)}`,
    task_wake: (e) => `${who(e.task)} wakes after waiting ${dur(e.waitNs)} for ${waitWhat(e.cause, e.object)}`,
    bio_submit: (e) => `${who(e.task)} submits bio ${e.id} to the device: ${e.op}${e.bytes > 0n ? `, ${size(e.bytes)}` : ''}`,
    bio_done: (e) => `The device completes bio ${e.id} (${e.op}${e.bytes > 0n ? `, ${size(e.bytes)}` : ''}) after ${dur(e.serviceNs)} of service`,
  };
}

export const timelineSentences = timedSentences(byNumber);

/** The kinds the timeline tells (each has a sentence here). */
export const TIMELINE_KINDS = Object.keys(timelineSentences) as TraceKind[];
