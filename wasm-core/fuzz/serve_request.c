/* The companion's request parsing (cli/serve-request.c), as `btrfslab serve`
 * runs it on what a client sends: every input is taken both as a request
 * head and as a sparse body. What must hold, or the target aborts: a head
 * is either not whole yet (no blank line, under 16 KiB) or answered with a
 * 4xx naming why, or routed with an allowed origin and, for a job, a length
 * in 1..--max-body; a sparse body either expands into an image of the size
 * it names holding every record's bytes at its offset, or is refused with a
 * reason. */
#define _GNU_SOURCE
#include "../cli/serve-request.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define TOKEN "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define MAX_IMAGE (64ull << 20)

static void fail(const char *what)
{
	fprintf(stderr, "serve_request: %s\n", what);
	abort();
}

static unsigned long long le64(const uint8_t *p)
{
	unsigned long long v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void head(const uint8_t *data, size_t size)
{
	static const char origins[2][256] = {"http://127.0.0.1:5173", "http://localhost:5173"};
	struct serve_policy pol = {7318, TOKEN, origins, 2, 1ull << 30};
	char *buf = malloc(size + 1);
	if (!buf)
		abort();
	memcpy(buf, data, size);
	buf[size] = 0;
	struct serve_request rq;
	int whole = memmem(buf, size, "\r\n\r\n", 4) != NULL;
	if (!serve_parse_request(buf, size, &pol, &rq)) {
		if (whole || size >= SERVE_MAX_HEADER)
			fail("a whole head, or one over the limit, was left unanswered");
	} else if (rq.route == SERVE_ERROR) {
		if (rq.status < 400 || rq.status > 499 || !rq.why || !rq.why[0])
			fail("an error without a 4xx status and a reason");
	} else {
		if (!whole || rq.head_len < 4 || rq.head_len > size || memcmp(buf + rq.head_len - 4, "\r\n\r\n", 4))
			fail("routed without a whole head");
		if (strcmp(rq.origin, origins[0]) && strcmp(rq.origin, origins[1]))
			fail("routed for an origin not allowed");
		if (rq.route == SERVE_KERNEL && (rq.length == 0 || rq.length > pol.max_body))
			fail("a job with a length outside 1..max_body");
		if (rq.route != SERVE_PREFLIGHT && !memmem(buf, rq.head_len, TOKEN, sizeof(TOKEN) - 1))
			fail("routed without the token");
	}
	free(buf);
}

static void body(const uint8_t *data, size_t size)
{
	static int in = -1, out = -1;
	if (in < 0 && ((in = memfd_create("body", MFD_CLOEXEC)) < 0 || (out = memfd_create("image", MFD_CLOEXEC)) < 0))
		abort();
	if (ftruncate(in, 0) || ftruncate(out, 0) || (size && pwrite(in, data, size, 0) != (ssize_t)size))
		abort();
	char why[300] = "";
	if (serve_sparse_expand(in, out, MAX_IMAGE, why, sizeof(why))) {
		if (!why[0])
			fail("a sparse body refused without a reason");
		return;
	}
	struct stat st;
	if (size < 16 || fstat(out, &st) || (unsigned long long)st.st_size != le64(data + 8) || le64(data + 8) > MAX_IMAGE)
		fail("the image is not the size the body names");
	/* taken, so well-formed: each record's bytes are in the image at its offset */
	static uint8_t back[1 << 16];
	for (size_t pos = 16; pos < size;) {
		unsigned long long off = le64(data + pos), len = le64(data + pos + 8);
		pos += 16;
		for (unsigned long long d = 0; d < len; d += sizeof(back)) {
			size_t n = len - d < sizeof(back) ? (size_t)(len - d) : sizeof(back);
			if (pread(out, back, n, (off_t)(off + d)) != (ssize_t)n || memcmp(back, data + pos + d, n))
				fail("a record's bytes are not in the image at its offset");
		}
		pos += len;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	head(data, size);
	body(data, size);
	return 0;
}
