// The reference pages and the tables they document agree: docs/scenario.md and
// docs/cli.md are what scripts/gen-docs.mjs makes from the CLI's own output;
// every command and setting the scenario parser compares against is in the
// table (wasm-core/src/scenario-table.c), and every one in the table runs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const CLI = process.env.BTRFSLAB_CLI || `${root}wasm-core/build/btrfslab`;
const cli = (args, input) => {
  const r = spawnSync(CLI, args, { encoding: 'utf8', input });
  return { code: r.status, out: r.stdout, err: r.stderr };
};
const table = JSON.parse(cli(['help', 'scenario', '--json']).out);
const parser = readFileSync(`${root}wasm-core/src/scenario.c`, 'utf8');
const names = (re) => [...parser.matchAll(re)].map((m) => m[1]);

test('docs/scenario.md and docs/cli.md are what gen-docs makes from the tables', () => {
  const r = spawnSync(process.execPath, [`${root}scripts/gen-docs.mjs`, '--check'], { encoding: 'utf8', env: { ...process.env, BTRFSLAB_CLI: CLI } });
  assert.equal(r.status, 0, r.stderr);
});

test('every command and setting the parser compares against is in the table', () => {
  const commands = new Set(table.commands.map((c) => c.name));
  const settings = new Set(table.settings.map((s) => s.name));
  const cmds = names(/strcmp\(c, "([a-z-]+)"\)/g);
  assert.ok(cmds.length > 25, `found ${cmds.length} command comparisons in scenario.c`);
  for (const c of cmds) assert.ok(commands.has(c), `scenario.c takes command '${c}': add it to scenario-table.c`);
  const keys = [...names(/KEY\("([a-z_]+)"\)/g), ...names(/strn?cmp\(l->argv\[1\], "([a-z_]+)=/g)];
  const fields = names(/FIELD\("([a-z_]+)"\)/g).map((f) => `device.${f}`);
  assert.ok(keys.length > 15 && fields.length > 10, `found ${keys.length} settings and ${fields.length} device fields in scenario.c`);
  if (/strncmp\(w, "cost\.", 5\)/.test(parser)) keys.push('cost.KEY');
  for (const k of [...keys, ...fields]) assert.ok(settings.has(k), `scenario.c takes setting '${k}': add it to scenario-table.c`);
  // and the parser's messages name them from the table
  assert.match(cli(['run', '-'], 'frob\n').err, new RegExp(`unknown command \\(commands: ${table.commands.map((c) => c.name).join(' ')}\\)`));
  const unknown = cli(['run', '-'], 'set frob=1\n').err;
  for (const s of settings) assert.ok(unknown.includes(s.includes('.') ? `${s.split('.')[0]}.NAME` : s), `the unknown-setting message names ${s}`);
});

// One use of each command, after the lines it needs; a table entry with no example fails here.
const EXAMPLES = {
  mkfs: ['mkfs nodesize=16K sectorsize=4096 size=128M label=docs meta_chunk=1M'],
  mkdir: ['mkdir /d'],
  create: ['create /f_{1..3}', 'create /g'],
  symlink: ['symlink /x /l'],
  write: ['create /f', 'write /f 0 8K 3'],
  truncate: ['create /f', 'truncate /f 100'],
  link: ['create /f', 'link /f /g'],
  rename: ['create /f', 'rename /f /g'],
  unlink: ['create /f_{1..3}', 'unlink /f_{1..2}', 'unlink /f_3'],
  rmdir: ['mkdir /d', 'rmdir /d'],
  setxattr: ['create /f', 'setxattr /f user.a b'],
  clone: ['create /f', 'write /f 0 8K', 'clone /f /g'],
  snapshot: ['snapshot / /s ro'],
  subvol: ['subvol create /v', 'subvol set-default /v', 'subvol set-default /', 'subvol delete /v nosync', 'subvol sync'],
  quota: ['quota enable', 'quota rescan'],
  qgroup: ['quota enable', 'qgroup create 1/100', 'qgroup assign 0/5 1/100', 'qgroup limit 10M 0/5'],
  balance: ['create /f', 'write /f 0 8K', 'balance -d -m usage=100'],
  relocate: null, // needs a block group's start: parsed below
  fsync: ['create /f', 'fsync /f'],
  commit: ['create /f', 'commit'],
  sync: ['create /f', 'sync'],
  crash: ['create /f', 'crash'],
  set: ['set seed=3'],
  sleep: ['sleep 1ms'],
  schedule: ['schedule A B', 'A: create /a', 'B: create /b'],
  thread: ['thread A', 'create /a', 'end', 'thread B', 'mkdir /b', 'end'],
  end: ['thread A', 'create /a', 'end'],
  fio: ['fio jobs=2 size=64K bs=16K fsync=1 rw=write'],
  bonnie: ['bonnie files=10 dirs=1 size=4K'],
  untar: ['untar random files=20'],
};

test('every command in the table runs, in a thread too where the table says so', () => {
  for (const c of table.commands) {
    assert.ok(c.name in EXAMPLES, `no example of '${c.name}' in tests/cli/docs.test.mjs`);
    let lines = EXAMPLES[c.name];
    if (!lines) continue;
    const r = cli(['run', '-'], `${lines.join('\n')}\n`);
    assert.equal(r.code, 0, `${c.name}: ${lines.join(' / ')}: ${r.err}`);
    if (c.where === 'first') continue;
    const last = lines[lines.length - 1];
    const t = cli(['run', '-'], `${[...lines.slice(0, -1), `T: ${last}`].join('\n')}\n`);
    if (c.where === 'both') assert.equal(t.code, 0, `${c.name} in a thread: ${t.err}`);
  }
  const r = cli(['run', '-'], 'relocate 0\n');
  assert.doesNotMatch(r.err, /EPARSE/, `relocate parses: ${r.err}`);
});

/** An example value of a setting's argument form. */
function value(s) {
  if (s.name === 'cost.KEY') return null;
  const first = s.args.split('|')[0];
  return { N: '4', SIZE: '64M', DURATION: '1ms', BYTES: '100000000', PCT: '10', 'PCT%': '50%' }[first] ?? first;
}

test('every setting in the table is taken with a value of the form it documents', () => {
  const costs = JSON.parse(cli(['costs', '--json']).out);
  const key = (costs.costs ?? costs.rows ?? costs)[0]?.key;
  assert.ok(key, 'btrfslab costs --json names a cost key');
  for (const s of table.settings) {
    const line = s.name === 'cost.KEY' ? `set cost.${key}=1us` : `set ${s.name}=${value(s)}`;
    const r = cli(['run', '-'], `${line}\ncreate /f\n`);
    assert.equal(r.code, 0, `${line}: ${r.err}`);
  }
});

test('every CLI command is in btrfslab --help', () => {
  const src = readFileSync(`${root}wasm-core/cli/btrfslab.c`, 'utf8');
  const run = src.slice(src.indexOf('static int run_command('));
  const cmds = [...run.matchAll(/\{"([a-z-]+)", cmd_/g), ...run.matchAll(/strcmp\(c, "([a-z-]+)"\)/g)].map((m) => m[1]);
  assert.ok(cmds.length > 15, `found ${cmds.length} commands in run_command`);
  // the words of the command lines (two spaces in; descriptions are indented more)
  const words = new Set(cli(['--help']).out.split('\n').filter((l) => /^  \S/.test(l)).flatMap((l) => l.trim().split(/[\s|,]+/)));
  for (const c of cmds) assert.ok(words.has(c), `btrfslab --help names ${c}`);
});
