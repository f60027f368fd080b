// The client's cancel: a fake Worker stands in for the core's.
import { describe, expect, test } from 'vitest';
import { CancelledError, CoreClient } from './client';
import { CoreError } from './errors';

class FakeWorker {
  static made: FakeWorker[] = [];
  onmessage: ((ev: MessageEvent) => void) | null = null;
  onerror: ((ev: ErrorEvent) => void) | null = null;
  posted: { id: number; op: string }[] = [];
  terminated = false;
  constructor() { FakeWorker.made.push(this); }
  postMessage(m: { id: number; op: string }) { this.posted.push(m); }
  terminate() { this.terminated = true; }
  reply(id: number, result: unknown) { this.onmessage?.({ data: { id, ok: true, result } } as MessageEvent); }
  fail(id: number, code: number, message: string) { this.onmessage?.({ data: { id, ok: false, error: { code, message } } } as MessageEvent); }
}

function client() {
  FakeWorker.made = [];
  return new CoreClient(() => new FakeWorker() as unknown as Worker);
}

describe('CoreClient', () => {
  test('answers come back to the request that asked', async () => {
    const c = client();
    const w = FakeWorker.made[0];
    const a = c.call({ op: 'ready' });
    const b = c.call({ op: 'check', handle: 1 as never });
    w.fail(w.posted[1].id, -4, 'corrupt leaf: root=5 block=1 slot=0, invalid dir item name_len 300, expect 1..255');
    w.reply(w.posted[0].id, {});
    await expect(a).resolves.toEqual({});
    await expect(b).rejects.toThrow(/invalid dir item name_len 300/);
    await b.catch((e) => expect(e).toBeInstanceOf(CoreError));
  });

  test('busy names the oldest request until it is answered', () => {
    const c = client();
    const w = FakeWorker.made[0];
    const seen: (string | null)[] = [];
    c.onBusy((b) => seen.push(b?.op ?? null));
    void c.call({ op: 'open', bytes: new ArrayBuffer(0), name: 'x.img' });
    void c.call({ op: 'dump', handle: 1 as never });
    expect(c.busy()?.op).toBe('open');
    w.reply(w.posted[0].id, {});
    expect(c.busy()?.op).toBe('dump');
    w.reply(w.posted[1].id, {});
    expect(c.busy()).toBeNull();
    expect(seen).toEqual(['open', 'open', 'dump', null]);
  });

  test('cancel terminates the worker, starts a new one, rejects what was pending and says so', async () => {
    const c = client();
    const old = FakeWorker.made[0];
    let restarts = 0;
    c.onRestart(() => restarts++);
    const slow = c.call({ op: 'open', bytes: new ArrayBuffer(0), name: 'hostile.img' });
    c.cancel();
    await expect(slow).rejects.toBeInstanceOf(CancelledError);
    expect(old.terminated).toBe(true);
    expect(FakeWorker.made).toHaveLength(2);
    expect(restarts).toBe(1);
    expect(c.busy()).toBeNull();
    // the old worker's late answer is ignored; the new one serves
    old.reply(old.posted[0].id, { handle: 1 });
    const next = c.call({ op: 'ready' });
    const w = FakeWorker.made[1];
    w.reply(w.posted[0].id, { ok: 1 });
    await expect(next).resolves.toEqual({ ok: 1 });
  });
});
