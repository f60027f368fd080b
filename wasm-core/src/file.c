#include "file.h"
#include "tree-log.h"
#include "transaction.h"
#include "crc32c.h"
#include "extent-tree.h"
#include "file-item.h"
#include "inode.h"
#include "volumes.h"
#include "delalloc.h"
#include "ordered-data.h"
#include <stdlib.h>
#include <string.h>

#define MAX_DATA_EXTENT (128ULL << 20) /* the kernel's largest uncompressed extent */

static u64 round_down(u64 v, u64 a) { return v / a * a; }
static u64 round_up(u64 v, u64 a) { return (v + a - 1) / a * a; }

/* The first extent of ino that covers or follows cur, before end, and the
 * part [*s, *e) of it inside [cur, end): 0, ENOENT, or an error. */
static int extent_in(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 cur, u64 end,
		     struct file_extent *fe, u64 *s, u64 *e)
{
	int ret = btrfs_find_file_extent(fs, root, ino, cur, end, fe);
	if (ret)
		return ret;
	u64 ks = fe->key.offset, ke = file_extent_end(fe);
	*s = ks > cur ? ks : cur;
	*e = ke < end ? ke : end;
	return 0;
}

/* Reads [off, off + len) of the file as it is now, zeros past size. */
static int read_range(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 size, u64 off, u8 *buf, u64 len,
		      int verify)
{
	memset(buf, 0, len);
	u64 end = off + len < size ? off + len : size, cur = off;
	while (cur < end) {
		struct file_extent fe;
		u64 s, e;
		int ret = extent_in(fs, root, ino, cur, end, &fe, &s, &e);
		if (ret)
			return ret == BLAB_ENOENT ? 0 : ret;
		u64 ks = fe.key.offset;
		if (fe.compression)
			return blab_fail(&fs->err, BLAB_ENOTSUP, "inode %llu: compressed extents are not supported",
					 (unsigned long long)ino);
		if (fe.type == BTRFS_FILE_EXTENT_INLINE) {
			struct btrfs_path path;
			if ((ret = btrfs_search_slot(fs, root, &fe.key, &path, 0, 0)) != 0)
				return ret < 0 ? ret : BLAB_ECORRUPT;
			const u8 *p = btrfs_item_ptr(path.nodes[0], path.slots[0]) + BTRFS_FILE_EXTENT_INLINE_DATA_START;
			u64 have = fe.inline_len;
			for (u64 i = s; i < e && i - ks < have; i++)
				buf[i - off] = p[i - ks];
		} else if (fe.type == BTRFS_FILE_EXTENT_REG && fe.disk_bytenr) {
			u64 disk = fe.disk_bytenr + fe.offset + (s - ks);
			if ((ret = btrfs_read_logical(fs, disk, buf + (s - off), (u32)(e - s))))
				return ret;
			if (verify) {
				u64 ss = fs->sectorsize, first = round_down(disk, ss), last = round_up(disk + (e - s), ss);
				u8 *sec = malloc(ss);
				if (!sec)
					return blab_fail(&fs->err, BLAB_ENOMEM, "read");
				for (u64 b = first; b < last && !ret; b += ss) {
					u32 want;
					if ((ret = btrfs_read_logical(fs, b, sec, (u32)ss)))
						break;
					if (btrfs_lookup_csum(fs, b, &want))
						ret = blab_fail(&fs->err, BLAB_ECORRUPT, "inode %llu: no checksum for data at logical %llu",
								(unsigned long long)ino, (unsigned long long)b);
					else if (crc32c(sec, ss) != want)
						ret = blab_fail(&fs->err, BLAB_ECORRUPT,
								"inode %llu: csum mismatch at logical %llu: have 0x%08x want 0x%08x",
								(unsigned long long)ino, (unsigned long long)b, crc32c(sec, ss), want);
				}
				free(sec);
				if (ret)
					return ret;
			}
		}
		cur = e > cur ? e : cur + 1;
	}
	return 0;
}

int btrfs_read_tree_range(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 item_size, u64 off, u8 *buf,
			  u64 len)
{
	return read_range(fs, root, ino, item_size, off, buf, len, 0);
}

int btrfs_file_read(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 off, u8 *buf, u64 len, u64 *got, int verify)
{
	struct btrfs_inode in;
	int ret = btrfs_read_inode(fs, root, ino, &in);
	if (ret)
		return ret;
	u64 size = btrfs_inode_isize(fs, btrfs_ikey(fs, root, ino), in.size);
	if (off >= size) {
		*got = 0;
		return 0;
	}
	if (len > size - off)
		len = size - off;
	*got = len;
	if ((ret = read_range(fs, root, ino, in.size, off, buf, len, verify)))
		return ret;
	btrfs_read_cached(fs, btrfs_ikey(fs, root, ino), off, buf, len); /* what the page cache holds is newer */
	return 0;
}

int btrfs_file_read_any(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 off, u8 *buf, u64 len, u64 *got)
{
	struct btrfs_inode in;
	int ret = btrfs_read_inode(fs, root, ino, &in);
	if (ret)
		return ret;
	u64 size = btrfs_inode_isize(fs, btrfs_ikey(fs, root, ino), in.size);
	*got = off >= size ? 0 : (len < size - off ? len : size - off);
	int ret2 = *got ? read_range(fs, root, ino, in.size, off, buf, *got, 0) : 0;
	if (!ret2 && *got)
		btrfs_read_cached(fs, btrfs_ikey(fs, root, ino), off, buf, *got);
	return ret2;
}

int btrfs_file_next_data(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 from, u64 end, u64 *start,
			 u64 *stop)
{
	for (u64 cur = from; cur < end;) {
		struct file_extent fe;
		u64 s, e;
		int ret = extent_in(fs, root, ino, cur, end, &fe, &s, &e);
		if (ret)
			return ret == BLAB_ENOENT ? 1 : ret;
		u64 ke = file_extent_end(&fe);
		int data = fe.type == BTRFS_FILE_EXTENT_INLINE || (fe.type == BTRFS_FILE_EXTENT_REG && fe.disk_bytenr);
		if (data && s < e) {
			*start = s;
			*stop = e;
			return 0;
		}
		cur = ke > cur ? ke : cur + 1;
	}
	return 1;
}

/* Writes buf as new data extents at [start, start + len) (whole sectors). */
static int write_new_extents(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 start, const u8 *buf, u64 len)
{
	u64 done = 0;
	while (done < len) {
		u64 piece = len - done < MAX_DATA_EXTENT ? len - done : MAX_DATA_EXTENT, bytenr;
		int ret;
		/* Prefer room in existing block groups; a new chunk only when small pieces do not fit either. */
		for (;;) {
			ret = btrfs_reserve_data(fs, piece, &bytenr, piece <= (1ULL << 20));
			if (ret != BLAB_ENOSPC || piece <= fs->sectorsize)
				break;
			piece = round_up(piece / 2, fs->sectorsize);
		}
		if (ret)
			return blab_fail(&fs->err, BLAB_ENOSPC, "no space for %llu bytes of file data", (unsigned long long)(len - done));
		u64 foff = start + done;
		if ((ret = btrfs_add_new_data_ref(fs, bytenr, piece, root->objectid, ino, foff)))
			return ret;
		for (u64 w = 0; w < piece; w += 1ULL << 24) {
			u32 n = (u32)(piece - w < (1ULL << 24) ? piece - w : (1ULL << 24));
			if ((ret = btrfs_write_logical(fs, bytenr + w, buf + done + w, n)))
				return ret;
		}
		if ((ret = btrfs_csum_file_blocks(fs, bytenr, buf + done, piece)))
			return ret;
		struct file_extent fe = {.type = BTRFS_FILE_EXTENT_REG, .generation = fs->generation, .ram_bytes = piece,
					 .disk_bytenr = bytenr, .disk_num_bytes = piece};
		if ((ret = btrfs_insert_file_extent(fs, root, ino, foff, &fe, 0, piece)))
			return ret;
		done += piece;
	}
	return 0;
}

int btrfs_file_has_inline(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, int *yes)
{
	struct btrfs_key key = {ino, BTRFS_EXTENT_DATA_KEY, 0};
	u8 *p;
	u32 size;
	int ret = btrfs_lookup_item(fs, root, &key, &p, &size, 0);
	*yes = ret == 0 && size >= BTRFS_FILE_EXTENT_INLINE_DATA_START && btrfs_file_extent_type(p) == BTRFS_FILE_EXTENT_INLINE;
	return ret == BLAB_ENOENT ? 0 : ret;
}

static int regular_inode(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, struct btrfs_inode *in)
{
	int ret = btrfs_read_inode(fs, root, ino, in);
	if (ret)
		return ret;
	if ((in->mode & S_IFMT_) == S_IFDIR_)
		return blab_fail(&fs->err, BLAB_EISDIR, "inode %llu is a directory", (unsigned long long)ino);
	if ((in->mode & S_IFMT_) != S_IFREG_)
		return blab_fail(&fs->err, BLAB_EINVAL, "inode %llu is not a regular file", (unsigned long long)ino);
	return 0;
}

/* Replaces the file's whole content by an inline extent of new_size bytes. */
static int rewrite_inline(struct btrfs_fs_info *fs, struct btrfs_root *root, struct btrfs_inode *in, u64 new_size,
			  u64 off, const u8 *data, u64 len)
{
	u8 buf[4096];
	u64 dropped;
	int ret = read_range(fs, root, in->ino, in->size, 0, buf, new_size, 0);
	if (ret)
		return ret;
	if (len)
		memcpy(buf + off, data, len);
	if ((ret = btrfs_drop_file_extents(fs, root, in->ino, 0, (u64)-1, &dropped)))
		return ret;
	in->nbytes -= dropped;
	if (new_size) {
		if ((ret = btrfs_insert_inline_extent(fs, root, in->ino, buf, (u32)new_size)))
			return ret;
		in->nbytes += new_size;
	}
	in->size = new_size;
	return 0;
}

/* Rewrites [start, end) (whole sectors) as new extents: the file's content
 * there, with data laid over [off, off + len). */
static int rewrite_range(struct btrfs_fs_info *fs, struct btrfs_root *root, struct btrfs_inode *in, u64 start, u64 end,
			 u64 off, const u8 *data, u64 len)
{
	u8 *buf = malloc(end - start);
	if (!buf)
		return blab_fail(&fs->err, BLAB_ENOMEM, "write of %llu bytes", (unsigned long long)(end - start));
	u64 dropped;
	int ret = read_range(fs, root, in->ino, in->size, start, buf, end - start, 0);
	if (!ret && len)
		memcpy(buf + (off - start), data, len);
	if (!ret)
		ret = btrfs_drop_file_extents(fs, root, in->ino, start, end, &dropped);
	if (!ret) {
		in->nbytes -= dropped;
		ret = write_new_extents(fs, root, in->ino, start, buf, end - start);
	}
	if (!ret)
		in->nbytes += end - start;
	free(buf);
	return ret;
}

int btrfs_write_inline(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, const u8 *data, u64 size)
{
	struct btrfs_inode in;
	int ret = btrfs_read_inode(fs, root, ino, &in);
	if (ret)
		return ret;
	u64 dropped;
	if ((ret = btrfs_drop_file_extents(fs, root, ino, 0, (u64)-1, &dropped)))
		return ret;
	in.nbytes -= dropped;
	if (size) {
		if ((ret = btrfs_insert_inline_extent(fs, root, ino, data, (u32)size)))
			return ret;
		in.nbytes += size;
	}
	in.size = size;
	in.transid = fs->generation;
	return btrfs_update_inode(fs, root, &in);
}

static void touch_data(struct btrfs_fs_info *fs, struct btrfs_inode *in)
{
	in->mtime = in->ctime = (struct btrfs_timespec){fs->now, 0};
	in->transid = fs->generation;
	in->sequence++;
}

int btrfs_file_write(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 off, const u8 *data, u64 len)
{
	struct btrfs_inode in;
	int ret = regular_inode(fs, root, ino, &in);
	if (ret)
		return ret;
	if (off + len < off || off + len > (1ULL << 60))
		return blab_fail(&fs->err, BLAB_EINVAL, "write at %llu of %llu bytes is past the largest file size",
				 (unsigned long long)off, (unsigned long long)len);
	if (!len)
		return 0;
	/* straight to extents (as O_DIRECT): what the page cache holds goes to disk first, then leaves it */
	if ((ret = btrfs_writeback_and_wait(fs, root, ino, 0, (u64)-1)) || (ret = regular_inode(fs, root, ino, &in)))
		return ret;
	btrfs_delalloc_evict(fs, btrfs_ikey(fs, root, ino));
	u64 ss = fs->sectorsize, new_size = off + len > in.size ? off + len : in.size;
	if (new_size <= btrfs_max_inline(fs)) {
		ret = rewrite_inline(fs, root, &in, new_size, off, data, len);
	} else {
		int inl;
		if ((ret = btrfs_file_has_inline(fs, root, ino, &inl)))
			return ret;
		u64 start = round_down(off, ss), end = round_up(off + len, ss);
		if (inl) { /* the inline data becomes part of the first regular extent */
			start = 0;
			if (end < round_up(in.size, ss))
				end = round_up(in.size, ss);
		}
		ret = rewrite_range(fs, root, &in, start, end, off, data, len);
		in.size = new_size;
	}
	if (ret)
		return ret;
	touch_data(fs, &in);
	return btrfs_update_inode(fs, root, &in);
}

int btrfs_file_truncate(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 size)
{
	struct btrfs_inode in;
	int ret = regular_inode(fs, root, ino, &in);
	if (ret)
		return ret;
	if (size > (1ULL << 60))
		return blab_fail(&fs->err, BLAB_EINVAL, "size %llu is past the largest file size", (unsigned long long)size);
	u64 ss = fs->sectorsize;
	int inl;
	/* the model writes the file back first, so that the extents hold all of it (the kernel
	 * drops the dirty pages past a smaller size instead: see tests/kernel/model.mjs's aligned) */
	if ((ret = btrfs_writeback_and_wait(fs, root, ino, 0, (u64)-1)) || (ret = regular_inode(fs, root, ino, &in)))
		return ret;
	if ((ret = btrfs_file_has_inline(fs, root, ino, &inl)))
		return ret;
	if (size < in.size)
		btrfs_log_note_truncate(fs, ino); /* an fsync must log what is gone too */
	if (size == in.size) {
		/* nothing moves */
	} else if (inl && size <= btrfs_max_inline(fs)) {
		ret = rewrite_inline(fs, root, &in, size, 0, NULL, 0);
	} else if (inl) {
		/* growing past what stays inline: the data moves to a regular extent, the rest is a hole */
		u64 old = in.size;
		ret = rewrite_range(fs, root, &in, 0, round_up(old, ss), 0, NULL, 0);
		in.size = size;
	} else if (size < in.size) {
		u64 dropped;
		if ((ret = btrfs_drop_file_extents(fs, root, ino, round_up(size, ss), (u64)-1, &dropped)))
			return ret;
		in.nbytes -= dropped;
		if (size % ss) {
			/* the last sector keeps zeros past the new end, so growing later shows zeros */
			struct file_extent fe;
			ret = btrfs_find_file_extent(fs, root, ino, round_down(size, ss), round_up(size, ss), &fe);
			if (ret == 0 && fe.type == BTRFS_FILE_EXTENT_REG && fe.disk_bytenr) {
				in.size = size;
				ret = rewrite_range(fs, root, &in, round_down(size, ss), round_up(size, ss), 0, NULL, 0);
			} else if (ret == BLAB_ENOENT) {
				ret = 0;
			}
		}
		in.size = size;
	} else {
		/* growing: the rest is a hole (nothing on disk under NO_HOLES), and the
		 * block that held the end is written again, zeroed past it */
		if ((ret = btrfs_grow_eof(fs, root, ino, in.size, size)))
			return ret;
		in.size = size; /* the item has it at once, as btrfs_setsize writes it */
		touch_data(fs, &in);
		return btrfs_update_inode(fs, root, &in);
	}
	if (ret)
		return ret;
	touch_data(fs, &in);
	if ((ret = btrfs_update_inode(fs, root, &in)))
		return ret;
	btrfs_delalloc_evict(fs, btrfs_ikey(fs, root, ino)); /* written back: the size is the item's again */
	return 0;
}

int btrfs_sync_file(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, struct btrfs_log_stats *st)
{
	struct btrfs_log_stats local;
	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	st->ino = ino;
	int ret = btrfs_start_transaction(fs);
	/* without time, writeback and every ordered extent complete first */
	if (!ret)
		ret = btrfs_writeback_and_wait(fs, root, ino, 0, (u64)-1);
	if (!ret && root != fs->fs_root) {
		st->fallback = BTRFS_LOG_FULL_COMMIT_SUBVOL;
		fs_trace(fs, (struct trace_event){.kind = TRACE_FSYNC, .tree = root->objectid, .a = ino, .b = st->fallback});
	} else if (!ret) {
		ret = btrfs_log_dentry_safe(fs, root, ino, st);
	}
	if (ret || st->fallback == BTRFS_LOG_LOGGED || st->fallback == BTRFS_LOG_NOTHING)
		return ret;
	/* the log cannot make this durable: a full commit does */
	ret = btrfs_commit_transaction(fs);
	return ret ? ret : btrfs_start_transaction(fs);
}
