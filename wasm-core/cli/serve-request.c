/* serve-request.c — a request head and a sparse body, parsed (see serve-request.h). */
#define _GNU_SOURCE
#include "serve-request.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* The value of header name in head[0..len) (a NUL-ended copy in out), or
 * NULL. The head holds no NUL (serve_parse_request refuses one), ends with
 * its blank line; lines end with CRLF. */
static const char *header(const char *head, size_t len, const char *name, char *out, size_t n)
{
	size_t nl = strlen(name);
	const char *end = head + len;
	const char *p = memmem(head, len, "\r\n", 2);
	while (p && p + 2 < end && !(p[2] == '\r' && p + 3 < end && p[3] == '\n')) {
		const char *l = p + 2;
		const char *e = memmem(l, (size_t)(end - l), "\r\n", 2);
		if (!e)
			break;
		if ((size_t)(e - l) > nl && !strncasecmp(l, name, nl) && l[nl] == ':') {
			const char *v = l + nl + 1;
			while (v < e && (*v == ' ' || *v == '\t'))
				v++;
			size_t vl = (size_t)(e - v);
			while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
				vl--;
			if (vl >= n)
				vl = n - 1;
			memcpy(out, v, vl);
			out[vl] = 0;
			return out;
		}
		p = e;
	}
	return NULL;
}

static int same_token(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned diff = (unsigned)(la ^ lb);
	for (size_t i = 0; i < lb; i++)
		diff |= (unsigned)(unsigned char)(i < la ? a[i] : 0) ^ (unsigned char)b[i];
	return diff == 0;
}

static int fail(struct serve_request *r, int status, const char *why)
{
	r->route = SERVE_ERROR;
	r->status = status;
	r->why = why;
	return 1;
}

int serve_parse_request(const char *buf, size_t len, const struct serve_policy *pol, struct serve_request *req)
{
	memset(req, 0, sizeof(*req));
	const char *blank = memmem(buf, len, "\r\n\r\n", 4);
	if (!blank)
		return len >= SERVE_MAX_HEADER ? fail(req, 431, "request headers over 16 KiB") : 0;
	size_t hl = (size_t)(blank - buf) + 4;
	req->head_len = hl;
	if (hl > SERVE_MAX_HEADER)
		return fail(req, 431, "request headers over 16 KiB");
	if (memchr(buf, 0, hl))
		return fail(req, 400, "a NUL byte in the request head");
	/* the request line: METHOD SP PATH SP HTTP/1.x */
	char method[16], path[256], v[512];
	const char *eol = memmem(buf, hl, "\r\n", 2), *sp1 = memchr(buf, ' ', (size_t)(eol - buf));
	const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
	if (!sp2 || sp1 == buf || (size_t)(sp1 - buf) >= sizeof(method) || sp2 == sp1 + 1 || (size_t)(sp2 - sp1 - 1) >= sizeof(path) ||
	    eol - sp2 - 1 != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) || !isdigit((unsigned char)sp2[8]))
		return fail(req, 400, "not an HTTP request");
	memcpy(method, buf, (size_t)(sp1 - buf));
	method[sp1 - buf] = 0;
	memcpy(path, sp1 + 1, (size_t)(sp2 - sp1 - 1));
	path[sp2 - sp1 - 1] = 0;
	char host1[64], host2[64];
	snprintf(host1, sizeof(host1), "127.0.0.1:%d", pol->port);
	snprintf(host2, sizeof(host2), "localhost:%d", pol->port);
	if (!header(buf, hl, "Host", v, sizeof(v)) || (strcmp(v, host1) && strcmp(v, host2)))
		return fail(req, 403, "wrong Host: the companion answers 127.0.0.1 only");
	if (!header(buf, hl, "Origin", v, sizeof(v)))
		return fail(req, 403, "no Origin: only the app's pages may ask");
	int allowed = 0;
	for (int k = 0; k < pol->norigins && !allowed; k++)
		allowed = !strcmp(v, pol->origins[k]);
	if (!allowed)
		return fail(req, 403, "this Origin may not ask the companion");
	snprintf(req->origin, sizeof(req->origin), "%s", v);
	if (!strcmp(method, "OPTIONS")) {
		req->route = SERVE_PREFLIGHT;
		return 1;
	}
	char want[80];
	snprintf(want, sizeof(want), "Bearer %s", pol->token);
	if (!header(buf, hl, "Authorization", v, sizeof(v)) || !same_token(v, want))
		return fail(req, 401, "a wrong or missing token: open the URL the companion printed");
	if (!strcmp(path, "/v1/hello")) {
		if (strcmp(method, "GET"))
			return fail(req, 405, "GET only");
		req->route = SERVE_HELLO;
		return 1;
	}
	if (strcmp(path, "/v1/kernel"))
		return fail(req, 404, "no such endpoint (GET /v1/hello, POST /v1/kernel)");
	if (strcmp(method, "POST"))
		return fail(req, 405, "POST only");
	if (!header(buf, hl, "Content-Length", v, sizeof(v)))
		return fail(req, 411, "Content-Length required");
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (errno || *end || !isdigit((unsigned char)v[0]))
		return fail(req, 400, "a bad Content-Length");
	if (n > pol->max_body)
		return fail(req, 413, "the image is larger than the companion accepts (--max-body)");
	if (n == 0)
		return fail(req, 400, "no image in the body");
	req->route = SERVE_KERNEL;
	req->length = n;
	req->sparse = header(buf, hl, "Content-Type", v, sizeof(v)) && !strcasecmp(v, "application/x-btrfslab-sparse");
	return 1;
}

static unsigned long long le64(const unsigned char *p)
{
	unsigned long long v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

int serve_sparse_expand(int in, int fd, unsigned long long max_image, char *why, size_t wn)
{
	unsigned char h[16];
	struct stat st;
	unsigned long long size, pos = 16, prev_end = 0, rec = 0;
	static char buf[1 << 20];
	if (fstat(in, &st))
		return snprintf(why, wn, "the sparse body could not be read back"), -1;
	if (st.st_size < 16 || pread(in, h, 16, 0) != 16 || memcmp(h, "BLSPARS1", 8))
		return snprintf(why, wn, "not a sparse image: the body does not begin with BLSPARS1 and the image size"), -1;
	size = le64(h + 8);
	if (size == 0 || size > max_image)
		return snprintf(why, wn, "the sparse image's size %llu is %s", size, size ? "over the companion's limit (64 GiB)" : "zero"), -1;
	if (ftruncate(fd, (off_t)size))
		return snprintf(why, wn, "the job file could not be made"), -1;
	while (pos < (unsigned long long)st.st_size) {
		rec++;
		if ((unsigned long long)st.st_size - pos < 16 || pread(in, h, 16, (off_t)pos) != 16)
			return snprintf(why, wn, "sparse record %llu (body byte %llu): its offset and length are cut short", rec, pos), -1;
		unsigned long long off = le64(h), len = le64(h + 8);
		pos += 16;
		if (len == 0 || off < prev_end || off > size || len > size - off)
			return snprintf(why, wn, "sparse record %llu (body byte %llu): offset %llu length %llu %s", rec, pos - 16, off, len,
					len == 0 ? "is empty" : off < prev_end ? "overlaps or comes before the record ahead of it" : "runs past the image's size"), -1;
		if (len > (unsigned long long)st.st_size - pos)
			return snprintf(why, wn, "sparse record %llu (body byte %llu): its %llu bytes are cut short by the body's end", rec, pos - 16, len), -1;
		for (unsigned long long done = 0; done < len;) {
			size_t n = len - done < sizeof(buf) ? (size_t)(len - done) : sizeof(buf);
			if (pread(in, buf, n, (off_t)(pos + done)) != (ssize_t)n || pwrite(fd, buf, n, (off_t)(off + done)) != (ssize_t)n)
				return snprintf(why, wn, "writing the job file failed"), -1;
			done += n;
		}
		pos += len;
		prev_end = off + len;
	}
	return 0;
}
