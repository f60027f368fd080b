// Counts what a pending log holds, from `dump-tree` text (btrfs-progs' or
// `btrfslab dump-tree`, which prints the same lines). A full dump of an image
// whose superblock has a log_root ends with two kinds of sections:
//
//   log root tree                          the tree of log roots (one
//   leaf ... owner TREE_LOG                ROOT_ITEM per logged subvolume)
//   ...
//   log tree key (TREE_LOG ROOT_ITEM 5)    one per logged subvolume: the log
//   node ... level 1 ... owner TREE_LOG    tree itself, whose items are
//   leaf ... owner TREE_LOG                counted here
//
// Every other section starts with a "... tree key (" or "root tree" /
// "chunk tree" header and ends the one before it.

/** A fresh count of one tree: items per key type, leaves, nodes, level. */
function emptyTree() {
  return { items: {}, leaves: 0, nodes: 0, level: 0 };
}

/**
 * A line-at-a-time counter, for dumps too large to hold as one string.
 * feed(line) each line (no newline), then result().
 */
export function createLogCounter() {
  const trees = {}; // subvolume id (string) -> count of its log tree
  const logRootTree = emptyTree();
  let cur = null; // the tree the current section counts into, or null
  let sawLogRootTree = false;
  return {
    feed(raw) {
      const line = raw.replace(/\s+$/, '');
      let m;
      if ((m = /^log tree key \((\S+) ROOT_ITEM (\d+)\)/.exec(line))) {
        cur = trees[m[2]] ??= emptyTree();
        return;
      }
      if (line === 'log root tree') {
        cur = logRootTree;
        sawLogRootTree = true;
        return;
      }
      if (/^\S.*tree key \(/.test(line) || /^(root tree|chunk tree|total bytes )/.test(line)) {
        cur = null;
        return;
      }
      if (!cur) return;
      if ((m = /^\titem \d+ key \((\S+) (\S+) (\S+)\)/.exec(line))) {
        cur.items[m[2]] = (cur.items[m[2]] ?? 0) + 1;
      } else if (/^leaf \d+ items \d+ /.test(line)) {
        cur.leaves++;
      } else if ((m = /^node \d+ level (\d+) items \d+ /.exec(line))) {
        cur.nodes++;
        cur.level = Math.max(cur.level, Number(m[1]));
      }
    },
    /**
     * { items: {TYPE: n}, leaves, nodes, level } summed over every log tree
     * (level: the highest), plus trees: {subvolid: same} and logRootTree
     * (the tree of log roots). hasLog is false when the dump had no log.
     */
    result() {
      const sum = emptyTree();
      for (const t of Object.values(trees)) {
        for (const [k, v] of Object.entries(t.items)) sum.items[k] = (sum.items[k] ?? 0) + v;
        sum.leaves += t.leaves;
        sum.nodes += t.nodes;
        sum.level = Math.max(sum.level, t.level);
      }
      sum.items = sortKeys(sum.items);
      for (const t of Object.values(trees)) t.items = sortKeys(t.items);
      logRootTree.items = sortKeys(logRootTree.items);
      return { hasLog: sawLogRootTree, ...sum, trees, logRootTree };
    },
  };
}

function sortKeys(o) {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** countLogItems(text): createLogCounter() over a whole dump-tree listing. */
export function countLogItems(dumpTreeText) {
  const c = createLogCounter();
  for (const line of dumpTreeText.split('\n')) c.feed(line);
  return c.result();
}
