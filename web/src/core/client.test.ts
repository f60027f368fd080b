// The client's cancel: a fake Worker stands in for the core's.
import { describe, expect, test } from 'vitest';
import { CANCELLED, CancelledError, CoreClient, type Restart } from './client';
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
  fail(id: number, code: number, message: string, fatal = false) { this.onmessage?.({ data: { id, ok: false, error: { code, message }, fatal } } as MessageEvent); }
  die(message: string) { this.onerror?.({ message, preventDefault() {} } as ErrorEvent); }
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
    void c.call({ op: 'open', file: new Blob([]), name: 'x.img' });
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
    const slow = c.call({ op: 'open', file: new Blob([]), name: 'hostile.img' });
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

  test('a cancelled request is a CoreError of its own code, naming what was stopped', async () => {
    const c = client();
    const slow = c.call({ op: 'traceRun', script: 'create /d/f_{1..300000}\n', opts: { seed: 1n, now: 1n, trace: true } });
    c.cancel();
    const e = await slow.catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CoreError);
    expect(e).toMatchObject({ code: CANCELLED, message: 'cancelled: traceRun was stopped and the core restarted' });
  });

  test('every pending request is rejected by one cancel, each once; the new worker starts with nothing', async () => {
    const c = client();
    const all = [c.call({ op: 'open', file: new Blob([]), name: 'a' }), c.call({ op: 'dump', handle: 1 as never }), c.call({ op: 'trace', handle: 1 as never })];
    c.cancel();
    const got = await Promise.allSettled(all);
    expect(got.map((g) => g.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(FakeWorker.made[1].posted).toEqual([]);
  });

  test('cancel with nothing running does nothing', () => {
    const c = client();
    let restarts = 0;
    c.onRestart(() => restarts++);
    c.cancel();
    expect(FakeWorker.made).toHaveLength(1);
    expect(FakeWorker.made[0].terminated).toBe(false);
    expect(restarts).toBe(0);
  });

  test('a trap in the core rejects with its message and replaces the worker; the rest fail as restarted', async () => {
    const c = client();
    const old = FakeWorker.made[0];
    const why: Restart[] = [];
    c.onRestart((w) => why.push(w));
    const a = c.call({ op: 'dump', handle: 1 as never });
    const b = c.call({ op: 'trace', handle: 1 as never });
    old.fail(old.posted[0].id, -3, 'core failed: memory access out of bounds', true);
    await expect(a).rejects.toThrow('core failed: memory access out of bounds');
    await expect(b).rejects.toThrow('trace: core failed: memory access out of bounds; the core was restarted');
    expect(old.terminated).toBe(true);
    expect(FakeWorker.made).toHaveLength(2);
    expect(why).toEqual([{ kind: 'failed', message: 'core failed: memory access out of bounds' }]);
  });

  test('a core error that is not a trap keeps the worker', async () => {
    const c = client();
    const w = FakeWorker.made[0];
    const a = c.call({ op: 'open', file: new Blob([]), name: 'x' });
    w.fail(w.posted[0].id, -4, 'corrupt leaf');
    await expect(a).rejects.toThrow('corrupt leaf');
    expect(w.terminated).toBe(false);
    expect(FakeWorker.made).toHaveLength(1);
  });

  test('a worker that dies is replaced: at once with requests waiting, else at the next call', async () => {
    const c = client();
    const why: Restart[] = [];
    c.onRestart((w) => why.push(w));
    const a = c.call({ op: 'ready' });
    FakeWorker.made[0].die('out of memory');
    await expect(a).rejects.toThrow("ready: the core's worker failed: out of memory; the core was restarted");
    expect(FakeWorker.made).toHaveLength(2);
    expect(why).toHaveLength(1);
    // dying idle (as at start) does not loop: the next call makes the new worker
    FakeWorker.made[1].die('');
    expect(FakeWorker.made).toHaveLength(2);
    const b = c.call({ op: 'ready' });
    expect(FakeWorker.made).toHaveLength(3);
    const w = FakeWorker.made[2];
    w.reply(w.posted[0].id, { pageSize: 4096 });
    await expect(b).resolves.toEqual({ pageSize: 4096 });
  });

  test('after terminate, calls are refused at once', async () => {
    const c = client();
    const a = c.call({ op: 'ready' });
    c.terminate();
    await expect(a).rejects.toBeInstanceOf(CancelledError);
    await expect(c.call({ op: 'ready' })).rejects.toBeInstanceOf(CancelledError);
    expect(FakeWorker.made[0].posted).toHaveLength(1);
  });
});
