// `btrfslab serve`, the companion: 127.0.0.1 only; the token, the Origin and
// the Host checked on every request; CORS preflights; bodies over the limit
// refused from their Content-Length; one job at a time (a second POST while
// one is being received gets 429); SIGTERM stops it. Deadlines: idle
// sockets neither lock out a hello nor stay open past --header-timeout; a
// stalled body frees the job slot at --body-timeout; a hello is answered
// while a large sparse body is expanded. No kernel needed: the jobs run on
// bodies that are not images, or are held mid-body.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));
const APP = 'http://127.0.0.1:4174';
let server, port, token;

/** A companion with these options: { proc, port, token } once it listens. */
async function startServe(options) {
  const proc = spawn(CLI, ['serve', '--port', '0', '--app', `${APP}/`, ...options], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/open: (\S+)#companion=http:\/\/127\.0\.0\.1:(\d+)&token=([0-9a-f]{64})\n/);
      if (m) {
        assert.equal(m[1], `${APP}/`);
        resolve({ proc, port: Number(m[2]), token: m[3] });
      }
    });
    proc.on('exit', (c) => reject(new Error(`serve exited ${c}: ${out}`)));
  });
}

before(async () => {
  ({ proc: server, port, token } = await startServe(['--max-body', '1M', '--timeout', '30']));
});
after(() => server?.kill('SIGKILL'));

/** A raw request: its head lines and body; resolves to { status, headers, body }. */
function raw(lines, body = '', { keepOpen = false, to = port, host = `127.0.0.1:${to}` } = {}) {
  return new Promise((resolve, reject) => {
    const sock = connect(to, '127.0.0.1');
    let data = '';
    sock.on('data', (d) => { data += d; });
    sock.on('error', reject);
    sock.on('close', () => {
      const [head, ...rest] = data.split('\r\n\r\n');
      const [status, ...hs] = head.split('\r\n');
      const headers = Object.fromEntries(hs.map((h) => [h.split(':')[0].toLowerCase(), h.slice(h.indexOf(':') + 1).trim()]));
      resolve({ status: Number(status.split(' ')[1]), headers, body: rest.join('\r\n\r\n'), sock });
    });
    sock.write([...lines.map((l) => l.replace('HOST', host)), '', ''].join('\r\n'));
    if (body) sock.write(body);
    if (keepOpen) resolve({ sock });
  });
}
const hello = (extra = [], opts) => raw(['GET /v1/hello HTTP/1.1', 'Host: HOST', ...extra], '', opts);
const auth = (t = token) => `Authorization: Bearer ${t}`;
/** Resolves when cond() holds, polled every 10 ms; rejects after ms (a guard against a hang, not a timing). */
async function until(cond, what, ms = 30000) {
  for (const t0 = Date.now(); !(await cond());) {
    if (Date.now() - t0 > ms) throw new Error(`gave up waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('btrfslab serve', () => {
  test('the app\'s origin with the token: hello answers, with CORS headers for that origin', async () => {
    const r = await hello([`Origin: ${APP}`, auth()]);
    assert.equal(r.status, 200);
    assert.equal(r.headers['access-control-allow-origin'], APP);
    assert.equal(r.headers.vary, 'Origin');
    const j = JSON.parse(r.body);
    assert.match(j.version, /btrfslab serve/);
    assert.equal(typeof j.root, 'boolean');
  });

  test('a wrong token, no token: 401', async () => {
    assert.equal((await hello([`Origin: ${APP}`, `Authorization: Bearer ${'0'.repeat(64)}`])).status, 401);
    assert.equal((await hello([`Origin: ${APP}`, `Authorization: Bearer ${token.slice(0, 63)}`])).status, 401);
    assert.equal((await hello([`Origin: ${APP}`])).status, 401);
  });

  test('a wrong Origin, no Origin, a wrong Host: 403, with no CORS header for the stranger', async () => {
    const evil = await hello(['Origin: http://evil.example', auth()]);
    assert.equal(evil.status, 403);
    assert.equal(evil.headers['access-control-allow-origin'], undefined);
    assert.equal((await hello([auth()])).status, 403);
    assert.equal((await hello([`Origin: ${APP}`, auth()], { host: `rebind.example:${port}` })).status, 403);
  });

  test('CORS preflight: 204 for the app, 403 for another origin', async () => {
    const pre = (origin) => raw(['OPTIONS /v1/kernel HTTP/1.1', 'Host: HOST', `Origin: ${origin}`, 'Access-Control-Request-Method: POST', 'Access-Control-Request-Headers: authorization, content-type']);
    const ok = await pre(APP);
    assert.equal(ok.status, 204);
    assert.equal(ok.headers['access-control-allow-origin'], APP);
    assert.match(ok.headers['access-control-allow-headers'], /Authorization/);
    assert.match(ok.headers['access-control-allow-methods'], /POST/);
    assert.equal((await pre('http://evil.example')).status, 403);
  });

  test('a body over --max-body: 413 from its Content-Length, unread; none: 411; unknown paths and methods', async () => {
    const big = await raw(['POST /v1/kernel HTTP/1.1', 'Host: HOST', `Origin: ${APP}`, auth(), `Content-Length: ${(1 << 20) + 1}`]);
    assert.equal(big.status, 413);
    assert.equal((await raw(['POST /v1/kernel HTTP/1.1', 'Host: HOST', `Origin: ${APP}`, auth()])).status, 411);
    assert.equal((await raw(['GET /etc/passwd HTTP/1.1', 'Host: HOST', `Origin: ${APP}`, auth()])).status, 404);
    assert.equal((await raw(['GET /v1/kernel HTTP/1.1', 'Host: HOST', `Origin: ${APP}`, auth()])).status, 405);
    assert.equal((await raw(['GET /v1/hello HTTP/1.1', 'Host: HOST', `Origin: ${APP}`, auth(), `X-Pad: ${'a'.repeat(17000)}`])).status, 431);
  });

  test('a malformed sparse body: 400 naming the record and what is wrong, no job run, nothing left', async () => {
    const le = (n) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(n)); return b; };
    const rec = (off, len, data = Buffer.alloc(len, 7)) => Buffer.concat([le(off), le(len), data]);
    const head = (size) => Buffer.concat([Buffer.from('BLSPARS1'), le(size)]);
    const post = (body) => raw(['POST /v1/kernel HTTP/1.1', 'Host: HOST', `Origin: ${APP}`, auth(), 'Content-Type: application/x-btrfslab-sparse', `Content-Length: ${body.length}`], body);
    const cases = [
      [Buffer.from('NOTSPARSE.......'), /not a sparse image: the body does not begin with BLSPARS1/],
      [head(0), /size 0 is zero/],
      [head(2 ** 40), /size 1099511627776 is over the companion's limit/],
      [Buffer.concat([head(1 << 20), rec(4096, 100), rec(0, 10)]), /sparse record 2 \(body byte 132\): offset 0 length 10 overlaps or comes before/],
      [Buffer.concat([head(1 << 20), rec(4096, 100), rec(4150, 10)]), /sparse record 2 .*overlaps/],
      [Buffer.concat([head(1 << 20), rec((1 << 20) - 10, 11)]), /sparse record 1 \(body byte 16\): offset 1048566 length 11 runs past the image's size/],
      [Buffer.concat([head(1 << 20), le(0), le(2n ** 64n - 1n)]), /runs past the image's size/],
      [Buffer.concat([head(1 << 20), rec(0, 0)]), /sparse record 1 .*is empty/],
      [Buffer.concat([head(1 << 20), rec(0, 10), le(4096)]), /sparse record 2 \(body byte 42\): its offset and length are cut short/],
      [Buffer.concat([head(1 << 20), le(0), le(500), Buffer.alloc(20)]), /sparse record 1 \(body byte 16\): its 500 bytes are cut short by the body's end/],
    ];
    for (const [body, why] of cases) {
      const r = await post(body);
      assert.equal(r.status, 400, `${why}: ${r.body}`);
      assert.match(JSON.parse(r.body).error, why);
    }
    // nothing held: the companion is not busy, and takes the next job
    assert.equal(JSON.parse((await hello([`Origin: ${APP}`, auth()])).body).busy, false);
    const ok = await post(Buffer.concat([head(1 << 20), rec(65536, 4096)]));
    assert.match(String(ok.status), /^(200|500)$/); // the kernel job ran (not an image: it says so, or, without root, fails)
  });

  test('one job at a time: a POST while another is mid-body gets 429 with Retry-After; the first is still answered', async () => {
    // the first job: its head and part of its body, the socket kept open
    const first = connect(port, '127.0.0.1');
    let firstData = '';
    first.on('data', (d) => { firstData += d; });
    const firstDone = new Promise((resolve) => first.on('close', resolve));
    first.write(['POST /v1/kernel HTTP/1.1', `Host: 127.0.0.1:${port}`, `Origin: ${APP}`, auth(), 'Content-Length: 1000', '', ''].join('\r\n'));
    first.write('x'.repeat(100));
    // wait until the server holds it as the job (hello says busy), not a fixed time
    for (let i = 0; i < 200; i++) {
      if (JSON.parse((await hello([`Origin: ${APP}`, auth()])).body).busy) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const second = await raw(['POST /v1/kernel HTTP/1.1', 'Host: HOST', `Origin: ${APP}`, auth(), 'Content-Length: 10'], 'y'.repeat(10));
    assert.equal(second.status, 429);
    assert.ok(Number(second.headers['retry-after']) > 0);
    // the first, completed, is answered (not an image: the kernel job says so, or, without root, fails)
    first.write('x'.repeat(900));
    await firstDone;
    assert.match(firstData, /^HTTP\/1\.1 (200|500) /);
  });

  test('it listens on 127.0.0.1 only, and stops on SIGTERM', async () => {
    const other = await new Promise((resolve) => {
      const s = connect(port, '0.0.0.0');
      s.on('connect', () => { s.destroy(); resolve('connected'); });
      s.on('error', (e) => resolve(e.code));
    });
    // 0.0.0.0 as a destination means this host: a socket bound to 127.0.0.1 answers it only through loopback
    assert.ok(['connected', 'ECONNREFUSED'].includes(other));
    const addrs = (await import('node:os')).networkInterfaces();
    const external = Object.values(addrs).flat().find((a) => a.family === 'IPv4' && !a.internal);
    if (external) {
      const r = await new Promise((resolve) => {
        const s = connect(port, external.address);
        s.on('connect', () => { s.destroy(); resolve('connected'); });
        s.on('error', (e) => resolve(e.code));
      });
      assert.equal(r, 'ECONNREFUSED', `reachable on ${external.address}`);
    }
    const exited = new Promise((resolve) => server.on('exit', (code, sig) => resolve({ code, sig })));
    server.kill('SIGTERM');
    assert.deepEqual(await exited, { code: 0, sig: null });
  });
});

describe('btrfslab serve: deadlines, and bodies expanded outside the event loop', () => {
  let srv;
  before(async () => { srv = await startServe(['--max-body', '256M', '--timeout', '60', '--header-timeout', '1', '--body-timeout', '3']); });
  after(() => srv?.proc.kill('SIGKILL'));
  const hi = () => hello([`Origin: ${APP}`, auth(srv.token)], { to: srv.port });
  /** A socket that connects and sends what it is given: its data, and a promise of its close. */
  function socket(send = '') {
    const sock = connect(srv.port, '127.0.0.1');
    const s = { sock, data: '', closed: false };
    sock.on('data', (d) => { s.data += d; });
    sock.on('error', () => {});
    s.done = new Promise((resolve) => sock.on('close', () => { s.closed = true; resolve(); }));
    s.connected = new Promise((resolve) => sock.on('connect', resolve));
    if (send) sock.write(send);
    return s;
  }

  test('20 idle sockets: a hello is still answered, and each idle one is closed by the header deadline', async () => {
    const idle = Array.from({ length: 20 }, () => socket());
    await Promise.all(idle.map((s) => s.connected));
    // the server has taken them all in once the four past its 16 slots are answered (room made for them)
    await until(() => idle.filter((s) => s.closed).length >= 4, 'the first idle sockets to be closed');
    const r = await hi();
    assert.equal(r.status, 200, `hello with 20 idle sockets: ${r.status} ${r.body}`);
    await until(() => idle.every((s) => s.closed), 'every idle socket closed at the header deadline');
    for (const s of idle) assert.match(s.data, /^(|HTTP\/1\.1 408 [^]*"error":"(closed to make room|the request head did not arrive within --header-timeout))/);
    assert.ok(idle.some((s) => /--header-timeout/.test(s.data)), 'none reached its header deadline');
  });

  test('a POST that stalls after one byte of body: 408 at the body deadline, and the job slot is free again', async () => {
    const t0 = Date.now();
    const stalled = socket(['POST /v1/kernel HTTP/1.1', `Host: 127.0.0.1:${srv.port}`, `Origin: ${APP}`, auth(srv.token), 'Content-Length: 1000', '', 'x'].join('\r\n'));
    await until(async () => JSON.parse((await hi()).body).job === 'receiving', 'the stalled POST to be the job');
    const second = await raw(['POST /v1/kernel HTTP/1.1', 'Host: HOST', `Origin: ${APP}`, auth(srv.token), 'Content-Length: 10'], 'y'.repeat(10), { to: srv.port });
    assert.equal(second.status, 429, 'while the stalled body holds the slot');
    await stalled.done;
    assert.ok(Date.now() - t0 >= 2900, 'answered before its body deadline');
    assert.match(stalled.data, /^HTTP\/1\.1 408 [^]*the body did not arrive within --body-timeout: the job is dropped/);
    const after = JSON.parse((await hi()).body);
    assert.equal(after.busy, false);
    const next = await raw(['POST /v1/kernel HTTP/1.1', 'Host: HOST', `Origin: ${APP}`, auth(srv.token), 'Content-Type: application/x-btrfslab-sparse', 'Content-Length: 16'], Buffer.concat([Buffer.from('BLSPARS1'), Buffer.alloc(8)]), { to: srv.port });
    assert.equal(next.status, 400, 'the next job is taken (and its empty image refused)');
  });

  test('a hello while a 6.8 MB sparse body of 400,000 records is expanded: answered meanwhile, the job after', async () => {
    const n = 400_000; // records of one byte each, two bytes apart (6.8 MB)
    const body = Buffer.alloc(16 + n * 17);
    body.write('BLSPARS1');
    body.writeBigUInt64LE(BigInt(n * 2), 8);
    for (let i = 0, at = 16; i < n; i++, at += 17) {
      body.writeUInt32LE(i * 2, at); // offset (its high half stays 0)
      body[at + 8] = 1; // length 1
      body[at + 16] = i & 0xff;
    }
    const post = socket(['POST /v1/kernel HTTP/1.1', `Host: 127.0.0.1:${srv.port}`, `Origin: ${APP}`, auth(srv.token), 'Content-Type: application/x-btrfslab-sparse', `Content-Length: ${body.length}`, '', ''].join('\r\n'));
    post.sock.write(body);
    const states = [];
    await until(async () => {
      const r = await hi();
      states.push(`${JSON.parse(r.body).job}${post.closed ? ' (job answered)' : ''}`);
      return post.closed || states.length > 5000;
    }, 'the job to be answered', 120000);
    const during = states.indexOf('expanding');
    assert.ok(during >= 0, `no hello was answered during the expansion: ${[...new Set(states)].join(', ')}`);
    assert.match(post.data, /^HTTP\/1\.1 (200|500) /, 'the job ran on the expanded image');
  });
});
