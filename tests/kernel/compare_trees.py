#!/usr/bin/env python3
"""compare_trees.py A B: prints a JSON list of differences between two trees:
paths present on one side only, and for each path its type, mode, owner,
size, contents (sha256), symlink target, device numbers, xattrs and mtime.
Directory link counts are left out (btrfs keeps them at 1); the link count
of other files is compared with the number of names the inode has in the
tree (links from outside the tree do not count)."""
import hashlib, json, os, stat, sys
from collections import Counter

def scan(top):
    out, inos = {}, Counter()
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            full = os.path.join(dirpath, name)
            st = os.lstat(full)
            if not stat.S_ISDIR(st.st_mode):
                inos[(st.st_dev, st.st_ino)] += 1
            out[os.path.relpath(full, top)] = (full, st)
    res = {}
    for rel, (full, st) in out.items():
        d = {'mode': oct(st.st_mode), 'uid': st.st_uid, 'gid': st.st_gid, 'mtime_ns': st.st_mtime_ns}
        if not stat.S_ISDIR(st.st_mode):
            d['nlink_in_tree'] = inos[(st.st_dev, st.st_ino)]
            d['nlink'] = st.st_nlink
        if stat.S_ISREG(st.st_mode):
            d['size'] = st.st_size
            h = hashlib.sha256()
            with open(full, 'rb') as f:
                for c in iter(lambda: f.read(1 << 20), b''):
                    h.update(c)
            d['sha'] = h.hexdigest()
        elif stat.S_ISLNK(st.st_mode):
            d['target'] = os.readlink(full)
        elif stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
            d['rdev'] = [os.major(st.st_rdev), os.minor(st.st_rdev)]
        try:
            d['xattrs'] = {n: os.getxattr(full, n, follow_symlinks=False).hex() for n in sorted(os.listxattr(full, follow_symlinks=False))}
        except OSError:
            d['xattrs'] = {}
        res[rel] = d
    return res

a, b = scan(sys.argv[1]), scan(sys.argv[2])
diffs = []
for p in sorted(set(a) | set(b)):
    if p not in a or p not in b:
        diffs.append({'path': p, 'only_in': sys.argv[1] if p in a else sys.argv[2]})
        continue
    da, db = dict(a[p]), dict(b[p])
    # in the copy every link is in the tree: its link count is what the source tree holds
    if 'nlink' in da:
        da['nlink'] = da['nlink_in_tree']
    for k in sorted(set(da) | set(db)):
        if da.get(k) != db.get(k):
            diffs.append({'path': p, 'field': k, 'source': da.get(k), 'copy': db.get(k)})
json.dump(diffs[:50], sys.stdout, indent=1)
