#!/usr/bin/env python3
"""Prints, as JSON, what a mounted filesystem shows: for every path below the
mount point its type, link count, size and sha256 (files), target (symlinks)
and user xattrs. The shape matches FsModel.snapshot() in model.mjs."""
import hashlib, json, os, stat, sys

def describe(full):
    st = os.lstat(full)
    if stat.S_ISDIR(st.st_mode): t = 'dir'
    elif stat.S_ISLNK(st.st_mode): t = 'symlink'
    elif stat.S_ISREG(st.st_mode): t = 'file'
    else: t = 'other'
    d = {'type': t, 'nlink': st.st_nlink}
    if t == 'file':
        d['size'] = st.st_size
        # O_NOATIME: looking must not dirty the inode (a later fsync would log it)
        h = hashlib.sha256()
        fd = os.open(full, os.O_RDONLY | os.O_NOATIME)
        try:
            for chunk in iter(lambda: os.read(fd, 1 << 20), b''):
                h.update(chunk)
        finally:
            os.close(fd)
        d['sha'] = h.hexdigest()
    if t == 'symlink':
        d['target'] = os.readlink(full)
    else:
        d['xattrs'] = {n: os.getxattr(full, n, follow_symlinks=False).decode('utf-8', 'replace')
                       for n in sorted(os.listxattr(full, follow_symlinks=False)) if n.startswith('user.')}
    return d

def main(mnt):
    out = {}
    def walk(d, p):
        for name in sorted(os.listdir(d)):
            full = os.path.join(d, name)
            path = '/' + name if p == '/' else p + '/' + name
            out[path] = describe(full)
            if out[path]['type'] == 'dir':
                walk(full, path)
    walk(mnt, '/')
    json.dump(out, sys.stdout, sort_keys=True)

if __name__ == '__main__':
    main(sys.argv[1])
