// The page's side of the Worker: each request is a promise of its typed result.
import { CoreError } from './errors';
import type { Envelope, Reply, Request, Results } from './protocol';

export class CoreClient {
  private worker: Worker;
  private next = 1;
  private pending = new Map<number, { resolve: (r: unknown) => void; reject: (e: Error) => void }>();

  constructor() {
    this.worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module' });
    this.worker.onmessage = (ev: MessageEvent<Reply>) => {
      const p = this.pending.get(ev.data.id);
      if (!p) return;
      this.pending.delete(ev.data.id);
      if (ev.data.ok) p.resolve(ev.data.result);
      else p.reject(new CoreError(ev.data.error.code, ev.data.error.message));
    };
    this.worker.onerror = (ev) => {
      const err = new CoreError(-3, `the core's worker failed: ${ev.message}`);
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
  }

  call<R extends Request>(req: R, transfer: Transferable[] = []): Promise<Results[R['op']]> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (r: unknown) => void, reject });
      this.worker.postMessage({ ...req, id } as Envelope, transfer);
    });
  }

  terminate(): void {
    this.worker.terminate();
  }
}
