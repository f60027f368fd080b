// The relocation story in words (lesson 7): each moment of a balance as a
// sentence, the phases by name, so that nothing on the panel is told by
// colour or position alone.
import type { RelocMoment, RelocPhase, RelocStep } from '../model/relocation';
import { formatSize } from './space.sentences';

/** A tree as a sentence names it: "the fs tree", "tree 257". */
export const treeName = (id: string) => (id === '5' ? 'the fs tree' : `tree ${id}`);
const what = (level: number) => (level === 0 ? 'leaf' : 'node');
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

export const PHASE_NAMES: Record<RelocPhase, string> = {
  chosen: 'Group chosen (read-only)',
  build: 'Reloc trees built',
  merge: 'Merged (pointer swaps)',
  drop: 'Reloc trees dropped',
  removed: 'Group removed',
};

/** A group as a sentence names it: "the metadata group at 5.0 MiB (12.0 MiB)". */
export const groupName = (group: string, type: string, length: number) => `the ${type} group at ${formatSize(Number(group))} (${formatSize(length)})`;

/** One moment told. */
export function relocSentence(m: RelocMoment, step: RelocStep): string {
  const g = step.groups.find((x) => x.group === m.group);
  const gname = g ? groupName(g.group, g.type, g.length) : `the group at ${m.group}`;
  switch (m.kind) {
    case 'group':
      return `Balance chooses ${groupName(m.group, m.type, m.length)}: it is made read-only, and the extent tree lists ${m.extents} extent${m.extents === 1 ? '' : 's'} in it.`;
    case 'relocRoot':
      return `${cap(treeName(m.tree))} reaches the group, so it gets a reloc tree: its root ${m.root} is a copy of ${treeName(m.tree)}'s root (level ${m.level}), pointing at the same ${m.children.length} blocks below.`;
    case 'extent':
      return m.to === '0'
        ? `${cap(what(m.level))} ${m.from}, ${treeName(m.tree)}'s root, is in the group: merge's copy of the root moves it.`
        : `${cap(what(m.level))} ${m.from} of ${treeName(m.tree)} leaves the group: the path to it is copied${m.tree === '5' || Number(m.tree) >= 256 ? ' in the reloc tree' : ''}, the copy at ${m.to}.`;
    case 'mergeRoot':
      return `Merge: ${treeName(m.tree)}'s root ${m.from} is copied to ${m.to}, outside the group; now its pointers can be swapped.`;
    case 'swap':
      return `Swap in ${treeName(m.tree)}: it takes the reloc tree's new ${what(m.level)} ${m.new}, and the reloc tree takes the old ${m.old}${m.level > 0 ? ', with everything below them' : ''}${
        !m.traced ? '. Nothing is traced now.'
        : m.level > 0 ? ". Qgroups trace the pair now (subtree mode): the new node and the one it replaced, and below them each new block with the one it replaced; the leaves both nodes share are skipped."
        : '. Qgroups trace the pair now (subtree mode): the new block and the one it replaced.'}`;
    case 'drop':
      return m.root ? `The reloc tree's root ${m.bytenr} is freed: the reloc tree is gone.` : `Dropping the reloc trees frees ${m.bytenr}, an old block merge handed them.`;
    case 'found':
      return `"found ${m.extents} extents" in ${gname}: every tree block is out of it.`;
    case 'dirty':
      return `Commit, generation ${m.generation}: ${m.extents} qgroup dirty extent${m.extents === 1 ? '' : 's'} accounted (the kernel's btrfs_qgroup_num_dirty_extents).`;
    case 'removed':
      return `${cap(groupName(m.group, m.type, m.length))} is empty: its block group item, chunk and device extents are removed.`;
  }
}

/** The step in one sentence. */
export function relocSummary(step: RelocStep): string {
  if (!step.groups.length) return step.dirty.length ? `No balance here; the commit${step.dirty.length > 1 ? 's' : ''} counted ${step.dirtyTotal} qgroup dirty extent${step.dirtyTotal === 1 ? '' : 's'}.` : 'No balance and no commit in this step.';
  const groups = step.groups.map((g) => `${groupName(g.group, g.type, g.length)}${g.trees.length ? ` (reloc trees for ${g.trees.map(treeName).join(', ')})` : ''}, ${g.found ?? 0} extents found`);
  const swaps = step.moments.filter((m) => m.kind === 'swap');
  const traced = swaps.filter((m) => m.kind === 'swap' && m.traced).length;
  return `Relocated ${groups.join('; then ')}. ${swaps.length} pointer swap${swaps.length === 1 ? '' : 's'}, ${traced} traced at once; ${step.dirtyTotal} qgroup dirty extent${step.dirtyTotal === 1 ? '' : 's'} at the commits.`;
}
