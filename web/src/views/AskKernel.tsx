import { useMemo, useState } from 'react';
import { CancelledError, type CoreClient } from '../core/client';
import { askKernel, companion, companionHello } from '../core/companion';
import type { RunOptions } from '../core/wasm';
import { compareFiles, type FileView, type KernelAnswer } from '../model/kernelAnswer';

export interface AskKernelProps {
  core: CoreClient;
  /** The state: a scenario after a line (or a write inside it; line -1: the run's end, committed). */
  script: string;
  opts: RunOptions;
  line: number;
  seq?: number;
  /** What the state is, for the sentences ("this crash point", "this step"). */
  what: string;
}

type Phase =
  | { kind: 'idle' }
  | { kind: 'asking' }
  | { kind: 'answer'; kernel: KernelAnswer; core: FileView[] }
  | { kind: 'failed'; message: string };

const describe = (f?: FileView) => (f ? `${f.type}${f.size !== undefined ? `, ${f.size} bytes` : ''}${f.sha256 ? `, sha256 ${f.sha256.slice(0, 12)}…` : ''}${f.target !== undefined ? ` → ${f.target}` : ''}` : '—');

/** "Ask the kernel": the state's image goes to the companion (`btrfslab serve`), the kernel mounts it and lists it, beside the core's own replay. */
export function AskKernel({ core, script, opts, line, seq, what }: AskKernelProps) {
  const [phase, setPhase] = useState<Phase>({ kind: 'idle' });
  const [asked, setAsked] = useState<string>('');
  const key = `${script}\n${line}\n${seq ?? ''}`;
  const shown: Phase = asked === key ? phase : { kind: 'idle' };
  const c = companion();
  const ask = async () => {
    setAsked(key);
    const comp = companion();
    if (!comp) return;
    setPhase({ kind: 'asking' });
    try {
      const hello = await companionHello(comp);
      if (!hello.ok) return setPhase({ kind: 'failed', message: hello.message });
      if (!hello.value.root) return setPhase({ kind: 'failed', message: 'the companion is not running as root: it cannot attach a loop device; start it with sudo' });
      const input = await core.call({ op: 'kernelInput', script, opts, line, seq });
      const r = await askKernel(comp, input.blob);
      setPhase(r.ok ? { kind: 'answer', kernel: r.value, core: input.files } : { kind: 'failed', message: r.message });
    } catch (e) {
      if (!(e instanceof CancelledError)) setPhase({ kind: 'failed', message: (e as Error).message });
    }
  };
  const cmp = useMemo(() => (shown.kind === 'answer' ? compareFiles(shown.kernel.files, shown.core) : null), [shown]);
  return (
    <section className="ask-kernel" aria-label={`The kernel's answer about ${what}`}>
      <button type="button" onClick={() => void ask()} disabled={shown.kind === 'asking'}>Ask the kernel</button>
      {!c && asked === key && (
        <p className="hint" role="status">
          No companion yet: run <code>sudo wasm-core/build/btrfslab serve</code> and open the URL it prints; then ask again. It lets this page hand {what}'s image to the kernel on this machine (127.0.0.1 only, with a token).
        </p>
      )}
      {shown.kind === 'asking' && <p role="status">The kernel is mounting {what}'s image…</p>}
      {shown.kind === 'failed' && <p className="error" role="alert">{shown.message}</p>}
      {shown.kind === 'answer' && cmp && (
        <div className="kernel-answer" tabIndex={0 /* it scrolls sideways on a phone: keyboard users scroll it too */}>
          <p role="status" data-testid="kernel-verdict">
            Linux {shown.kernel.kernel}: {shown.kernel.log_pending ? 'a log was pending; the mount replayed it. ' : 'no log pending. '}
            {shown.kernel.mount.ok ? '' : `The mount failed: ${shown.kernel.mount.error}. `}
            btrfs check {shown.kernel.check.ok ? 'passed' : 'FAILED'}.{' '}
            {cmp.differences.length === 0
              ? `The kernel and the core agree on all ${cmp.agree} paths.`
              : `${cmp.differences.length} difference${cmp.differences.length === 1 ? '' : 's'} (they agree on ${cmp.agree} paths).`}
          </p>
          <table className="kernel-files">
            <caption>{what}: the kernel's files beside the core's after its own replay</caption>
            <thead><tr><th scope="col">path</th><th scope="col">the kernel</th><th scope="col">the core</th><th scope="col">agree</th></tr></thead>
            <tbody>
              {[...new Set([...shown.kernel.files.map((f) => f.path), ...shown.core.map((f) => f.path)])].sort().slice(0, 500).map((p) => {
                const d = cmp.differences.find((x) => x.path === p);
                const k = shown.kernel.files.find((f) => f.path === p), o = shown.core.find((f) => f.path === p);
                return (
                  <tr key={p} className={d ? 'differs' : undefined}>
                    <td><code>{p}</code></td><td>{describe(k)}</td><td>{describe(o)}</td><td>{d ? `✗ ${d.what}` : '✓'}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {!shown.kernel.check.ok && <pre className="check-output">{shown.kernel.check.output}</pre>}
        </div>
      )}
    </section>
  );
}
