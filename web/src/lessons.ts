// Lessons, authored in lessons/NN-name/ as lesson.md, scenario.txt,
// questions.json and lesson.json (the manifest: the views the lesson shows
// and its seed's published table), bundled at build time.
import { lessonParts, type LessonPart } from './model/figures';
import type { Question } from './model/questions';

export type { Question };

import type { FioRow } from './model/fsyncModes';

/** A row of seed 001's published table: dir fsync times before and after the change. */
export interface SeedRow {
  n: number;
  d: number;
  create: [number, number];
  delete: [number, number];
}

interface SeedOf<Id extends string, Row> {
  id: Id;
  change: string;
  source: string;
  experiment: string;
  unit: string;
  table: Row[];
}

/** Seed 001 (lesson 2): directory index-only logging, its dir fsync times. */
export type DirLoggingSeed = SeedOf<'001', SeedRow>;
/** Seed 003 (lesson 3): fast fsyncs wait only for writeback, its fio throughput. */
export type FsyncWaitSeed = SeedOf<'003', FioRow>;

/** A row of seed 000's published bonnie++ latencies (µs), before and after the change. */
export interface BonnieLatencyRow {
  /** "Sequential Create" or "Random Create". */
  phase: string;
  op: 'Create' | 'Read' | 'Delete';
  before: number;
  after: number;
}
/** Seed 000 (lesson 4): preallocate the extent buffer for inode logging, bonnie++'s latencies. */
export type LeafLocksSeed = SeedOf<'000', BonnieLatencyRow>;

/** A row of seed 002's published untar times (s): the machine, the kernel, with the fix or not, and how its shrink_delalloc counted its budget. */
export interface UntarTimeRow {
  /** "nvme" or "ssd" (the experiment says which machine each is). */
  machine: string;
  kernel: string;
  fix: boolean;
  /** inodes: 5.10's whole inodes (363990706e20); pages: a page budget (5.9's through the flusher, 5.11+'s e076ab2a2ca7). */
  shrink: 'pages' | 'inodes';
  seconds: number;
}
/** Seed 002 (lesson 5): shrink delalloc pages instead of full inodes, its untar times. */
export type ReclaimSeed = SeedOf<'002', UntarTimeRow>;

/** A row of seed 004's published table: a count before the change (v4.19-rc1) and with it, for a number of snapshots. */
export interface QgroupBalanceRow {
  snapshots: number;
  /** "relocated extents" or "qgroup dirty extents". */
  metric: string;
  before: number;
  after: number;
}
/** Our measured figures for seed 004 (bench/run.mjs seed004): the model's counts in each qgroup_swap mode, and the kernel's. */
export interface QgroupBalanceMeasured {
  command: string;
  setup: string;
  rows: { snapshots: number; relocatedOurs: number; relocatedKernel: number; full: number; subtree: number; deferred: number; deferredKernel: number }[];
}
/** Seed 004 (lesson 7): qgroups skip unmodified subtrees in balance, its dirty extents; and what we measured. */
export type QgroupBalanceSeed = SeedOf<'004', QgroupBalanceRow> & { measured: QgroupBalanceMeasured };

/** The kernel change a lesson is built around, as published (by its id). */
export type Seed = DirLoggingSeed | FsyncWaitSeed | LeafLocksSeed | ReclaimSeed | QgroupBalanceSeed;

/** lessons/NN-name/lesson.json. */
export interface LessonManifest {
  /** Views by name (web/src/views/registry.tsx), in the order shown. */
  views: string[];
  seed?: Seed;
}

export interface Lesson {
  id: string;
  title: string;
  text: string;
  /** The text cut at its live figures (model/figures.ts). */
  parts: LessonPart[];
  scenario: string;
  questions: Question[];
  views: string[];
  seed?: Seed;
}

const texts = import.meta.glob('../../lessons/*/lesson.md', { query: '?raw', import: 'default', eager: true }) as Record<string, string>;
const scenarios = import.meta.glob('../../lessons/*/scenario.txt', { query: '?raw', import: 'default', eager: true }) as Record<string, string>;
const questions = import.meta.glob('../../lessons/*/questions.json', { import: 'default', eager: true }) as Record<string, Question[]>;
const manifests = import.meta.glob('../../lessons/*/lesson.json', { import: 'default', eager: true }) as Record<string, LessonManifest>;

function idOf(path: string): string {
  return path.split('/').slice(-2)[0];
}

export const LESSONS: Lesson[] = Object.keys(texts)
  .sort()
  .map((p) => {
    const id = idOf(p);
    const dir = p.slice(0, p.lastIndexOf('/'));
    const text = texts[p];
    const manifest = manifests[`${dir}/lesson.json`];
    return {
      id,
      title: /^#\s+(.*)$/m.exec(text)?.[1] ?? id,
      text: text.replace(/^#\s+.*\n/, ''),
      parts: lessonParts(text.replace(/^#\s+.*\n/, ''), /^#\s+.*\n/.test(text) ? 2 : 1),
      scenario: scenarios[`${dir}/scenario.txt`] ?? '',
      questions: questions[`${dir}/questions.json`] ?? [],
      views: manifest?.views ?? ['tree'],
      seed: manifest?.seed,
    };
  });
