#!/usr/bin/env node
// The reference pages' generated parts, from the tables they document:
//   docs/scenario.md  from `btrfslab help scenario --json` (wasm-core/src/scenario-table.c,
//                     the table the parser's own messages list from)
//   docs/cli.md       from `btrfslab --help`
// Each generated part sits between <!-- generated:NAME --> and <!-- /generated:NAME -->;
// the prose around it is kept. `node scripts/gen-docs.mjs` rewrites them;
// `--check` changes nothing and exits 1 naming each page that disagrees
// (tests/cli/docs.test.mjs runs it).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const CLI = process.env.BTRFSLAB_CLI ?? `${root}wasm-core/build/btrfslab`;
const cli = (...args) => execFileSync(CLI, args, { encoding: 'utf8' });

const cell = (s) => s.replace(/\|/g, '\\|');
const WHERE = { first: 'first line only', script: 'script', both: 'script or thread' };

/** The generated parts, by page and marker name. */
export function generated() {
  const t = JSON.parse(cli('help', 'scenario', '--json'));
  const commands = ['| command | arguments | where | what it does |', '|---|---|---|---|',
    ...t.commands.map((c) => `| \`${c.name}\` | ${c.args ? `\`${cell(c.args)}\`` : ''} | ${WHERE[c.where]} | ${cell(c.what)} |`)];
  const settings = ['| setting | value | what it sets |', '|---|---|---|',
    ...t.settings.map((s) => `| \`${s.name}\` | \`${cell(s.args)}\` | ${cell(s.what)} |`)];
  return {
    'docs/scenario.md': { commands: commands.join('\n'), settings: settings.join('\n') },
    'docs/cli.md': { usage: ['```', cli('--help').trimEnd(), '```'].join('\n') },
  };
}

/** page's text with each generated part replaced; throws when a marker is missing. */
export function fill(page, text, parts) {
  for (const [name, body] of Object.entries(parts)) {
    const re = new RegExp(`(<!-- generated:${name} [^>]*-->)[\\s\\S]*?(<!-- /generated:${name} -->)`);
    if (!re.test(text)) throw new Error(`${page}: no <!-- generated:${name} ... --> ... <!-- /generated:${name} --> markers`);
    text = text.replace(re, (_, a, b) => `${a}\n${body}\n${b}`);
  }
  return text;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const check = process.argv.includes('--check');
  let stale = 0;
  for (const [page, parts] of Object.entries(generated())) {
    const path = root + page;
    const old = readFileSync(path, 'utf8');
    const text = fill(page, old, parts);
    if (text === old) continue;
    if (check) {
      stale++;
      console.error(`${page}: disagrees with the tables it documents (node scripts/gen-docs.mjs rewrites it)`);
    } else {
      writeFileSync(path, text);
      console.log(`wrote ${page}`);
    }
  }
  process.exit(stale ? 1 : 0);
}
