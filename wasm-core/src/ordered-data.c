#include "space-info.h"
#include "delalloc.h"
#include "delalloc-int.h"
#include "extent-tree.h"
#include "block-group.h"
#include "file.h"
#include "inode.h"
#include "transaction.h"
#include "volumes.h"
#include <stdlib.h>
#include <string.h>

struct btrfs_ordered_extent *const *btrfs_ordered_list(const struct btrfs_fs_info *fs, size_t *n)
{
	*n = fs->data->noes;
	return fs->data->oes;
}

size_t btrfs_ordered_of(const struct btrfs_fs_info *fs, u64 ino, u64 start, u64 end, struct btrfs_ordered_extent **out,
			size_t max)
{
	const struct btrfs_data_state *d = fs->data;
	size_t n = 0;
	for (size_t i = 0; i < d->noes; i++) {
		struct btrfs_ordered_extent *oe = d->oes[i];
		if (oe->ikey == ino && oe->file_offset < end && oe->file_offset + oe->num_bytes > start) {
			if (n < max)
				out[n] = oe;
			n++;
		}
	}
	return n;
}

int btrfs_ordered_io_pending(const struct btrfs_fs_info *fs, u64 ino, u64 start, u64 end)
{
	const struct btrfs_data_state *d = fs->data;
	for (size_t i = 0; i < d->noes; i++) {
		const struct btrfs_ordered_extent *oe = d->oes[i];
		if (oe->ikey == ino && oe->file_offset < end && oe->file_offset + oe->num_bytes > start &&
		    !(oe->flags & BTRFS_ORDERED_IO_DONE))
			return 1;
	}
	return 0;
}

size_t btrfs_ordered_count(const struct btrfs_fs_info *fs, u64 ino)
{
	return btrfs_ordered_of(fs, ino, 0, (u64)-1, NULL, 0);
}

u64 btrfs_ordered_bytes(const struct btrfs_fs_info *fs, u64 ino, u64 *count)
{
	const struct btrfs_data_state *d = fs->data;
	u64 bytes = 0, n = 0;
	for (size_t i = 0; d && i < d->noes; i++)
		if (!ino || d->oes[i]->ikey == ino) {
			bytes += d->oes[i]->num_bytes;
			n++;
		}
	if (count)
		*count = n;
	return bytes;
}

struct btrfs_ordered_extent *btrfs_ordered_by_id(const struct btrfs_fs_info *fs, u64 id)
{
	const struct btrfs_data_state *d = fs->data;
	for (size_t i = 0; i < d->noes; i++)
		if (d->oes[i]->id == id)
			return d->oes[i];
	return NULL;
}

int btrfs_ordered_io_done(struct btrfs_fs_info *fs, struct btrfs_ordered_extent *oe)
{
	if (oe->flags & BTRFS_ORDERED_IO_DONE)
		return 0;
	int ret = 0;
	struct btrfs_inode_cache *ic = btrfs_inode_cache_get(fs, oe->ikey);
	u64 ss = fs->sectorsize, chunk = 1ULL << 20;
	/* the pages gathered a MiB at a time: the device takes whole pages of its own */
	u8 *buf = malloc(oe->num_bytes < chunk ? oe->num_bytes : chunk);
	if (!buf)
		return blab_fail(&fs->err, BLAB_ENOMEM, "bio");
	for (u64 at = 0; at < oe->num_bytes && !ret; at += chunk) {
		u64 n = oe->num_bytes - at < chunk ? oe->num_bytes - at : chunk;
		for (u64 off = 0; off < n; off += ss) {
			const struct btrfs_page *p = ic ? btrfs_page_at(ic, (oe->file_offset + at + off) / ss) : NULL;
			if (p)
				memcpy(buf + off, p->data, ss);
			else
				memset(buf + off, 0, ss);
		}
		ret = btrfs_write_logical(fs, oe->disk_bytenr + at, buf, (u32)n);
	}
	free(buf);
	if (ret)
		return ret;
	oe->flags |= BTRFS_ORDERED_IO_DONE;
	if (ic)
		btrfs_pages_set_state(fs, ic, oe->file_offset, oe->file_offset + oe->num_bytes, BTRFS_PAGE_WRITEBACK,
				      BTRFS_PAGE_UPTODATE);
	fs_trace(fs, (struct trace_event){.kind = TRACE_ORDERED_IO_DONE, .tree = oe->root, .bytenr = oe->disk_bytenr,
					  .a = oe->ino, .b = oe->file_offset, .c = oe->num_bytes, .slot = (int)oe->id});
	return 0;
}

static void remove_oe(struct btrfs_fs_info *fs, struct btrfs_ordered_extent *oe)
{
	struct btrfs_data_state *d = fs->data;
	for (size_t i = 0; i < d->noes; i++)
		if (d->oes[i] == oe) {
			memmove(&d->oes[i], &d->oes[i + 1], (d->noes - i - 1) * sizeof(*d->oes));
			d->noes--;
			break;
		}
	free(oe->sums);
	free(oe);
}

int btrfs_finish_ordered_io(struct btrfs_fs_info *fs, struct btrfs_ordered_extent *oe)
{
	struct btrfs_root *root = btrfs_get_root(fs, oe->root);
	if (!root)
		return blab_fail(&fs->err, BLAB_ENOENT, "ordered extent of a root that is gone");
	int ret = btrfs_ordered_io_done(fs, oe);
	if (ret)
		return ret;
	u64 s = oe->file_offset, e = s + oe->num_bytes, dropped = 0;
	struct btrfs_inode in;
	if ((ret = btrfs_drop_file_extents(fs, root, oe->ino, s, e, &dropped)) ||
	    (ret = btrfs_add_new_data_ref(fs, oe->disk_bytenr, oe->num_bytes, oe->root, oe->ino, s)) ||
	    (ret = btrfs_insert_csums(fs, oe->disk_bytenr, oe->sums, oe->num_bytes / fs->sectorsize)))
		return ret;
	struct file_extent fe = {.type = BTRFS_FILE_EXTENT_REG, .generation = fs->generation, .ram_bytes = oe->num_bytes,
				 .disk_bytenr = oe->disk_bytenr, .disk_num_bytes = oe->num_bytes};
	if ((ret = btrfs_insert_file_extent(fs, root, oe->ino, s, &fe, 0, oe->num_bytes)) ||
	    (ret = btrfs_read_inode(fs, root, oe->ino, &in)))
		return ret;
	in.nbytes = in.nbytes - dropped + oe->num_bytes;
	/* disk_i_size: up to the end of what completed, never past i_size */
	u64 isize = btrfs_inode_isize(fs, oe->ikey, in.size), want = e < isize ? e : isize;
	if (want > in.size)
		in.size = want;
	in.transid = fs->generation;
	if ((ret = btrfs_update_inode(fs, root, &in)))
		return ret;
	struct btrfs_block_group *bg = btrfs_lookup_block_group(fs, oe->disk_bytenr);
	if (bg)
		bg->dirty = bg->fst_dirty = 1; /* its used bytes now count this extent */
	fs->data->st.finished++;
	fs_trace(fs, (struct trace_event){.kind = TRACE_ORDERED_FINISH, .tree = oe->root, .bytenr = oe->disk_bytenr,
					  .a = oe->ino, .b = s, .c = oe->num_bytes, .slot = (int)oe->id});
	struct btrfs_inode_cache *ic = btrfs_inode_cache_get(fs, oe->ikey);
	if (ic)
		btrfs_pages_set_state(fs, ic, s, e, BTRFS_PAGE_UPTODATE, 0);
	u64 ino = oe->ikey;
	btrfs_space_data_done(fs, oe->num_bytes);
	remove_oe(fs, oe);
	btrfs_delalloc_space_sync(fs, ino); /* its extent's metadata reservation released */
	return 0;
}

int btrfs_wait_ordered(struct btrfs_fs_info *fs, u64 ino)
{
	struct btrfs_data_state *d = fs->data;
	int ret = 0;
	for (size_t i = 0; i < d->noes && !ret;) {
		struct btrfs_ordered_extent *oe = d->oes[i];
		if (ino && oe->ikey != ino) {
			i++;
			continue;
		}
		if (!(ret = btrfs_start_transaction(fs)))
			ret = btrfs_finish_ordered_io(fs, oe); /* removes it: i is the next one */
	}
	return ret;
}

int btrfs_ordered_logged_pending(const struct btrfs_fs_info *fs)
{
	const struct btrfs_data_state *d = fs->data;
	for (size_t i = 0; i < d->noes; i++)
		if (d->oes[i]->logged_trans == fs->generation)
			return 1;
	return 0;
}

int btrfs_ordered_covers(const struct btrfs_fs_info *fs, u64 ino, u64 start, u64 end)
{
	return btrfs_ordered_of(fs, ino, start, end, NULL, 0) != 0;
}

u64 btrfs_ordered_reserved_in(const struct btrfs_fs_info *fs, u64 start, u64 len)
{
	const struct btrfs_data_state *d = fs->data;
	u64 sum = 0;
	for (size_t i = 0; d && i < d->noes; i++) {
		const struct btrfs_ordered_extent *oe = d->oes[i];
		if (oe->disk_bytenr >= start && oe->disk_bytenr < start + len)
			sum += oe->num_bytes;
	}
	return sum;
}

size_t btrfs_ordered_reserved_ranges(const struct btrfs_fs_info *fs, u64 start, u64 len, struct free_range *out, size_t max)
{
	const struct btrfs_data_state *d = fs->data;
	size_t n = 0;
	for (size_t i = 0; d && i < d->noes; i++) {
		const struct btrfs_ordered_extent *oe = d->oes[i];
		if (oe->disk_bytenr >= start && oe->disk_bytenr < start + len) {
			if (n < max)
				out[n] = (struct free_range){oe->disk_bytenr, oe->num_bytes};
			n++;
		}
	}
	return n;
}

const struct btrfs_ordered_stats *btrfs_ordered_stats(const struct btrfs_fs_info *fs) { return &fs->data->st; }
void btrfs_ordered_count_logged(struct btrfs_fs_info *fs, u64 n)
{
	if (n) {
		fs->data->st.logged_in_flight += n;
		fs->data->st.fsyncs_logged_in_flight++;
	}
}
int btrfs_fsync_wait_mode(const struct btrfs_fs_info *fs) { return fs->data->fsync_wait; }
void btrfs_set_fsync_wait_mode(struct btrfs_fs_info *fs, int mode) { fs->data->fsync_wait = mode; }
