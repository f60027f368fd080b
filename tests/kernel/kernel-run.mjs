// A scenario's commands (as randomScenario returns them) done by the kernel
// itself on a mounted btrfs: its VFS for files, `btrfs subvolume`, `cp
// --reflink`, `btrfs quota` and `btrfs qgroup` for the rest, `sync` for a
// commit. For comparing what the kernel counts with what the core counts for
// the same work.
import { execFileSync } from 'node:child_process';
import { closeSync, linkSync, mkdirSync, openSync, renameSync, rmdirSync, symlinkSync, truncateSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { dataBytes } from './model.mjs';

const at = (mnt, p) => join(mnt, p);
const btrfs = (...args) => execFileSync('btrfs', args, { stdio: ['ignore', 'pipe', 'pipe'] });

/** Does cmds (arrays of strings and numbers, no brace ranges) on the btrfs mounted at mnt. A command
 * that fails throws its error with .cmdIndex (its index in cmds) and, for a write, .written (the bytes
 * the short writes before it wrote). */
export function runInKernel(cmds, mnt) {
  for (const [i, cmd] of cmds.entries()) {
    try {
      runOne(cmd, mnt);
    } catch (e) {
      e.cmdIndex = i;
      throw e;
    }
  }
  execFileSync('sync', ['-f', mnt]);
}

function runOne([op, ...a], mnt) {
  switch (op) {
    case 'mkdir': mkdirSync(at(mnt, a[0])); break;
    case 'create': writeFileSync(at(mnt, a[0]), '', { flag: 'wx' }); break;
    case 'symlink': symlinkSync(a[0], at(mnt, a[1])); break;
    case 'write': {
      // all of it, as the scenario's write: write(2) again after a short write (a qgroup limit
      // stops the kernel's buffered write part way; the call after fails with EDQUOT)
      const fd = openSync(at(mnt, a[0]), 'r+');
      const buf = dataBytes(a[3], a[1], a[2]);
      let done = 0;
      try {
        while (done < a[2]) done += writeSync(fd, buf, done, a[2] - done, a[1] + done);
      } catch (e) {
        e.written = done;
        throw e;
      } finally { closeSync(fd); }
      break;
    }
    case 'truncate': truncateSync(at(mnt, a[0]), a[1]); break;
    case 'link': linkSync(at(mnt, a[0]), at(mnt, a[1])); break;
    case 'unlink': unlinkSync(at(mnt, a[0])); break;
    case 'rmdir': rmdirSync(at(mnt, a[0])); break;
    case 'rename': renameSync(at(mnt, a[0]), at(mnt, a[1])); break;
    case 'setxattr':
      execFileSync('python3', ['-c', 'import os,sys; os.setxattr(sys.argv[1], sys.argv[2], sys.argv[3].encode())', at(mnt, a[0]), a[1], a[2]]);
      break;
    case 'commit': execFileSync('sync', ['-f', mnt]); break;
    case 'snapshot': btrfs('subvolume', 'snapshot', ...(a[2] === 'ro' ? ['-r'] : []), at(mnt, a[0]), at(mnt, a[1])); break;
    case 'subvol':
      if (a[0] === 'create') btrfs('subvolume', 'create', at(mnt, a[1]));
      else if (a[0] === 'set-default') btrfs('subvolume', 'set-default', at(mnt, a[1]));
      else if (a[0] === 'sync') btrfs('subvolume', 'sync', mnt);
      else {
        btrfs('subvolume', 'delete', '-c', at(mnt, a[1]));
        if (a[2] !== 'nosync') btrfs('subvolume', 'sync', mnt);
      }
      break;
    case 'clone': execFileSync('cp', ['--reflink=always', at(mnt, a[0]), at(mnt, a[1])]); break;
    case 'quota':
      if (a[0] === 'enable') btrfs('quota', 'enable', mnt);
      btrfs('quota', 'rescan', '-w', mnt);
      break;
    case 'qgroup':
      if (a[0] === 'create') btrfs('qgroup', 'create', a[1], mnt);
      else if (a[0] === 'limit') btrfs('qgroup', 'limit', ...(a[3] === 'excl' ? ['-e'] : []), String(a[1]), a[2], mnt);
      else btrfs('qgroup', 'assign', '--no-rescan', a[1], a[2], mnt);
      break;
    case 'balance': btrfs('balance', 'start', ...a, mnt); break;
    case 'set': break; // the model's own pace (drop_batch): the kernel keeps its own
    default: throw new Error(`runInKernel: no way to do ${op}`);
  }
}
