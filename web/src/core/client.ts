// The page's side of the Worker: each request is a promise of its typed result.
// Any request can be cancelled: the worker is terminated and a new one
// started (what the old one held, handles included, is gone), every pending
// promise is rejected with a CancelledError, and onRestart listeners hear of
// it so the page can rebuild its state. A core that traps (its memory can no
// longer be trusted) or a worker that dies is replaced the same way. A
// hostile or huge image can cost the core a long time; the page's thread
// never waits for it.
import { CoreError } from './errors';
import type { Envelope, Reply, Request, Results } from './protocol';

/** What the core is doing: the oldest request still running. */
export interface Busy {
  op: Request['op'];
  since: number; // performance.now() when it was sent
}

/** Why the worker was replaced: the page cancelled, or the core failed (trapped, or its worker died). */
export type Restart = { kind: 'cancelled' } | { kind: 'failed'; message: string };

/** Code of a request the page cancelled: the page's, not one of the core's (errors.h). */
export const CANCELLED = -100;

/** A request rejected because it was cancelled. */
export class CancelledError extends CoreError {
  constructor(op: string) {
    super(CANCELLED, `cancelled: ${op} was stopped and the core restarted`);
  }
}

type WorkerFactory = () => Worker;
const defaultWorker: WorkerFactory = () => new Worker(new URL('./worker.ts', import.meta.url), { type: 'module' });

interface Pending {
  op: Request['op'];
  since: number;
  resolve: (r: unknown) => void;
  reject: (e: Error) => void;
}

export class CoreClient {
  private worker!: Worker;
  private next = 1;
  private pending = new Map<number, Pending>();
  private busyListeners = new Set<(b: Busy | null) => void>();
  private restartListeners = new Set<(why: Restart) => void>();
  private stale = false; // the worker died with nothing pending: the next call starts a new one
  private closed = false;

  constructor(private readonly makeWorker: WorkerFactory = defaultWorker) {
    this.start();
  }

  private start(): void {
    const w = this.makeWorker();
    this.worker = w;
    this.stale = false;
    w.onmessage = (ev: MessageEvent<Reply>) => {
      if (w !== this.worker) return; // a late answer of a worker already replaced
      const r = ev.data;
      const p = this.pending.get(r.id);
      if (!p) return;
      this.pending.delete(r.id);
      if (r.ok) {
        p.resolve(r.result);
      } else {
        p.reject(new CoreError(r.error.code, r.error.message));
        if (r.fatal) this.restart({ kind: 'failed', message: r.error.message });
      }
      this.notifyBusy();
    };
    w.onerror = (ev) => {
      if (w !== this.worker) return;
      ev.preventDefault?.();
      const message = `the core's worker failed: ${ev.message || 'it could not start or stopped'}`;
      // with requests waiting, replace it now; else on the next call (a worker that fails at start must not loop)
      if (this.pending.size) this.restart({ kind: 'failed', message });
      else this.stale = true;
    };
  }

  /** Replaces the worker: what was pending is rejected, listeners rebuild the page's state. */
  private restart(why: Restart): void {
    this.worker.terminate();
    this.start();
    const err = (op: string) => (why.kind === 'cancelled' ? new CancelledError(op) : new CoreError(-3, `${op}: ${why.message}; the core was restarted`));
    this.rejectAll(err);
    for (const l of this.restartListeners) l(why);
  }

  private rejectAll(err: (op: string) => Error): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const p of all) p.reject(err(p.op));
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

  /** Calls l after every restart (the core starts empty: handles are gone); returns the unsubscribe. */
  onRestart(l: (why: Restart) => void): () => void {
    this.restartListeners.add(l);
    return () => this.restartListeners.delete(l);
  }

  call<R extends Request>(req: R, transfer: Transferable[] = []): Promise<Results[R['op']]> {
    if (this.closed) return Promise.reject(new CancelledError(req.op));
    if (this.stale) {
      this.worker.terminate();
      this.start();
    }
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { op: req.op, since: performance.now(), resolve: resolve as (r: unknown) => void, reject });
      this.worker.postMessage({ ...req, id } as Envelope, transfer);
      this.notifyBusy();
    });
  }

  /** Stops whatever the core is doing: a new worker replaces the old one. Nothing running: nothing happens. */
  cancel(): void {
    if (this.closed || !this.pending.size) return;
    this.restart({ kind: 'cancelled' });
  }

  /** Ends the worker for good (the page is going away). */
  terminate(): void {
    this.closed = true;
    this.worker.terminate();
    this.rejectAll((op) => new CancelledError(op));
  }
}
