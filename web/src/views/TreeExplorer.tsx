import { useEffect, useMemo, useRef, useState } from 'react';
import { saveBlob } from './saveBlob';
import type { Block, KeyPtr, LeafItem, TreeDump } from '../model/dump';
import { createTreeView, type Mark, type TreeViewProps } from './treeView';

/** Above this many blocks a tree opens with its leaves folded. */
export const LOD_BLOCKS = 400;

export interface TreeExplorerProps {
  dump: TreeDump;
  marks: Map<string, Mark>;
  treeName: string;
  onTreeName: (name: string) => void;
  reducedMotion: boolean;
  /** Which state the dump is of (a step), set on the canvas once drawn, for tests and benchmarks. */
  stateKey?: string;
  /** The explorer's name as a landmark: unique on the page (default "Tree explorer"). */
  label?: string;
  /** Badges other than the marks' own, and the item an event is about (event-level stepping). */
  labels?: Map<string, string>;
  focusItem?: { bytenr: string; slot: number } | null;
  ghosts?: TreeViewProps['ghosts'];
}

const EXPLORER = 'Tree explorer';


/** The SVG with the styles it needs inlined, so it stands alone. */
function standaloneSvg(svg: SVGSVGElement): string {
  const clone = svg.cloneNode(true) as SVGSVGElement;
  const box = (svg.querySelector('g.viewport') as SVGGElement).getBBox();
  clone.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  clone.setAttribute('viewBox', `${box.x - 20} ${box.y - 20} ${box.width + 40} ${box.height + 40}`);
  clone.setAttribute('width', String(Math.ceil(box.width + 40)));
  clone.setAttribute('height', String(Math.ceil(box.height + 40)));
  (clone.querySelector('g.viewport') as SVGGElement).removeAttribute('transform');
  const style = document.createElementNS('http://www.w3.org/2000/svg', 'style');
  style.textContent = `
    .block .frame{fill:#fff;stroke:#457b9d;stroke-width:1.5}
    .block[data-mark=cow] .frame{stroke:#e76f51;stroke-width:3}
    .block[data-mark=new] .frame{stroke:#2a9d8f;stroke-width:3}
    .block[data-mark=split] .frame{stroke:#3a86ff;stroke-width:3}
    .block[data-mark=touched] .frame{stroke:#e9c46a;stroke-width:3}
    .block[data-mark=path] .frame{stroke:#6a4c93;stroke-width:3;stroke-dasharray:5 3}
    .badge{font-weight:bold;font-size:9px;fill:#7a3418} .item.focus{fill:#e76f51}
    .gauge-room{fill:#e9ecef} .gauge-used{fill:#457b9d} .count{font-size:9px}
    .ghost .frame{fill:#f3f4f6;stroke:#5b6b7b;stroke-width:1.2;stroke-dasharray:4 3} .ghost text{font-size:9px;fill:#4a5563}
    text{font:10px monospace;fill:#1d2a38} .title{font-weight:bold}
    .item{fill:#a8dadc} .link{fill:none;stroke:#9aa5b1}`;
  clone.insertBefore(style, clone.firstChild);
  return new XMLSerializer().serializeToString(clone);
}

export function TreeExplorer({ dump, marks, treeName, onTreeName, reducedMotion, stateKey, label = EXPLORER, labels, focusItem, ghosts }: TreeExplorerProps) {
  const ref = useRef<HTMLDivElement>(null);
  const view = useRef<ReturnType<typeof createTreeView> | null>(null);
  // blocks the learner toggled; in a large tree every level-1 node starts folded and a toggle unfolds it
  const [toggled, setToggled] = useState<Set<string>>(new Set());
  const [selected, setSelected] = useState<{ block: Block; item: LeafItem | KeyPtr; byKeyboard?: boolean } | null>(null);
  const detailHeading = useRef<HTMLHeadingElement>(null);
  // opened from the keyboard: focus goes to the item, and Close brings it back to the tree
  useEffect(() => {
    if (selected?.byKeyboard) detailHeading.current?.focus();
  }, [selected]);
  const closeItem = () => {
    const back = selected?.byKeyboard ? ref.current?.querySelector<SVGGElement>(`g.block[data-bytenr="${selected.block.bytenr}"]`) : null;
    setSelected(null);
    back?.focus();
  };
  const moveItem = (by: number) => setSelected((s) => {
    if (!s) return s;
    const at = s.block.entries.indexOf(s.item) + by;
    return at >= 0 && at < s.block.entries.length ? { ...s, item: s.block.entries[at] } : s;
  });
  const tree = useMemo(() => dump.trees.find((t) => t.name === treeName) ?? dump.trees[0], [dump, treeName]);
  // Level of detail: a tree of many blocks shows its leaves folded under
  // their parents (expand a node to see them), so that even 100,000 items
  // draw only the nodes and the leaves asked for.
  const collapsed = useMemo(() => {
    if (!tree || tree.blocks.length <= LOD_BLOCKS) return toggled;
    const c = new Set<string>();
    for (const b of tree.blocks) {
      const k = b.bytenr.toString();
      if ((b.level === 1) !== toggled.has(k)) c.add(k);
    }
    return c;
  }, [tree, toggled]);

  useEffect(() => {
    view.current = createTreeView({
      el: ref.current!,
      onSelectItem: (block, item, byKeyboard) => setSelected({ block, item, byKeyboard }),
      onToggle: (b) => setToggled((c) => {
        const n = new Set(c);
        if (n.has(b)) n.delete(b);
        else n.add(b);
        return n;
      }),
    });
    return () => view.current?.destroy();
  }, []);

  useEffect(() => {
    if (tree) view.current?.update({ tree, marks, labels, focusItem, ghosts, collapsed, unfolded: toggled, reducedMotion, nodesize: dump.nodesize });
    if (stateKey !== undefined) ref.current?.setAttribute('data-state', stateKey);
  }, [tree, marks, labels, focusItem, ghosts, collapsed, toggled, reducedMotion, stateKey, dump.nodesize]);

  const exportSvg = () => saveBlob(`${tree.name}-tree.svg`, new Blob([standaloneSvg(view.current!.svg())], { type: 'image/svg+xml' }));
  const exportPng = () => {
    const text = standaloneSvg(view.current!.svg());
    const img = new Image();
    img.onload = () => {
      const c = document.createElement('canvas');
      c.width = img.width;
      c.height = img.height;
      const ctx = c.getContext('2d')!;
      ctx.fillStyle = '#fff';
      ctx.fillRect(0, 0, c.width, c.height);
      ctx.drawImage(img, 0, 0);
      c.toBlob((b) => b && saveBlob(`${tree.name}-tree.png`, b), 'image/png');
    };
    img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(text)}`;
  };

  return (
    <section className="explorer" aria-label={label}>
      <div className="explorer-bar">
        <label>
          Tree
          <select value={tree?.name} onChange={(e) => { onTreeName(e.target.value); setSelected(null); }}>
            {dump.trees.map((t) => <option key={t.id.toString()} value={t.name}>{t.name} ({t.blockCount} block{t.blockCount === 1 ? '' : 's'})</option>)}
          </select>
        </label>
        <button type="button" onClick={() => view.current?.fit(true)} title="The whole tree, however small">Fit</button>
        <button type="button" onClick={exportSvg}>Export SVG</button>
        <button type="button" onClick={exportPng}>Export PNG</button>
        <span className="legend"><i className="m-cow" />COW <i className="m-new" />new <i className="m-split" />split <i className="m-touched" />changed <i className="m-path" />path</span>
      </div>
      <div className="tree-canvas" ref={ref} data-testid="tree-canvas" />
      {selected && (
        <div className="item-detail" role="region" aria-label={label === EXPLORER ? 'Item' : `Item, ${label}`}>
          <h4 ref={detailHeading} tabIndex={-1}>{selected.block.level ? 'Key pointer' : 'Item'} {selected.item.slot} of {selected.block.level ? `node ${selected.block.bytenr}` : `leaf ${selected.block.bytenr}`}</h4>
          {selected.item.kind === 'ptr' && <code>key ({selected.item.key.text})</code>}
          {selected.item.kind === 'item' ? (
            <pre className="dump" aria-label="Fields as dump-tree prints them">{`\titem ${selected.item.slot} key (${selected.item.key.text}) itemoff ${selected.item.offset} itemsize ${selected.item.size}\n${selected.item.body || '\t\t(no fields decoded for this item type)\n'}`}</pre>
          ) : (
            <p><code>block {selected.item.blockptr.toString()} gen {selected.item.generation.toString()}</code></p>
          )}
          <div className="item-nav">
            <button type="button" onClick={() => moveItem(-1)} disabled={selected.block.entries.indexOf(selected.item) <= 0} aria-label="Previous item">◀ item</button>{' '}
            <button type="button" onClick={() => moveItem(1)} disabled={selected.block.entries.indexOf(selected.item) >= selected.block.entries.length - 1} aria-label="Next item">item ▶</button>{' '}
            <button type="button" onClick={closeItem}>Close</button>
          </div>
        </div>
      )}
    </section>
  );
}
