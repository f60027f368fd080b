#!/usr/bin/env python3
"""fsync_state.py MOUNTPOINT PATH... prints, as JSON, what fsync promises to
keep of each PATH (relative to MOUNTPOINT): the fields snapshot.py prints
(type, nlink, size, sha, target, user xattrs) and, for a directory, the
sorted names in it. A path that does not exist maps to null.

It reads without disturbing the filesystem it looks at: files and
directories are opened with O_NOATIME, so looking does not dirty an inode
and change what a later fsync logs."""
import hashlib, json, os, stat, sys

def describe(full):
    try:
        st = os.lstat(full)
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(st.st_mode): t = 'dir'
    elif stat.S_ISLNK(st.st_mode): t = 'symlink'
    elif stat.S_ISREG(st.st_mode): t = 'file'
    else: t = 'other'
    d = {'type': t, 'nlink': st.st_nlink}
    if t == 'file':
        d['size'] = st.st_size
        h = hashlib.sha256()
        fd = os.open(full, os.O_RDONLY | os.O_NOATIME)
        try:
            while True:
                b = os.read(fd, 1 << 20)
                if not b:
                    break
                h.update(b)
        finally:
            os.close(fd)
        d['sha'] = h.hexdigest()
    if t == 'symlink':
        d['target'] = os.readlink(full)
    else:
        d['xattrs'] = {n: os.getxattr(full, n, follow_symlinks=False).decode('utf-8', 'replace')
                       for n in sorted(os.listxattr(full, follow_symlinks=False)) if n.startswith('user.')}
    if t == 'dir':
        fd = os.open(full, os.O_RDONLY | os.O_DIRECTORY | os.O_NOATIME)
        try:
            d['names'] = sorted(os.listdir(fd))
        finally:
            os.close(fd)
    return d

mnt = sys.argv[1]
json.dump({p: describe(os.path.join(mnt, p)) for p in sys.argv[2:]}, sys.stdout, sort_keys=True)
