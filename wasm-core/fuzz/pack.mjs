#!/usr/bin/env node
// node wasm-core/fuzz/pack.mjs pack IMG OUT.blfz | unpack IN.blfz IMG
import { readFileSync, writeFileSync } from 'node:fs';
import { pack, unpackToFile } from './blfz.mjs';

const [cmd, from, to] = process.argv.slice(2);
if (cmd === 'pack' && to) writeFileSync(to, pack(readFileSync(from)));
else if (cmd === 'unpack' && to) {
  if (!unpackToFile(readFileSync(from), to)) {
    console.error(`pack: ${from} is not a BLFZ input`);
    process.exit(1);
  }
} else {
  console.error('usage: node wasm-core/fuzz/pack.mjs pack IMG OUT.blfz | unpack IN.blfz IMG');
  process.exit(2);
}
