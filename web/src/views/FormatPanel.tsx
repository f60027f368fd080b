import { useState, type DragEvent, type FormEvent } from 'react';
import { parseSize } from '../model/store';

export interface FormatRequest {
  size: bigint;
  nodesize: number;
  label: string;
}

const NODESIZES = [4096, 8192, 16384, 32768, 65536];

export function FormatPanel(props: { disabled: boolean; onFormat: (r: FormatRequest) => void; onOpen: (f: File) => void }) {
  const [size, setSize] = useState('128M');
  const [nodesize, setNodesize] = useState(16384);
  const [label, setLabel] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [dragging, setDragging] = useState(false);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const bytes = parseSize(size);
    if (bytes === null) {
      setProblem(`"${size}" is not a size: write it like 128M or 1G`);
      return;
    }
    setProblem(null);
    props.onFormat({ size: bytes, nodesize, label });
  };

  const drop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    const f = e.dataTransfer.files[0];
    if (f) props.onOpen(f);
  };

  return (
    <section className="panel" aria-labelledby="make-fs">
      <h2 id="make-fs">Make a filesystem</h2>
      <form onSubmit={submit} className="format-form">
        <label>
          Size
          <input name="size" value={size} onChange={(e) => setSize(e.target.value)} aria-describedby="size-help" />
        </label>
        <label>
          Node size
          <select name="nodesize" value={nodesize} onChange={(e) => setNodesize(Number(e.target.value))}>
            {NODESIZES.map((n) => (
              <option key={n} value={n}>{n / 1024} KiB</option>
            ))}
          </select>
        </label>
        <label>
          Label
          <input name="label" value={label} maxLength={255} onChange={(e) => setLabel(e.target.value)} />
        </label>
        <button type="submit" disabled={props.disabled}>Format</button>
      </form>
      <p id="size-help" className="hint">At least 24 MiB (32 MiB with 32 KiB nodes, 64 MiB with 64 KiB nodes).</p>
      {problem && <p className="error" role="alert">{problem}</p>}
      <div
        className={dragging ? 'dropzone dragging' : 'dropzone'}
        onDragOver={(e) => { e.preventDefault(); setDragging(true); }}
        onDragLeave={() => setDragging(false)}
        onDrop={drop}
      >
        <label>
          Or open an image (ours, mkfs.btrfs’s or one the kernel wrote), or drop it here:{' '}
          <input type="file" name="image" disabled={props.disabled}
            onChange={(e) => { const f = e.target.files?.[0]; if (f) props.onOpen(f); e.target.value = ''; }} />
        </label>
      </div>
    </section>
  );
}
