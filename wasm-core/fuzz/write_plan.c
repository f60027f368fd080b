/* The write planner (cli/write-plan.c), as `btrfslab write` runs it before
 * anything is written: how far the image's filesystem reaches (superblock,
 * device item, chunk stripes, dev extents), then the ranges to write, the
 * superblock copies cut out to go last. Two input forms:
 *   BLFZ (fuzz.h): an image, opened; its data ranges are its device's pages
 *     (the whole path, at the speed of an open);
 *   anything else, the planner's own inputs, read as little-endian fields
 *   (a short input reads as zeros past its end): total_bytes u64, the device
 *   item's total_bytes u64, the image file's size u64, a chunk count u8 (at
 *   most 64), per chunk logical, length, type u64, num_stripes, sub_stripes
 *   u8 and two stripe offsets u64; then data ranges to the input's end, each
 *   a gap and a length in 4 KiB units (u16 each) after the previous one.
 * What a plan must be, or the target aborts: ranges sorted,
 * apart, inside the limit, touching no superblock copy, summing to bytes;
 * every data page below the limit written (in a range or as a copy); the
 * reach at least the superblock's total_bytes and past every chunk stripe's
 * start. */
#include "fuzz.h"
#include "../cli/write-plan.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what, unsigned long long a, unsigned long long b)
{
	fprintf(stderr, "write_plan: %s (%llu, %llu)\n", what, a, b);
	abort();
}

/* The plan of data[0..n) under limit, checked. */
static void plan_and_check(const struct write_range *ranges, size_t n, u64 limit)
{
	struct write_plan p;
	if (write_plan_make(ranges, n, limit, &p))
		abort();
	u64 sum = 0;
	for (size_t k = 0; k < p.n; k++) {
		const struct write_range *w = &p.r[k];
		if (w->start >= w->end || w->end > limit || (k && w->start < p.r[k - 1].end))
			fail("a range out of order, empty or past the limit", w->start, w->end);
		for (int m = 0; m < p.nsupers; m++)
			if (w->start < p.supers[m] + BTRFS_SUPER_INFO_SIZE && w->end > p.supers[m])
				fail("a range overlaps a superblock copy", w->start, p.supers[m]);
		sum += w->end - w->start;
	}
	if (sum != p.bytes)
		fail("the ranges do not sum to bytes", sum, p.bytes);
	for (int m = 0; m < p.nsupers; m++)
		if (p.supers[m] + BTRFS_SUPER_INFO_SIZE > limit)
			fail("a superblock copy past the limit", p.supers[m], limit);
	/* every data byte below the limit is written: in a range, or a copy
	 * (a sweep from boundary to boundary) */
	size_t k = 0;
	for (size_t d = 0; d < n; d++) {
		u64 e = ranges[d].end < limit ? ranges[d].end : limit;
		for (u64 o = ranges[d].start; o < e;) {
			u64 next = 0;
			for (int m = 0; m < p.nsupers; m++)
				if (o >= p.supers[m] && o < p.supers[m] + BTRFS_SUPER_INFO_SIZE)
					next = p.supers[m] + BTRFS_SUPER_INFO_SIZE;
			while (!next && k < p.n && p.r[k].end <= o)
				k++;
			if (!next && k < p.n && p.r[k].start <= o)
				next = p.r[k].end;
			if (!next)
				fail("a data byte below the limit is not written", o, limit);
			o = next;
		}
	}
	write_plan_free(&p);
}

static struct write_range *ranges;
static size_t nranges, cap;

static void add(u64 s, u64 e)
{
	if (nranges && ranges[nranges - 1].end == s) {
		ranges[nranges - 1].end = e;
		return;
	}
	if (nranges == cap) {
		struct write_range *g = realloc(ranges, (cap ? cap * 2 : 64) * sizeof(*ranges));
		if (!g)
			abort();
		ranges = g;
		cap = cap ? cap * 2 : 64;
	}
	ranges[nranges++] = (struct write_range){s, e};
}

static void check_reach(u64 reach, const char *by, u64 total, const struct btrfs_chunk_map *chunks, size_t n)
{
	if (reach < total || !by)
		fail("the reach is below the superblock's total_bytes", reach, total);
	for (size_t i = 0; i < n; i++)
		for (int s = 0; s < chunks[i].num_stripes && s < 2; s++)
			if (reach < chunks[i].stripes[s].physical)
				fail("a chunk stripe starts past the reach", chunks[i].stripes[s].physical, reach);
}

static void image(const uint8_t *data, size_t size)
{
	struct btrfs_fs_info *fs = fuzz_open(data, size);
	if (!fs)
		return;
	u64 reach;
	const char *by;
	struct blab_err err = {0};
	if (!write_plan_reach(fs, &reach, &by, &err)) {
		check_reach(reach, by, btrfs_super_total_bytes(fs->super), fs->chunks, fs->nchunks);
		nranges = 0;
		const u8 *pg;
		for (u64 i = 0; device_next_page(&fs->dev, &i, &pg) > 0; i++)
			add(i << DEVICE_PAGE_SHIFT, (i + 1) << DEVICE_PAGE_SHIFT);
		plan_and_check(ranges, nranges, fs->dev.size < reach ? fs->dev.size : reach);
	}
	btrfs_fs_free(fs);
}

static u64 field(const uint8_t *data, size_t size, size_t *at, int bytes)
{
	u64 v = 0;
	for (int i = 0; i < bytes; i++)
		v |= (u64)(*at + (size_t)i < size ? data[*at + (size_t)i] : 0) << (8 * i);
	*at += (size_t)bytes;
	return v;
}

static void raw(const uint8_t *data, size_t size)
{
	size_t at = 0;
	u64 total = field(data, size, &at, 8), dev_total = field(data, size, &at, 8), file = field(data, size, &at, 8);
	size_t nchunks = (size_t)field(data, size, &at, 1) % 65;
	struct btrfs_chunk_map chunks[64];
	memset(chunks, 0, sizeof(chunks));
	for (size_t i = 0; i < nchunks; i++) {
		chunks[i].logical = field(data, size, &at, 8);
		chunks[i].length = field(data, size, &at, 8);
		chunks[i].type = field(data, size, &at, 8);
		chunks[i].num_stripes = (u16)field(data, size, &at, 1);
		chunks[i].sub_stripes = (u16)field(data, size, &at, 1);
		chunks[i].stripes[0].physical = field(data, size, &at, 8);
		chunks[i].stripes[1].physical = field(data, size, &at, 8);
	}
	u64 reach;
	const char *by;
	write_plan_reach_maps(total, dev_total, chunks, nchunks, &reach, &by);
	check_reach(reach, by, total, chunks, nchunks);
	nranges = 0;
	u64 pos = 0;
	while (at < size) {
		u64 gap = field(data, size, &at, 2) << 12, len = field(data, size, &at, 2) << 12;
		if (!len)
			continue;
		add(pos + gap, pos + gap + len);
		pos += gap + len;
	}
	plan_and_check(ranges, nranges, file < reach ? file : reach);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 4 && !memcmp(data, "BLFZ", 4))
		image(data, size);
	else
		raw(data, size);
	return 0;
}
