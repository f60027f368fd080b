/* serve-request.h — what `btrfslab serve` makes of a request head and of a
 * sparse body: pure functions, no sockets and no server state (the fuzz
 * target fuzz/serve_request.c calls them as the server does). */
#ifndef BTRFSLAB_CLI_SERVE_REQUEST_H
#define BTRFSLAB_CLI_SERVE_REQUEST_H
#include <stddef.h>

#define SERVE_MAX_HEADER (16 * 1024)
#define SERVE_MAX_ORIGINS 8

/* What a request must match: the server's port (Host), token and origins. */
struct serve_policy {
	int port;
	const char *token;
	const char (*origins)[256];
	int norigins;
	unsigned long long max_body;
};

enum serve_route {
	SERVE_ERROR,     /* answer status with why */
	SERVE_PREFLIGHT, /* a CORS preflight from an allowed origin: 204 */
	SERVE_HELLO,     /* GET /v1/hello */
	SERVE_KERNEL,    /* POST /v1/kernel: a body of length bytes follows */
};

struct serve_request {
	enum serve_route route;
	int status;             /* SERVE_ERROR: the answer's status */
	const char *why;        /* SERVE_ERROR: what is wrong (a static string) */
	char origin[256];       /* the allowed origin it came from ("" before it is known) */
	unsigned long long length; /* SERVE_KERNEL: the body's length (1..max_body) */
	int sparse;             /* SERVE_KERNEL: Content-Type application/x-btrfslab-sparse */
	size_t head_len;        /* the head's bytes, its blank line included */
};

/* The head in buf[0..len) (what was received so far; buf[len] is a NUL).
 * Returns 0 while the head is not whole and len is under the limit (read
 * more), else 1 with req filled: routed, or an error to answer (431 for a
 * head over SERVE_MAX_HEADER, 400 for a malformed one, 403/401 for a
 * stranger, 404/405/411/413 ...). */
int serve_parse_request(const char *buf, size_t len, const struct serve_policy *pol, struct serve_request *req);

/* The sparse body on fd in ("BLSPARS1", u64 image size, then records of
 * u64 offset, u64 length and the bytes; see serve.c) expanded into the
 * empty file out (made the image's size; only the records' bytes written,
 * the rest left holes). Every record is checked before its bytes are
 * written and bounded by the body's size, so the walk ends. 0, or -1 with
 * why naming the record (out then holds part of it: the caller removes it). */
int serve_sparse_expand(int in, int out, unsigned long long max_image, char *why, size_t wn);
#endif
