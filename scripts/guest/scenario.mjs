// A scenario (the core's script language) done by a kernel: its file
// commands turned into a workload (run.mjs) of shell and `blab` calls. The
// core writes the starting image from the scenario's mkfs line; the kernel
// does the rest. For comparing what a kernel logs, commits and replays with
// what the core does for the same script.

const q = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;
const at = (p) => `"$MNT"${q(p.startsWith('/') ? p : `/${p}`)}`;

/** A scenario line's words: whitespace-separated, "..." a JSON string. */
export function scenarioWords(line) {
  const out = [];
  const re = /\s*("(?:[^"\\]|\\.)*"|\S+)/gy;
  let m;
  while ((m = re.exec(line)) && m[1]) out.push(m[1].startsWith('"') ? JSON.parse(m[1]) : m[1]);
  return out;
}

const count = (w, line) => {
  if (!/^\d+$/.test(w)) throw new Error(`line ${line}: '${w}' is not a number`);
  return w;
};

/**
 * { mkfs: the scenario's mkfs line (or 'mkfs'), workload: the shell text, crash }.
 * Throws an error naming the line for a command the kernel side cannot do.
 * mountOptions: -o for the mount (default commit=600, so that only the
 * scenario's commits commit).
 */
export function scenarioWorkload(text, { mountOptions = 'commit=600' } = {}) {
  const sh = [`mount -t btrfs -o ${mountOptions} "$IMG" "$MNT"`];
  let mkfs = 'mkfs';
  let crash = false;
  text.split('\n').forEach((raw, i) => {
    const n = i + 1;
    const line = raw.replace(/^\s+|\s+$/g, '');
    if (!line || line.startsWith('#')) return;
    const [op, ...a] = scenarioWords(line);
    const need = (k) => {
      if (a.length !== k) throw new Error(`line ${n}: ${op} takes ${k} arguments, not ${a.length}`);
    };
    if (crash) throw new Error(`line ${n}: nothing may follow crash`);
    switch (op) {
      case 'mkfs':
        if (n !== 1 && sh.length > 1) throw new Error(`line ${n}: mkfs may only be the first command`);
        mkfs = line;
        break;
      case 'set': break; // the core's own knobs (dir_logging, costs): a kernel keeps its own behaviour
      case 'mkdir': need(1); sh.push(`mkdir ${at(a[0])}`); break;
      case 'create': {
        need(1);
        const m = /^(.*)\{(\d+)\.\.(\d+)\}(.*)$/.exec(a[0]);
        if (m) {
          sh.push(`i=${m[2]}; while [ $i -le ${m[3]} ]; do : >${at(m[1])}"$i"${q(m[4])}; i=$((i + 1)); done`);
        } else sh.push(`: >${at(a[0])}`);
        break;
      }
      case 'write': need(4); sh.push(`blab write ${at(a[0])} ${count(a[1], n)} ${count(a[2], n)} ${count(a[3], n)}`); break;
      case 'truncate': need(2); sh.push(`blab truncate ${at(a[0])} ${count(a[1], n)}`); break;
      case 'link': need(2); sh.push(`ln ${at(a[0])} ${at(a[1])}`); break;
      case 'symlink': need(2); sh.push(`ln -s ${q(a[0])} ${at(a[1])}`); break;
      case 'unlink': need(1); sh.push(`rm ${at(a[0])}`); break;
      case 'rmdir': need(1); sh.push(`rmdir ${at(a[0])}`); break;
      case 'rename': need(2); sh.push(`blab rename ${at(a[0])} ${at(a[1])}`); break;
      case 'setxattr': need(3); sh.push(`blab setxattr ${at(a[0])} ${q(a[1])} ${q(a[2])}`); break;
      case 'fsync': need(1); sh.push(`blab fsync ${at(a[0])} >/dev/null`); break;
      case 'commit': sh.push('sync -f "$MNT"'); break;
      case 'crash': sh.push('crash'); crash = true; break;
      default: throw new Error(`line ${n}: the kernel side does not do '${op}' (it does mkdir, create, write, truncate, link, symlink, unlink, rmdir, rename, setxattr, fsync, commit, crash)`);
    }
  });
  // stop at the first command that fails, naming it
  return { mkfs, crash, workload: `set -e\n${sh.join('\n')}\n` };
}
