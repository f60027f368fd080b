import { describe, expect, test } from 'vitest';
import { marksFor } from './marks';
import { renderMarkdown } from './markdown';
import { describeEvent } from '../views/sentences';
import { groupSteps, nextStepWith, scriptPrefix, treeSentence } from './steps';
import type { TraceEvent } from './trace';

const base = { seq: 0, tree: 5n };
const events: TraceEvent[] = [
  { ...base, kind: 'block_alloc', bytenr: 100n, level: 0, generation: 1n },
  { ...base, kind: 'op', line: 3 },
  { ...base, kind: 'cow', from: 100n, to: 200n, level: 0, generation: 2n, fromGeneration: 1n },
  { ...base, kind: 'item_insert', bytenr: 200n, slot: 1, key: [257n, 1, 0n], size: 160 },
  { ...base, kind: 'op', line: 4 },
  { ...base, kind: 'split', left: 200n, right: 300n, level: 0, slot: 20 },
  { ...base, kind: 'op', line: 5 },
  { seq: 0, kind: 'commit', generation: 2n, rootBytenr: 900n },
];
const lines = ['# comment', 'mkfs nodesize=4K', 'create /a', 'create /b_{1..50}', 'commit'];

describe('steps', () => {
  test("a timed section is one step: its threads' creates mark their lines with op events inside it", () => {
    const script = ['mkfs', 'thread A', 'create /d/a', 'fsync /d/a', 'end', 'thread C', 'create /d/c', 'end', 'C: create /d/x', 'commit', 'create /e'];
    const ev: TraceEvent[] = [
      { seq: 1, kind: 'op', line: 2 },
      { seq: 2, kind: 'op', line: 7 }, // C's create, run first
      { seq: 3, kind: 'op', line: 3 },
      { seq: 4, kind: 'op', line: 9 }, // a NAME: line after the blocks is of the same section
      { seq: 5, kind: 'op', line: 10 },
      { seq: 6, kind: 'op', line: 11 },
    ];
    const steps = groupSteps(ev, script);
    expect(steps.map((s) => [s.line, s.events.length])).toEqual([[0, 0], [2, 3], [10, 0], [11, 0]]);
    expect(steps[1].kinds.has('op')).toBe(true);
  });

  test("an untar is one step: its mkdirs and creates mark its own line with op events", () => {
    const script = ['mkfs', 'mkdir /src', 'untar random files=2 dir=/src', 'commit'];
    const ev: TraceEvent[] = [2, 3, 3, 3, 3, 4].map((line, i) => ({ seq: i + 1, kind: 'op', line }));
    expect(groupSteps(ev, script).map((s) => [s.line, s.events.length])).toEqual([[0, 0], [2, 0], [3, 3], [4, 0]]);
  });

  test('one step per command, events grouped under it', () => {
    const steps = groupSteps(events, lines);
    expect(steps.map((s) => [s.line, s.command, s.events.length])).toEqual([
      [0, 'mkfs', 1], [3, 'create /a', 2], [4, 'create /b_{1..50}', 1], [5, 'commit', 1],
    ]);
    expect(steps[1].sentence).toBe('create /a: COW leaf 100 → 200 in the fs tree, generation 2; 1 item inserted.');
    expect(steps[2].sentence).toBe('create /b_{1..50}: 1 split.');
    expect(steps[3].sentence).toMatch(/^commit: Commit: generation 2 is on disk, root tree at 900\.$/);
  });

  test('the state of a step is its script prefix, always with the mkfs line', () => {
    const steps = groupSteps(events, lines);
    expect(scriptPrefix(lines, steps, 0)).toBe('# comment\nmkfs nodesize=4K\n');
    expect(scriptPrefix(lines, steps, 2)).toBe('# comment\nmkfs nodesize=4K\ncreate /a\ncreate /b_{1..50}\n');
    expect(scriptPrefix(lines, steps, 99)).toBe(lines.join('\n') + '\n');
  });

  test('jumps and sentences', () => {
    const steps = groupSteps(events, lines);
    expect(nextStepWith(steps, 0, 'split')).toBe(2);
    expect(nextStepWith(steps, 2, 'split')).toBe(-1);
    expect(describeEvent({ ...base, kind: 'root_grow', bytenr: 5n, level: 1 })).toBe('The fs tree grows a level: new root 5 at level 1');
  });

  test('marks: copies, splits, new and changed blocks', () => {
    const m = marksFor(events);
    expect(m.get('200')).toBe('cow');
    expect(m.get('100')).toBe('new');
    expect(m.get('300')).toBe('split');
  });
});

describe('the commit that ends a script', () => {
  test('is its own step, after the last line, not blamed on it', () => {
    const evs: TraceEvent[] = [
      { seq: 0, kind: 'op', line: 3 },
      { seq: 1, kind: 'item_insert', tree: 5n, bytenr: 200n, slot: 1, key: [257n, 1, 0n], size: 160 },
      { seq: 2, kind: 'cow', tree: 1n, from: 500n, to: 600n, level: 0, generation: 2n, fromGeneration: 1n },
      { seq: 3, kind: 'commit', generation: 2n, rootBytenr: 600n },
    ];
    const steps = groupSteps(evs, ['', '', 'create /a'], 2);
    expect(steps.map((s) => [s.line, s.final ?? false, s.command, s.events.length])).toEqual([
      [0, false, 'mkfs', 0], [3, false, 'create /a', 1], [3, true, 'the commit at the end of the script', 2]]);
    expect(steps[1].sentence).toBe('create /a: 1 item inserted.');
    expect(steps[2].kinds.has('commit')).toBe(true);
    expect(groupSteps(evs, ['', '', 'create /a']).length).toBe(2); // no boundary given: as before
  });
});

describe('a step told for the tree on screen', () => {
  test('what it did in that tree, what is of no one tree, and the copies in every tree', () => {
    const evs: TraceEvent[] = [
      { seq: 0, kind: 'op', line: 3 },
      { seq: 1, kind: 'cow', tree: 5n, from: 100n, to: 200n, level: 0, generation: 2n, fromGeneration: 1n },
      { seq: 2, kind: 'item_insert', tree: 5n, bytenr: 200n, slot: 1, key: [257n, 1, 0n], size: 160 },
      { seq: 3, kind: 'cow', tree: 2n, from: 300n, to: 400n, level: 0, generation: 2n, fromGeneration: 1n },
      { seq: 4, kind: 'cow', tree: 1n, from: 500n, to: 600n, level: 0, generation: 2n, fromGeneration: 1n },
      { seq: 5, kind: 'commit', generation: 2n, rootBytenr: 600n },
    ];
    const [, step] = groupSteps(evs, ['', '', 'create /a']);
    expect(treeSentence(step, 5n)).toBe('create /a: in the fs tree, COW leaf 100 → 200 in the fs tree, generation 2; 1 item inserted; '
      + 'Commit: generation 2 is on disk, root tree at 600. Copied on write: fs tree 1, extent tree 1, root tree 1.');
    expect(treeSentence(step, 7n)).toBe('create /a: nothing changed in the csum tree; Commit: generation 2 is on disk, root tree at 600. '
      + 'Copied on write: csum tree 0, fs tree 1, extent tree 1, root tree 1.');
  });
});

describe('markdown', () => {
  test('renders the lesson subset and escapes everything else', () => {
    const html = renderMarkdown('# T\n\nA **b** and `c` <script>x</script>\n\n- one\n- two\n\n```\n<raw>\n```\n');
    expect(html).toContain('<h2>T</h2>');
    expect(html).toContain('<p>A <strong>b</strong> and <code>c</code> &lt;script&gt;x&lt;/script&gt;</p>');
    expect(html).toContain('<ul><li>one</li><li>two</li></ul>');
    expect(html).toContain('<pre><code>&lt;raw&gt;</code></pre>');
  });

  test('a list item goes on over the lines indented under it', () => {
    const html = renderMarkdown('1. **One.** It starts\n   and goes on.\n2. Two\nafter\n');
    expect(html).toBe('<ol><li><strong>One.</strong> It starts and goes on.</li><li>Two</li></ol>\n<p>after</p>');
  });
});
