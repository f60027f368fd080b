import { formatBytes, type LoadedImage } from '../model/store';

export function ImagePanel({ image, onDownload }: { image: LoadedImage; onDownload: () => void }) {
  const { dump, source } = image;
  const name = source.kind === 'file' ? source.name : source.label ? `“${source.label}”` : 'new filesystem';
  const blocks = dump.trees.reduce((n, t) => n + t.blocks.length, 0);
  return (
    <section className="panel" aria-labelledby="image-summary">
      <h2 id="image-summary">Image: {name}</h2>
      <dl className="facts">
        <div><dt>Size</dt><dd>{formatBytes(image.size)}</dd></div>
        <div><dt>Node size</dt><dd>{dump.nodesize} bytes</dd></div>
        <div><dt>Generation</dt><dd data-testid="generation">{dump.generation.toString()}</dd></div>
        <div><dt>Bytes used</dt><dd data-testid="bytes-used">{dump.bytesUsed.toString()}</dd></div>
        <div><dt>Trees</dt><dd data-testid="tree-count">{dump.trees.length}</dd></div>
        <div><dt>Tree blocks</dt><dd data-testid="block-count">{blocks}</dd></div>
      </dl>
      <button type="button" onClick={onDownload}>Download image</button>
      <p className="hint">
        Mount it with a loop device: <code>sudo mount -o loop btrfs-lab.img /mnt</code>, or check it with{' '}
        <code>btrfs check btrfs-lab.img</code>; <code>btrfslab dump-tree btrfs-lab.img</code> prints what you see below.
      </p>
    </section>
  );
}
