#!/usr/bin/env python3
"""fsync_state.py MOUNTPOINT PATH... prints, as JSON, what fsync promises to
keep of each PATH (relative to MOUNTPOINT): the fields snapshot.py prints
(type, nlink, size, sha, target, user xattrs) and, for a directory, the
sorted names in it. A path that does not exist maps to null.

It reads without disturbing the filesystem it looks at: files and
directories are opened with O_NOATIME, so looking does not dirty an inode
and change what a later fsync logs."""
import json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import snapshot  # noqa: E402  (the same description of a path, read with O_NOATIME)

def describe(full):
    try:
        d = snapshot.describe(full)
    except FileNotFoundError:
        return None
    if d['type'] == 'dir':
        fd = os.open(full, os.O_RDONLY | os.O_DIRECTORY | os.O_NOATIME)
        try:
            d['names'] = sorted(os.listdir(fd))
        finally:
            os.close(fd)
    return d

mnt = sys.argv[1]
json.dump({p: describe(os.path.join(mnt, p)) for p in sys.argv[2:]}, sys.stdout, sort_keys=True)
