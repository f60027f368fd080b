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

/** Does cmds (arrays of strings and numbers, no brace ranges) on the btrfs mounted at mnt. */
export function runInKernel(cmds, mnt) {
  for (const [op, ...a] of cmds) {
    switch (op) {
      case 'mkdir': mkdirSync(at(mnt, a[0])); break;
      case 'create': writeFileSync(at(mnt, a[0]), '', { flag: 'wx' }); break;
      case 'symlink': symlinkSync(a[0], at(mnt, a[1])); break;
      case 'write': {
        const fd = openSync(at(mnt, a[0]), 'r+');
        try { writeSync(fd, dataBytes(a[3], a[1], a[2]), 0, a[2], a[1]); } finally { closeSync(fd); }
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
        else {
          btrfs('subvolume', 'delete', '-c', at(mnt, a[1]));
          btrfs('subvolume', 'sync', mnt);
        }
        break;
      case 'clone': execFileSync('cp', ['--reflink=always', at(mnt, a[0]), at(mnt, a[1])]); break;
      case 'quota':
        if (a[0] === 'enable') btrfs('quota', 'enable', mnt);
        btrfs('quota', 'rescan', '-w', mnt);
        break;
      case 'qgroup':
        if (a[0] === 'create') btrfs('qgroup', 'create', a[1], mnt);
        else btrfs('qgroup', 'assign', '--no-rescan', a[1], a[2], mnt);
        break;
      default: throw new Error(`runInKernel: no way to do ${op}`);
    }
  }
  execFileSync('sync', ['-f', mnt]);
}
