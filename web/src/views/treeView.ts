// The tree explorer: one tree of the current state drawn as nodes and
// leaves with their keys (d3-hierarchy layout), zoom and pan, collapse and
// expand, items clickable. Blocks are keyed by bytenr, so a COW shows as a
// new block entering and the old one leaving, and a split as one leaf
// becoming two. Large trees stay cheap: items are drawn one by one only in
// small blocks, as a density bar in large ones.
import { hierarchy, tree as d3tree, type HierarchyPointNode } from 'd3-hierarchy';
import { select, type Selection } from 'd3-selection';
import 'd3-transition';
import { zoom, zoomIdentity, type ZoomBehavior } from 'd3-zoom';
import type { Block, KeyPtr, LeafItem, Tree } from '../model/dump';

export type Mark = 'new' | 'cow' | 'split' | 'touched' | 'freed' | 'path';

/** Each mark is also said in words, in a badge on the block (not by colour alone). */
export const MARK_BADGE: Record<Mark, string> = { cow: 'COW', new: 'new', split: 'split', touched: 'changed', freed: 'freed', path: 'path' };

export interface TreeViewProps {
  tree: Tree;
  /** bytenr -> how the current step touched the block. */
  marks: Map<string, Mark>;
  /** bytenr -> a badge other than the mark's own (e.g. "+1 pointer"). */
  labels?: Map<string, string>;
  /** The item the current event is about: drawn highlighted in its leaf. */
  focusItem?: { bytenr: string; slot: number } | null;
  /** Fold keys (foldKey) of nodes whose unchanged children the learner opened. */
  unfolded?: Set<string>;
  /** The filesystem's node size: each block's gauge shows how full it is. */
  nodesize?: number;
  /** Blocks a COW replaced since the last commit, drawn faded behind their copies (model/ghosts.ts). */
  ghosts?: { bytenr: bigint; level: number; generation: bigint; copy: bigint }[];
  /** Bytenrs whose children are hidden. */
  collapsed: Set<string>;
  reducedMotion: boolean;
}

export interface TreeViewOptions {
  el: HTMLElement;
  /** An item opened (byKeyboard: from a focused leaf, so focus follows it). */
  onSelectItem: (block: Block, item: LeafItem | KeyPtr, byKeyboard?: boolean) => void;
  onToggle: (bytenr: string) => void;
}

interface NodeDatum {
  block: Block;
  children?: NodeDatum[];
  hiddenChildren: number;
  /** A run of unchanged siblings folded into one box ("… 40 leaves"): how many, and the key that opens them. */
  fold?: { count: number; key: string };
}

const BLOCK_W = 184;
const BLOCK_H = 64;
const MAX_ITEMS_DRAWN = 24;
/* the smallest scale fit() uses: block text (10 px, badges 9 px) stays at 8 px or more on screen */
const MIN_SCALE = 0.9;
const HEADER_SIZE = 101; /* a tree block's header: what no item can use */
const GAUGE_W = BLOCK_W - 8; /* a strip along the block's bottom edge */

/** How full a block is, 0..1, from its free bytes. */
export function fullness(b: Block, nodesize: number): number {
  const room = nodesize - HEADER_SIZE;
  return room > 0 ? Math.max(0, Math.min(1, 1 - b.free / room)) : 0;
}
/* where a ghost sits, from its copy: up into the gap above, a little right (never onto a sibling: they are 24 apart) */
const GHOST_DX = 18;
const MINI_W = 160;
const MINI_H = 64;
const GHOST_DY = 18;

/** Siblings are folded only under a node with more children than this. */
const FOLD_OVER = 6;
/** The key that opens the folded runs under a node. */
export const foldKey = (parent: bigint) => `fold:${parent}`;

/**
 * The tree as drawn: blocks under collapsed nodes hidden; under a node of
 * many children, runs of three or more siblings that nothing on show
 * touches (interesting() false for them and all below) fold into one box,
 * unless the node's fold key is in unfolded. The first and last child, the
 * touched ones and their neighbours stay.
 */
export function buildHierarchy(tree: Tree, collapsed: Set<string>, interesting: (bytenr: string) => boolean = () => true,
  unfolded: Set<string> = new Set()): NodeDatum | null {
  const byBytenr = new Map(tree.blocks.map((b) => [b.bytenr.toString(), b]));
  const root = tree.blocks[0];
  if (!root) return null;
  const seen = new Set<string>();
  const touched = (d: NodeDatum): boolean => interesting(d.block.bytenr.toString()) || !!d.children?.some(touched);
  const make = (b: Block): NodeDatum => {
    seen.add(b.bytenr.toString());
    const ptrs = b.level > 0 ? (b.entries as KeyPtr[]) : [];
    const kids = ptrs.map((p) => byBytenr.get(p.blockptr.toString())).filter((c): c is Block => !!c && !seen.has(c.bytenr.toString()));
    if (collapsed.has(b.bytenr.toString())) return { block: b, hiddenChildren: kids.length };
    let children = kids.map(make);
    if (children.length > FOLD_OVER && !unfolded.has(foldKey(b.bytenr))) {
      const hot = children.map(touched);
      const keep = children.map((_, i) => i === 0 || i === children.length - 1 || hot[i] || hot[i - 1] || hot[i + 1]);
      const out: NodeDatum[] = [];
      for (let i = 0; i < children.length;) {
        let j = i;
        while (j < children.length && !keep[j]) j++;
        if (j - i >= 3) {
          const first = children[i].block;
          // a stand-in block for the run (its bytenr negative: never a real one's)
          const stand: Block = { ...first, bytenr: -(b.bytenr * 1000n + BigInt(i)) - 1n, nritems: 0, free: 0, entries: [] };
          out.push({ block: stand, hiddenChildren: 0, fold: { count: j - i, key: foldKey(b.bytenr) } });
        } else out.push(...children.slice(i, j));
        if (j < children.length) out.push(children[j]);
        i = j + 1;
      }
      children = out;
    }
    return { block: b, children: children.length ? children : undefined, hiddenChildren: 0 };
  };
  return make(root);
}

function keyText(e: LeafItem | KeyPtr | undefined): string {
  return e ? `(${e.key.text})` : '';
}

/** The text drawn in a block, part by part. */
function blockText(d: NodeDatum, props: TreeViewProps | null = null) {
  const b = d.block;
  if (d.fold) {
    const what = b.level ? `node${d.fold.count === 1 ? '' : 's'}` : `lea${d.fold.count === 1 ? 'f' : 'ves'}`;
    // each part ends in punctuation: names are checked against the drawn text run together
    return { badge: '', title: `… ${d.fold.count} ${what},`, keys: 'unchanged here:', keys2: 'open them', count: '', hidden: '' };
  }
  const key = b.bytenr.toString();
  const mark = props?.marks.get(key);
  return {
    badge: ((t) => (t ? `[${t}]` : ''))(props?.labels?.get(key) ?? (mark ? MARK_BADGE[mark] : '')), // bracketed: its own word in the name
    title: `${b.level ? `node L${b.level}` : 'leaf'} ${b.bytenr}`,
    keys: keyText(b.entries[0]),
    keys2: b.nritems > 1 ? `… ${keyText(b.entries[b.entries.length - 1])}` : `gen ${b.generation}`,
    // as drawItems draws it: a count of a dense block's items, or of a cut leaf's folded ones
    count: b.entries.length > MAX_ITEMS_DRAWN ? `${b.entries.length} ${b.level ? 'pointers' : 'items'}`
      : b.nritems > b.entries.length ? `…${b.nritems - b.entries.length}…` : '',
    hidden: d.hiddenChildren ? `+${d.hiddenChildren} hidden` : '',
  };
}

/** The drawn text in document order (title, keys, the item count, the hidden count). */
function shownText(d: NodeDatum, props: TreeViewProps | null): string[] {
  const t = blockText(d, props);
  return [t.title, t.keys, t.keys2, t.count, t.hidden, t.badge].filter(Boolean);
}

export function createTreeView(opts: TreeViewOptions) {
  // a group, not an image: its blocks are buttons (an image's content is not interactive)
  const svg = select(opts.el).append('svg').attr('class', 'tree-svg').attr('role', 'group');
  const viewport = svg.append('g').attr('class', 'viewport');
  const linkLayer = viewport.append('g').attr('class', 'links');
  const ghostLayer = viewport.append('g').attr('class', 'ghosts');
  const nodeLayer = viewport.append('g').attr('class', 'nodes');
  let current: TreeViewProps | null = null;
  const zoomer: ZoomBehavior<SVGSVGElement, unknown> = zoom<SVGSVGElement, unknown>()
    .scaleExtent([0.05, 4])
    .on('zoom', (ev) => {
      viewport.attr('transform', ev.transform.toString());
      drawMinimapView(ev.transform);
    });
  // the minimap: every block laid out, tiny, and the part on screen; shown
  // when the tree does not fit (a click there moves the view)
  const minimap = select(opts.el).append('svg').attr('class', 'minimap').attr('aria-hidden', 'true')
    .attr('width', MINI_W).attr('height', MINI_H).style('display', 'none');
  const miniBlocks = minimap.append('g');
  const miniView = minimap.append('rect').attr('class', 'minimap-view');
  let miniScale = 1;
  let miniBox = { x: 0, y: 0, width: 1, height: 1 };
  minimap.on('click', (ev: MouseEvent) => {
    const [mx, my] = [ev.offsetX, ev.offsetY];
    svg.call(zoomer.translateTo, miniBox.x + mx / miniScale, miniBox.y + my / miniScale);
  });
  svg.call(zoomer);
  let fittedFor = '';
  // where the current layout put its blocks (blocks still fading out are not part of it), and the ones the step touched
  let laid: { x: number; y: number }[] = [];
  let laidHot: { x: number; y: number }[] = [];

  function drawMinimap() {
    if (!laid.length) {
      minimap.style('display', 'none');
      return;
    }
    const xs = laid.map((p) => p.x), ys = laid.map((p) => p.y);
    miniBox = { x: Math.min(...xs) - BLOCK_W / 2, y: Math.min(...ys), width: Math.max(...xs) - Math.min(...xs) + BLOCK_W, height: Math.max(...ys) - Math.min(...ys) + BLOCK_H };
    miniScale = Math.min((MINI_W - 4) / miniBox.width, (MINI_H - 4) / miniBox.height);
    miniBlocks.attr('transform', `translate(2,2) scale(${miniScale}) translate(${-miniBox.x},${-miniBox.y})`);
    miniBlocks.selectAll('rect').data(laid).join('rect').attr('class', 'minimap-block')
      .attr('x', (p) => p.x - BLOCK_W / 2).attr('y', (p) => p.y).attr('width', BLOCK_W).attr('height', BLOCK_H);
  }

  function drawMinimapView(t: { x: number; y: number; k: number }) {
    const w = opts.el.clientWidth || 800, h = opts.el.clientHeight || 500;
    // the part of the tree on screen, in tree coordinates
    const v = { x: -t.x / t.k, y: -t.y / t.k, width: w / t.k, height: h / t.k };
    const fits = v.x <= miniBox.x && v.y <= miniBox.y && v.x + v.width >= miniBox.x + miniBox.width && v.y + v.height >= miniBox.y + miniBox.height;
    minimap.style('display', () => (fits || !laid.length ? 'none' : null));
    miniView.attr('x', 2 + (v.x - miniBox.x) * miniScale).attr('y', 2 + (v.y - miniBox.y) * miniScale)
      .attr('width', v.width * miniScale).attr('height', v.height * miniScale);
  }

  function update(props: TreeViewProps) {
    current = props;
    const hot = new Set<string>([...props.marks.keys(), ...(props.labels?.keys() ?? []), ...(props.ghosts ?? []).map((g) => g.copy.toString())]);
    if (props.focusItem) hot.add(props.focusItem.bytenr);
    const data = buildHierarchy(props.tree, props.collapsed, (b) => hot.has(b), props.unfolded);
    const ms = props.reducedMotion ? 0 : 450;
    svg.attr('aria-label', `${props.tree.name} tree: ${props.tree.blocks.length} blocks`);
    if (!data) {
      laid = [];
      drawMinimap();
      ghostLayer.selectAll('*').remove();
      nodeLayer.selectAll('*').remove();
      linkLayer.selectAll('*').remove();
      return;
    }
    const root = d3tree<NodeDatum>().nodeSize([BLOCK_W + 24, BLOCK_H + 60])(hierarchy(data));
    const nodes = root.descendants();
    laid = nodes.map((d) => ({ x: d.x, y: d.y }));
    laidHot = nodes.filter((d) => hot.has(d.data.block.bytenr.toString())).map((d) => ({ x: d.x, y: d.y }));
    drawMinimap();
    const links = root.links();

    const linkSel = linkLayer
      .selectAll<SVGPathElement, { source: HierarchyPointNode<NodeDatum>; target: HierarchyPointNode<NodeDatum> }>('path')
      .data(links, (l) => l.target.data.block.bytenr.toString());
    linkSel.exit().remove();
    linkSel
      .enter()
      .append('path')
      .attr('class', 'link')
      .merge(linkSel)
      .attr('d', (l) => `M${l.source.x},${l.source.y + BLOCK_H} C${l.source.x},${l.source.y + BLOCK_H + 30} ${l.target.x},${l.target.y - 30} ${l.target.x},${l.target.y}`);

    const sel = nodeLayer
      .selectAll<SVGGElement, HierarchyPointNode<NodeDatum>>('g.block')
      .data(nodes, (d) => d.data.block.bytenr.toString());

    sel.exit().classed('leaving', true).transition().duration(ms).style('opacity', 0).remove();

    const enter = sel
      .enter()
      .append('g')
      .attr('class', 'block')
      .attr('tabindex', 0)
      .attr('role', 'button')
      .attr('transform', (d) => `translate(${d.x - BLOCK_W / 2},${d.y})`)
      .style('opacity', 0)
      .on('click', (ev: MouseEvent, d) => {
        if ((ev.target as Element).closest('.item')) return;
        opts.onToggle(d.data.fold ? d.data.fold.key : d.data.block.bytenr.toString());
      })
      .on('keydown', (ev: KeyboardEvent, d) => {
        // a node: Enter folds or unfolds its children; a leaf: Enter or Space opens its first item; a fold: Enter opens it
        if (ev.key !== 'Enter' && ev.key !== ' ') return;
        const b = d.data.block;
        if (d.data.fold) {
          ev.preventDefault();
          opts.onToggle(d.data.fold.key);
          return;
        }
        if (b.level > 0) {
          if (ev.key === 'Enter') opts.onToggle(b.bytenr.toString());
          return;
        }
        ev.preventDefault();
        ev.stopPropagation();
        if (b.entries[0]) opts.onSelectItem(b, b.entries[0], true);
      });
    enter.append('rect').attr('class', 'frame').attr('width', BLOCK_W).attr('height', BLOCK_H).attr('rx', 4);
    enter.append('text').attr('class', 'title').attr('x', 6).attr('y', 14);
    enter.append('text').attr('class', 'keys').attr('x', 6).attr('y', 28);
    enter.append('text').attr('class', 'keys2').attr('x', 6).attr('y', 40);
    enter.append('g').attr('class', 'items').attr('transform', `translate(4,${BLOCK_H - 18})`);
    enter.append('text').attr('class', 'hidden-count').attr('x', BLOCK_W / 2).attr('y', BLOCK_H + 14).attr('text-anchor', 'middle');
    enter.append('text').attr('class', 'badge').attr('x', BLOCK_W - 5).attr('y', 14).attr('text-anchor', 'end');
    const gauge = enter.append('g').attr('class', 'gauge').attr('transform', `translate(4,${BLOCK_H - 5})`);
    gauge.append('rect').attr('class', 'gauge-room').attr('width', GAUGE_W).attr('height', 3);
    gauge.append('rect').attr('class', 'gauge-used').attr('height', 3);

    const all = enter.merge(sel);
    all
      .classed('fold', (d) => !!d.data.fold)
      .attr('data-bytenr', (d) => d.data.block.bytenr.toString())
      .attr('data-mark', (d) => props.marks.get(d.data.block.bytenr.toString()) ?? null)
      // the name starts with the text drawn in the block, in its order (what a speech-input user says), then the facts only its tooltip shows
      .attr('aria-label', (d) => {
        const b = d.data.block;
        if (d.data.fold) return `${shownText(d.data, props).join(' ')}: ${d.data.fold.count} blocks nothing here touched, folded`;
        const full = props.nodesize ? `, ${Math.round(fullness(b, props.nodesize) * 100)}% full` : '';
        return `${shownText(d.data, props).join(' ')}: ${b.nritems} ${b.level ? 'pointers' : 'items'}, ${b.free} bytes free${full}, generation ${b.generation}`;
      })
      .attr('aria-expanded', (d) => (d.data.fold ? 'false' : d.data.block.level ? String(!d.data.hiddenChildren) : null));
    all
      .transition()
      .duration(ms)
      .style('opacity', 1)
      .attr('transform', (d) => `translate(${d.x - BLOCK_W / 2},${d.y})`);
    all.select('text.title').text((d) => blockText(d.data).title);
    all.select('text.keys').text((d) => blockText(d.data).keys);
    all.select('text.keys2').text((d) => blockText(d.data).keys2);
    all.select('text.hidden-count').text((d) => blockText(d.data).hidden);
    all.select('text.badge').text((d) => blockText(d.data, props).badge);
    all.select('g.gauge').style('display', (d) => (props.nodesize && !d.data.fold ? null : 'none'));
    all.select('rect.gauge-used').attr('width', (d) => (props.nodesize ? GAUGE_W * fullness(d.data.block, props.nodesize) : 0));
    all.each(function (d) {
      const focus = props.focusItem && props.focusItem.bytenr === d.data.block.bytenr.toString() ? props.focusItem.slot : -1;
      drawItems(select(this).select<SVGGElement>('g.items'), d.data.block, opts, focus);
    });
    drawGhosts(nodes, props.ghosts ?? []);
    all.select('title').remove();
    all.append('title').text((d) => `${d.data.block.nritems} items, ${d.data.block.free} bytes free${props.nodesize ? ` (${Math.round(fullness(d.data.block, props.nodesize) * 100)}% full)` : ''}, generation ${d.data.block.generation}`);

    // fit when the tree or its shape changes (not on every step: the learner may have zoomed)
    const key = `${props.tree.id}:${nodes.length}:${root.height}`;
    if (fittedFor !== key) {
      fittedFor = key;
      fit();
    }
  }

  /** Each ghost up and to the right of its copy, under it: the copy hides all but a strip with its label. */
  function drawGhosts(nodes: HierarchyPointNode<NodeDatum>[], ghosts: NonNullable<TreeViewProps['ghosts']>) {
    const at = new Map(nodes.map((d) => [d.data.block.bytenr.toString(), d]));
    const shown = ghosts.filter((g) => at.has(g.copy.toString()));
    const sel = ghostLayer.selectAll<SVGGElement, (typeof shown)[number]>('g.ghost').data(shown, (g) => g.bytenr.toString());
    sel.exit().remove();
    const enter = sel.enter().append('g').attr('class', 'ghost').attr('role', 'img');
    enter.append('rect').attr('class', 'frame').attr('width', BLOCK_W).attr('height', BLOCK_H).attr('rx', 4);
    enter.append('text').attr('class', 'ghost-label').attr('x', 6).attr('y', 12);
    const all = enter.merge(sel);
    all
      .attr('data-bytenr', (g) => g.bytenr.toString())
      .attr('transform', (g) => {
        const d = at.get(g.copy.toString())!;
        return `translate(${d.x - BLOCK_W / 2 + GHOST_DX},${d.y - GHOST_DY})`;
      })
      .attr('aria-label', (g) => `${g.level ? `node L${g.level}` : 'leaf'} ${g.bytenr}, on disk, generation ${g.generation}: the committed block, replaced by its copy ${g.copy} until the commit`);
    all.select('text.ghost-label').text((g) => `on disk, generation ${g.generation}: ${g.level ? `node L${g.level}` : 'leaf'} ${g.bytenr}`);
  }

  /** Fits the tree to the canvas; below a readable scale, centres what the step touched instead (whole: fit it all anyway). */
  function fit(whole = false) {
    const xs = laid.map((p) => p.x), ys = laid.map((p) => p.y);
    const box = laid.length
      ? { x: Math.min(...xs) - BLOCK_W / 2, y: Math.min(...ys), width: Math.max(...xs) - Math.min(...xs) + BLOCK_W, height: Math.max(...ys) - Math.min(...ys) + BLOCK_H + 90 }
      : (nodeLayer.node() as SVGGElement).getBBox();
    const w = opts.el.clientWidth || 800;
    const h = opts.el.clientHeight || 500;
    if (!box.width) return;
    const k = Math.min(1.2, 0.9 * Math.min(w / (box.width + 40), h / (box.height + 40)));
    if (k >= MIN_SCALE || !laid.length || whole) {
      svg.call(zoomer.transform, zoomIdentity.translate(w / 2 - k * (box.x + box.width / 2), 20 - k * box.y).scale(k));
      return;
    }
    // too big to fit with readable text: at the smallest readable scale,
    // centred on the blocks the step touched (else the root); pan for the rest
    // the deepest touched blocks (the leaf a change landed in, not the root above it)
    const deepest = laidHot.length ? Math.max(...laidHot.map((p) => p.y)) : 0;
    const at = laidHot.length ? laidHot.filter((p) => p.y === deepest) : [laid[0]];
    const cx = (Math.min(...at.map((p) => p.x)) + Math.max(...at.map((p) => p.x))) / 2;
    const top = Math.min(box.y, ...at.map((p) => p.y));
    svg.call(zoomer.transform, zoomIdentity.translate(w / 2 - MIN_SCALE * cx, 20 - MIN_SCALE * top).scale(MIN_SCALE));
  }

  return {
    update,
    fit,
    svg: () => svg.node() as SVGSVGElement,
    destroy() {
      svg.on('.zoom', null);
      svg.remove();
      minimap.remove();
      current = null;
    },
    get props() {
      return current;
    },
  };
}

function drawItems(g: Selection<SVGGElement, unknown, null, undefined>, b: Block, opts: TreeViewOptions, focus: number) {
  const n = b.entries.length;
  const w = BLOCK_W - 8;
  if (n > MAX_ITEMS_DRAWN) {
    // level of detail: a density bar, one click target for the block's first item
    const sel = g.selectAll<SVGRectElement, number>('rect.item').data([0]);
    sel.exit().remove();
    sel.enter().append('rect').attr('class', 'item dense').merge(sel)
      .attr('width', w).attr('height', 12)
      .on('click', () => opts.onSelectItem(b, b.entries[0]));
    g.selectAll('text.count').data([n]).join('text').attr('class', 'count').attr('x', w / 2).attr('y', 10)
      .attr('text-anchor', 'middle').text(`${n} ${b.level ? 'pointers' : 'items'}`); // as blockText's count
    return;
  }
  // a leaf cut to its first and last items (the core folds the middle) keeps
  // them inside the block: the first from the left, the last from the right,
  // the folded ones a gap between, counted
  const folded = Math.max(0, b.nritems - n);
  const GAP = folded ? 34 : 0;
  const cw = n ? (w - GAP) / n : w;
  const half = folded ? b.entries.findIndex((e, i) => i > 0 && e.slot !== b.entries[i - 1].slot + 1) : n;
  const xOf = (i: number) => (i < half || half < 0 ? i * cw : i * cw + GAP);
  g.selectAll('text.count').data(folded ? [folded] : []).join('text').attr('class', 'count')
    .attr('x', half * cw + GAP / 2).attr('y', 10).attr('text-anchor', 'middle').text((k) => `…${k}…`);
  g.selectAll<SVGRectElement, LeafItem | KeyPtr>('rect.item')
    .data(b.entries, (e) => `${e.slot}`)
    .join('rect')
    .attr('class', (e) => (e.slot === focus ? 'item focus' : 'item'))
    .attr('x', (_e, i) => xOf(i))
    .attr('width', Math.max(1, cw - 1))
    .attr('height', 12)
    .on('click', (_ev, e) => opts.onSelectItem(b, e))
    .selectAll('title')
    .data((e) => [e])
    .join('title')
    .text((e) => `slot ${e.slot} (${e.key.text})`);
}
