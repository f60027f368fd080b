// The page's side of the Worker: each request is a promise of its typed result.
// Any request can be cancelled: the worker is terminated and a new one
// started (what the old one held, handles included, is gone), every pending
// promise is rejected with a CancelledError, and onRestart listeners hear of
// it so the page can rebuild its state. A hostile or huge image can cost the
// core a long time; the page's thread never waits for it.
import { CoreError } from './errors';
import type { Envelope, Reply, Request, Results } from './protocol';

/** What the core is doing: the oldest request still running. */
export interface Busy {
  op: Request['op'];
  since: number; // performance.now() when it was sent
}

/** A request rejected because it was cancelled (code -100: the page's, not the core's). */
export class CancelledError extends CoreError {
  constructor(op: string) {
    super(-100, `cancelled: ${op} was stopped and the core restarted`);
  }
}

type WorkerFactory = () => Worker;
const defaultWorker: WorkerFactory = () => new Worker(new URL('./worker.ts', import.meta.url), { type: 'module' });

export class CoreClient {
  private worker!: Worker;
  private next = 1;
  private pending = new Map<number, { op: Request['op']; since: number; resolve: (r: unknown) => void; reject: (e: Error) => void }>();
  private busyListeners = new Set<(b: Busy | null) => void>();
  private restartListeners = new Set<() => void>();

  constructor(private readonly makeWorker: WorkerFactory = defaultWorker) {
    this.start();
  }

  private start(): void {
    const w = this.makeWorker();
    this.worker = w;
    w.onmessage = (ev: MessageEvent<Reply>) => {
      const p = this.pending.get(ev.data.id);
      if (!p || w !== this.worker) return;
      this.pending.delete(ev.data.id);
      if (ev.data.ok) p.resolve(ev.data.result);
      else p.reject(new CoreError(ev.data.error.code, ev.data.error.message));
      this.notifyBusy();
    };
    w.onerror = (ev) => {
      if (w !== this.worker) return;
      this.rejectAll(() => new CoreError(-3, `the core's worker failed: ${ev.message}`));
    };
  }

  private rejectAll(err: (op: string) => Error): void {
    for (const p of this.pending.values()) p.reject(err(p.op));
    this.pending.clear();
    this.notifyBusy();
  }

  /** The oldest running request, or null when the core is idle. */
  busy(): Busy | null {
    let oldest: Busy | null = null;
    for (const p of this.pending.values()) if (!oldest || p.since < oldest.since) oldest = { op: p.op, since: p.since };
    return oldest;
  }

  private notifyBusy(): void {
    const b = this.busy();
    for (const l of this.busyListeners) l(b);
  }

  /** Calls l whenever what the core is doing changes; returns the unsubscribe. */
  onBusy(l: (b: Busy | null) => void): () => void {
    this.busyListeners.add(l);
    return () => this.busyListeners.delete(l);
  }

  /** Calls l after every cancel (the core was restarted empty); returns the unsubscribe. */
  onRestart(l: () => void): () => void {
    this.restartListeners.add(l);
    return () => this.restartListeners.delete(l);
  }

  call<R extends Request>(req: R, transfer: Transferable[] = []): Promise<Results[R['op']]> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { op: req.op, since: performance.now(), resolve: resolve as (r: unknown) => void, reject });
      this.worker.postMessage({ ...req, id } as Envelope, transfer);
      this.notifyBusy();
    });
  }

  /** Stops whatever the core is doing: a new worker replaces the old one. */
  cancel(): void {
    this.worker.terminate();
    this.start();
    this.rejectAll((op) => new CancelledError(op));
    for (const l of this.restartListeners) l();
  }

  terminate(): void {
    this.worker.terminate();
    this.rejectAll((op) => new CancelledError(op));
  }
}
