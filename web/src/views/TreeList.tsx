import type { Block, Tree, TreeDump } from '../model/dump';
import { blockHeadline, treeTitle } from '../model/dump';

function BlockView({ block }: { block: Block }) {
  return (
    <article className="block" aria-label={blockHeadline(block)} data-bytenr={block.bytenr.toString()}>
      <h4>{blockHeadline(block)}</h4>
      <table>
        <thead>
          <tr>
            <th scope="col">slot</th>
            <th scope="col">key</th>
            {block.level === 0 ? (
              <>
                <th scope="col">itemoff</th>
                <th scope="col">size</th>
                <th scope="col">contents</th>
              </>
            ) : (
              <>
                <th scope="col">block</th>
                <th scope="col">gen</th>
              </>
            )}
          </tr>
        </thead>
        <tbody>
          {block.entries.map((e) => (
            <tr key={e.slot}>
              <td>{e.slot}</td>
              <td className="key">({e.key.text})</td>
              {e.kind === 'item' ? (
                <>
                  <td>{e.offset}</td>
                  <td>{e.size}</td>
                  <td className="summary">{e.summary}</td>
                </>
              ) : (
                <>
                  <td>{e.blockptr.toString()}</td>
                  <td>{e.generation.toString()}</td>
                </>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </article>
  );
}

function TreeView({ tree }: { tree: Tree }) {
  const title = treeTitle(tree);
  return (
    <section className="tree" aria-label={title}>
      <h3>
        {title} <span className="tree-id">({tree.owner})</span>
      </h3>
      {tree.blocks.map((b) => (
        <BlockView key={b.bytenr.toString()} block={b} />
      ))}
    </section>
  );
}

export function TreeList({ dump }: { dump: TreeDump }) {
  return (
    <section aria-labelledby="trees-heading">
      <h2 id="trees-heading">Trees</h2>
      {dump.trees.map((t) => (
        <TreeView key={t.id.toString()} tree={t} />
      ))}
    </section>
  );
}
