// Bounded runs: scripts that cost days of CPU, gigabytes, or a quadratic
// crash walk end within seconds with a result or a refusal naming the line
// and the bound (--max-events / set max_events=, --max-time, --max-memory,
// --max-ops; crashes samples past CRASH_SAMPLE_DEFAULT points unless --all);
// mkfs --rootdir copies holes as holes, sizes the image from the allocated
// data, and leaves no temporary file when it is killed. Every child runs
// under a timeout: a regression fails here rather than hangs.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'btrfslab-bounds-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const GUARD = 120000; // ms: a busy machine's seconds, not hours

function cli(args, name, text) {
  if (text !== undefined) writeFileSync(join(dir, name), text);
  const r = spawnSync(CLI, args, { encoding: 'utf8', timeout: GUARD, cwd: dir, maxBuffer: 1 << 26 });
  assert.notEqual(r.signal, 'SIGTERM', `${args.join(' ')}: still running after ${GUARD / 1000} s`);
  return r;
}

describe('a run\'s bounds', () => {
  test('set commit=1ns with sleep 60m stops at the event bound, naming the line', () => {
    const r = cli(['run', 'commit.txt'], 'commit.txt', 'mkfs\nset commit=1ns\nsleep 60m\n');
    assert.equal(r.status, 1);
    assert.match(r.stderr, /commit\.txt:3: sleep: EINVAL: the run reached its bound of 50000000 simulated events at \d+ ns of virtual time \(--max-events, or a lower `set max_events=`\)/);
    const low = cli(['run', 'commit.txt', '--max-events', '1000']);
    assert.match(low.stderr, /commit\.txt:3: sleep: .*bound of 1000 simulated events/);
    const set = cli(['run', 'set.txt'], 'set.txt', 'mkfs\nset commit=1ns\nset max_events=5000\nsleep 60m\n');
    assert.match(set.stderr, /set\.txt:4: sleep: .*bound of 5000 simulated events/);
    const raise = cli(['run', 'raise.txt', '--max-events', '10000'], 'raise.txt', 'mkfs\nset max_events=20000\n');
    assert.match(raise.stderr, /raise\.txt:2: set: EPARSE: max_events is 1 to 10000, the run's bound \(--max-events\)/);
    // an ordinary timed run is far from the bound
    const ok = cli(['run', 'ok.txt'], 'ok.txt', 'mkfs\nset device=ssd\nsleep 2m\nbonnie files=60 dirs=3 size=8K fsyncers=1\n');
    assert.equal(ok.status, 0, ok.stderr);
  });

  test('bonnie files=1000000 is refused at once; a long one stops at --max-time', () => {
    const r = cli(['run', 'bonnie.txt'], 'bonnie.txt', 'mkfs\nbonnie files=1000000 dirs=1000\n');
    assert.equal(r.status, 1);
    assert.match(r.stderr, /bonnie\.txt:2: bonnie: EINVAL: bonnie: 1000000 files make 4000000 operations \(a create and an unlink each, in two phases\), more than the 2000000 a run may do \(--max-ops\)/);
    const t = cli(['run', 'long.txt', '--max-time', '1'], 'long.txt', 'mkfs\nbonnie files=400000 dirs=1000\n');
    assert.equal(t.status, 1);
    assert.match(t.stderr, /long\.txt:2: \w+: EINVAL: the run reached its bound of 1 seconds of CPU time( at \d+ ns of virtual time)? \(--max-time\)/);
    assert.match(cli(['run', 'long.txt', '--max-time', 'x']).stderr, /--max-time: 'x' is not a number of seconds/);
  });

  test('--max-memory: allocations past it fail, the error names the line and the bound', () => {
    const r = cli(['run', 'mem.txt', '--max-memory', '200M'], 'mem.txt', 'mkfs size=1G\ncreate /a\nwrite /a 0 400M 1\n');
    assert.equal(r.status, 1);
    assert.match(r.stderr, /mem\.txt:3: write: ENOMEM: .*\(the run's memory bound is 209715200 bytes: --max-memory\)/);
  });

  test('crashes: a directory of 8,000 files is sampled, saying how many of how many; --all tries every one', () => {
    const text = 'mkfs\nmkdir /d\ncreate /d/f{1..8000}\nfsync /d\ncommit\n';
    const r = cli(['crashes', 'many.txt'], 'many.txt', text);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /many\.txt: (\d+) crash points after mkfs .*, 128 tried \(a seeded sample: a walk tries 128 crash points at most unless --all\)/);
    assert.ok(Number(r.stdout.match(/: (\d+) crash points/)[1]) > 128);
    const small = cli(['crashes', 'few.txt', '--json'], 'few.txt', 'mkfs\ncreate /a\nwrite /a 0 8K\nfsync /a\n');
    const rep = JSON.parse(small.stdout);
    assert.equal(rep.tried, rep.points);
    assert.match(cli(['crashes', 'few.txt', '--all', '--sample', '3']).stderr, /--all and --sample: give one/);
  });
});

describe('mkfs --rootdir: holes stay holes', () => {
  test('1 TiB and 2 GiB sparse files: a small image, sized from the data, the holes read back as zeros', () => {
    const src = join(dir, 'sparse');
    mkdirSync(src);
    const fd = openSync(join(src, 'huge'), 'w');
    writeSync(fd, Buffer.from('in the middle'), 0, 13, 512 * 1024 * 1024 * 1024);
    closeSync(fd);
    truncateSync(join(src, 'huge'), 1024 * 1024 * 1024 * 1024);
    writeFileSync(join(src, 'two'), '');
    truncateSync(join(src, 'two'), 2 * 1024 * 1024 * 1024);
    writeFileSync(join(src, 'small'), 'data\n');
    const img = join(dir, 'sparse.img');
    const r = cli(['mkfs', '--rootdir', src, img]);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(statSync(img).size < 256 * 1024 * 1024, `image of ${statSync(img).size} bytes`);
    const ls = cli(['ls', '-l', img, '/']);
    assert.match(ls.stdout, /1099511627776 .*huge/);
    assert.match(ls.stdout, /2147483648 .*two/);
    assert.match(cli(['check', img]).stdout, /0 errors found/);
    const dump = cli(['dump-tree', img]).stdout;
    assert.equal((dump.match(/EXTENT_DATA/g) || []).length, 2, 'one extent for huge\'s data, one inline for small; none for holes');
  });

  test('SIGTERM while copying leaves no temporary file', async () => {
    const src = join(dir, 'full'), out = join(dir, 'term-out');
    mkdirSync(src);
    mkdirSync(out);
    const fd = openSync(join(src, 'big'), 'w');
    const chunk = Buffer.alloc(1 << 20, 7);
    for (let i = 0; i < 256; i++) writeSync(fd, chunk);
    closeSync(fd);
    const child = spawn(CLI, ['mkfs', '--rootdir', src, join(out, 'img')], { stdio: 'ignore' });
    const exited = new Promise((res) => child.on('exit', (code, signal) => res({ code, signal })));
    // wait for its temporary file, then end it
    const t0 = Date.now();
    let seen = false;
    while (!seen && Date.now() - t0 < GUARD) {
      seen = readdirSync(out).some((f) => f.startsWith('.img.'));
      if (!seen) await new Promise((res) => setTimeout(res, 5));
    }
    child.kill('SIGTERM');
    const e = await exited;
    assert.ok(seen, 'the temporary image appeared while 256 MiB were copied');
    assert.equal(e.signal, 'SIGTERM');
    assert.deepEqual(readdirSync(out), [], 'nothing left behind');
  });
});
