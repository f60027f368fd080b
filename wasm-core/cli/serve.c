/* serve.c — `btrfslab serve`: the companion the page asks the kernel through.
 *
 * A small HTTP/1.1 server on 127.0.0.1 only. It prints a URL to open: the
 * app's, with the companion's address and a random token in the fragment
 * (never sent in a Referer). Every request must come with a Host of
 * 127.0.0.1:PORT or localhost:PORT (DNS rebinding), an Origin that is the
 * app's (or one given with --origin), and `Authorization: Bearer TOKEN`
 * (compared in constant time); CORS preflights from an allowed origin are
 * answered without the token.
 *
 *   GET  /v1/hello   {"version", "kernel", "root"}
 *   POST /v1/kernel  the body is an image; the answer is `btrfslab kernel
 *                    --json` of it (run as a child in its own process group,
 *                    with a time limit), from a file in the companion's own
 *                    private directory, removed after. With Content-Type
 *                    application/x-btrfslab-sparse the body is the image's
 *                    written ranges only (the page's image is hundreds of MiB
 *                    of zeros, more than a browser will keep as one upload):
 *
 *                      "BLSPARS1"  u64 image size   (little-endian)
 *                      then, to the body's end: u64 offset, u64 length, the
 *                      bytes; offsets increasing, ranges apart, inside the size
 *
 *                    expanded into a sparse file, every record checked first
 *                    (400 naming the record, nothing run).
 *
 * One job at a time: a POST while another is being received or run gets 429.
 * A body over --max-body gets 413 from its Content-Length, unread; none
 * gets 411; headers over 16 KiB get 431. No path, device or option comes from
 * a request: the only device touched is the loop device the `kernel` child
 * makes for itself, and it always removes it. */
#define _GNU_SOURCE
#include "serve.h"
#include "../src/wallclock.h"
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONN 16
#define MAX_HEADER (16 * 1024)
#define MAX_ORIGINS 8
#define MAX_ANSWER (64u << 20)

static volatile sig_atomic_t stop_signal;
static void on_signal(int sig) { stop_signal = sig; }

struct conn {
	int fd;
	char head[MAX_HEADER + 1];
	size_t hlen;
	int job;            /* this connection is the job: receiving its body */
	unsigned long long body_left;
	int file;           /* the body's file */
	int sparse;         /* the body is the sparse form, expanded before the job */
	char origin[256];   /* the allowed origin it came from */
};

struct server {
	int port;
	char token[65];
	char app[512];
	char origins[MAX_ORIGINS][256];
	int norigins;
	unsigned long long max_body;
	int timeout;
	char dir[64];
	char job_path[128];
	char body_path[128]; /* a sparse body, before it is expanded into job_path */
	unsigned long long max_image; /* a sparse body's image size at most */
	struct conn c[MAX_CONN];
	/* the running child */
	pid_t child;
	int child_out;
	int child_conn; /* the connection waiting for it (an index into c) */
	char *answer;
	size_t alen;
	double started;
	int killed;
};

static const char *status_text(int s)
{
	switch (s) {
	case 200: return "OK";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 411: return "Length Required";
	case 413: return "Payload Too Large";
	case 421: return "Misdirected Request";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 504: return "Gateway Timeout";
	default: return "Error";
	}
}

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w <= 0) {
			if (w < 0 && errno == EINTR)
				continue;
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

static void close_conn(struct server *s, int i)
{
	struct conn *c = &s->c[i];
	if (c->fd >= 0)
		close(c->fd);
	if (c->file >= 0)
		close(c->file);
	if (c->job) {
		unlink(s->job_path);
		unlink(s->body_path);
	}
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->file = -1;
}

/* Answers connection i and closes it. extra: more header lines ("Name: value\r\n"). */
static void reply(struct server *s, int i, int status, const char *extra, const char *body, size_t blen)
{
	struct conn *c = &s->c[i];
	char h[2048];
	int n = snprintf(h, sizeof(h),
			 "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\nConnection: close\r\n"
			 "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n%s%s%s%s\r\n",
			 status, status_text(status), blen, c->origin[0] ? "Access-Control-Allow-Origin: " : "", c->origin,
			 c->origin[0] ? "\r\nVary: Origin\r\n" : "", extra ? extra : "");
	send_all(c->fd, h, (size_t)n);
	send_all(c->fd, body, blen);
	shutdown(c->fd, SHUT_WR);
	close_conn(s, i);
}

static void reply_error(struct server *s, int i, int status, const char *why)
{
	char b[600];
	int n = snprintf(b, sizeof(b), "{\"error\":\"%s\"}", why);
	reply(s, i, status, status == 429 ? "Retry-After: 5\r\n" : NULL, b, (size_t)n);
}

/* The value of header name in the request head (a NUL-ended copy in out), or NULL. */
static const char *header(const char *head, const char *name, char *out, size_t n)
{
	size_t nl = strlen(name);
	for (const char *p = strstr(head, "\r\n"); p && p[2] && !(p[2] == '\r' && p[3] == '\n'); p = strstr(p + 2, "\r\n")) {
		const char *l = p + 2;
		if (!strncasecmp(l, name, nl) && l[nl] == ':') {
			const char *v = l + nl + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			const char *e = strstr(v, "\r\n");
			size_t len = e ? (size_t)(e - v) : strlen(v);
			while (len && (v[len - 1] == ' ' || v[len - 1] == '\t'))
				len--;
			if (len >= n)
				len = n - 1;
			memcpy(out, v, len);
			out[len] = 0;
			return out;
		}
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

static void start_child(struct server *s, int i)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC)) {
		reply_error(s, i, 500, "pipe failed");
		return;
	}
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		reply_error(s, i, 500, "fork failed");
		return;
	}
	if (pid == 0) {
		setpgid(0, 0);
		dup2(p[1], 1);
		int nul = open("/dev/null", O_RDWR);
		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 2);
		}
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execl("/proc/self/exe", "btrfslab", "kernel", "--json", s->job_path, (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	close(p[1]);
	s->child = pid;
	s->child_out = p[0];
	s->child_conn = i;
	s->answer = NULL;
	s->alen = 0;
	s->started = wallclock_s();
	s->killed = 0;
}

static void finish_child(struct server *s)
{
	int status = 0;
	while (waitpid(s->child, &status, 0) < 0 && errno == EINTR)
		;
	close(s->child_out);
	int i = s->child_conn;
	if (s->killed)
		reply_error(s, i, 504, "the kernel job ran out of time and was stopped (its mount and loop device are removed)");
	else if (s->alen && s->answer[0] == '{')
		reply(s, i, 200, NULL, s->answer, s->alen);
	else
		reply_error(s, i, 500, WIFEXITED(status) && WEXITSTATUS(status) == 1 ? "btrfslab kernel failed: is the companion running as root?"
										: "btrfslab kernel gave no answer");
	free(s->answer);
	s->answer = NULL;
	s->child = 0;
	s->child_out = -1;
	unlink(s->job_path);
}

static unsigned long long get_le64(const unsigned char *p)
{
	unsigned long long v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The sparse body at body, expanded into a new file at out (sparse: only the
 * records' bytes written). 0, or -1 with why filled and out removed. Every
 * record is bounded by the body's own size, so the walk ends. */
static int sparse_expand(const char *body, const char *out, unsigned long long max_image, char *why, size_t wn)
{
	int in = open(body, O_RDONLY | O_CLOEXEC), fd = -1;
	unsigned char h[16];
	struct stat st;
	unsigned long long size, pos = 16, prev_end = 0, rec = 0;
	static char buf[1 << 20];
	if (in < 0 || fstat(in, &st)) {
		snprintf(why, wn, "the sparse body could not be read back");
		goto fail;
	}
	if (st.st_size < 16 || pread(in, h, 16, 0) != 16 || memcmp(h, "BLSPARS1", 8)) {
		snprintf(why, wn, "not a sparse image: the body does not begin with BLSPARS1 and the image size");
		goto fail;
	}
	size = get_le64(h + 8);
	if (size == 0 || size > max_image) {
		snprintf(why, wn, "the sparse image's size %llu is %s", size, size ? "over the companion's limit (64 GiB)" : "zero");
		goto fail;
	}
	fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)size)) {
		snprintf(why, wn, "the job file could not be made");
		goto fail;
	}
	while (pos < (unsigned long long)st.st_size) {
		rec++;
		if ((unsigned long long)st.st_size - pos < 16 || pread(in, h, 16, (off_t)pos) != 16) {
			snprintf(why, wn, "sparse record %llu (body byte %llu): its offset and length are cut short", rec, pos);
			goto fail;
		}
		unsigned long long off = get_le64(h), len = get_le64(h + 8);
		pos += 16;
		if (len == 0 || off < prev_end || off > size || len > size - off) {
			snprintf(why, wn, "sparse record %llu (body byte %llu): offset %llu length %llu %s", rec, pos - 16, off, len,
				 len == 0 ? "is empty" : off < prev_end ? "overlaps or comes before the record ahead of it" : "runs past the image's size");
			goto fail;
		}
		if (len > (unsigned long long)st.st_size - pos) {
			snprintf(why, wn, "sparse record %llu (body byte %llu): its %llu bytes are cut short by the body's end", rec, pos - 16, len);
			goto fail;
		}
		for (unsigned long long done = 0; done < len;) {
			size_t n = len - done < sizeof(buf) ? (size_t)(len - done) : sizeof(buf);
			if (pread(in, buf, n, (off_t)(pos + done)) != (ssize_t)n || pwrite(fd, buf, n, (off_t)(off + done)) != (ssize_t)n) {
				snprintf(why, wn, "writing the job file failed");
				goto fail;
			}
			done += n;
		}
		pos += len;
		prev_end = off + len;
	}
	close(in);
	if (close(fd)) {
		unlink(out);
		snprintf(why, wn, "writing the job file failed");
		return -1;
	}
	return 0;
fail:
	if (in >= 0)
		close(in);
	if (fd >= 0) {
		close(fd);
		unlink(out);
	}
	return -1;
}

/* The body of connection i is whole: expanded if sparse, then the job runs. */
static void body_done(struct server *s, int i)
{
	struct conn *c = &s->c[i];
	close(c->file);
	c->file = -1;
	if (c->sparse) {
		char why[300];
		int r = sparse_expand(s->body_path, s->job_path, s->max_image, why, sizeof(why));
		unlink(s->body_path);
		if (r)
			return reply_error(s, i, 400, why);
	}
	start_child(s, i);
}

/* A whole request head in connection i: checked and answered, or made the job. */
static void on_request(struct server *s, int i)
{
	struct conn *c = &s->c[i];
	char method[16], path[256], v[512];
	if (sscanf(c->head, "%15s %255s HTTP/1.%*c", method, path) != 2)
		return reply_error(s, i, 400, "not an HTTP request");
	char host1[64], host2[64];
	snprintf(host1, sizeof(host1), "127.0.0.1:%d", s->port);
	snprintf(host2, sizeof(host2), "localhost:%d", s->port);
	if (!header(c->head, "Host", v, sizeof(v)) || (strcmp(v, host1) && strcmp(v, host2)))
		return reply_error(s, i, 403, "wrong Host: the companion answers 127.0.0.1 only");
	if (!header(c->head, "Origin", v, sizeof(v)))
		return reply_error(s, i, 403, "no Origin: only the app's pages may ask");
	int allowed = 0;
	for (int k = 0; k < s->norigins && !allowed; k++)
		allowed = !strcmp(v, s->origins[k]);
	if (!allowed)
		return reply_error(s, i, 403, "this Origin may not ask the companion");
	snprintf(c->origin, sizeof(c->origin), "%s", v);
	if (!strcmp(method, "OPTIONS"))
		return reply(s, i, 204,
			     "Access-Control-Allow-Methods: GET, POST\r\nAccess-Control-Allow-Headers: Authorization, Content-Type\r\n"
			     "Access-Control-Max-Age: 600\r\nAccess-Control-Allow-Private-Network: true\r\n",
			     "", 0);
	char want[80];
	snprintf(want, sizeof(want), "Bearer %s", s->token);
	if (!header(c->head, "Authorization", v, sizeof(v)) || !same_token(v, want))
		return reply_error(s, i, 401, "a wrong or missing token: open the URL the companion printed");
	if (!strcmp(path, "/v1/hello")) {
		if (strcmp(method, "GET"))
			return reply_error(s, i, 405, "GET only");
		struct utsname u;
		uname(&u);
		char b[400];
		int n = snprintf(b, sizeof(b), "{\"version\":\"btrfslab serve 1\",\"kernel\":\"%s\",\"root\":%s,\"busy\":%s}", u.release,
				 geteuid() == 0 ? "true" : "false", s->child || access(s->job_path, F_OK) == 0 || access(s->body_path, F_OK) == 0 ? "true" : "false");
		return reply(s, i, 200, NULL, b, (size_t)n);
	}
	if (strcmp(path, "/v1/kernel"))
		return reply_error(s, i, 404, "no such endpoint (GET /v1/hello, POST /v1/kernel)");
	if (strcmp(method, "POST"))
		return reply_error(s, i, 405, "POST only");
	if (!header(c->head, "Content-Length", v, sizeof(v)))
		return reply_error(s, i, 411, "Content-Length required");
	char *end;
	errno = 0;
	unsigned long long len = strtoull(v, &end, 10);
	if (errno || *end || !isdigit((unsigned char)v[0]))
		return reply_error(s, i, 400, "a bad Content-Length");
	if (len > s->max_body)
		return reply_error(s, i, 413, "the image is larger than the companion accepts (--max-body)");
	if (len == 0)
		return reply_error(s, i, 400, "no image in the body");
	for (int k = 0; k < MAX_CONN; k++)
		if (s->c[k].job)
			return reply_error(s, i, 429, "another job is running: one at a time");
	if (s->child)
		return reply_error(s, i, 429, "another job is running: one at a time");
	c->sparse = header(c->head, "Content-Type", v, sizeof(v)) && !strcasecmp(v, "application/x-btrfslab-sparse");
	c->file = open(c->sparse ? s->body_path : s->job_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (c->file < 0)
		return reply_error(s, i, 500, "the job file could not be made");
	c->job = 1;
	c->body_left = len;
	/* what followed the head in the buffer is body */
	char *b = strstr(c->head, "\r\n\r\n") + 4;
	size_t have = c->hlen - (size_t)(b - c->head);
	if (have > c->body_left)
		have = (size_t)c->body_left;
	if (have && write(c->file, b, have) != (ssize_t)have)
		return reply_error(s, i, 500, "writing the job file failed");
	c->body_left -= have;
	if (!c->body_left)
		body_done(s, i);
}

static void on_readable(struct server *s, int i)
{
	struct conn *c = &s->c[i];
	if (c->job && c->file >= 0) {
		static char buf[1 << 16];
		size_t want = c->body_left < sizeof(buf) ? (size_t)c->body_left : sizeof(buf);
		ssize_t r = recv(c->fd, buf, want, 0);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				return;
			close_conn(s, i); /* the client went away mid-body: the job is dropped */
			return;
		}
		if (write(c->file, buf, (size_t)r) != r)
			return reply_error(s, i, 500, "writing the job file failed");
		c->body_left -= (unsigned long long)r;
		if (!c->body_left)
			body_done(s, i);
		return;
	}
	if (c->job)
		return; /* waiting for its child */
	ssize_t r = recv(c->fd, c->head + c->hlen, MAX_HEADER - c->hlen, 0);
	if (r <= 0) {
		if (r < 0 && errno == EINTR)
			return;
		close_conn(s, i);
		return;
	}
	c->hlen += (size_t)r;
	c->head[c->hlen] = 0;
	if (strstr(c->head, "\r\n\r\n"))
		on_request(s, i);
	else if (c->hlen >= MAX_HEADER)
		reply_error(s, i, 431, "request headers over 16 KiB");
}

int cmd_serve(int argc, char **argv, int variant)
{
	(void)variant;
	static struct server s;
	memset(&s, 0, sizeof(s));
	s.port = 7318;
	s.max_body = 2ULL << 30;
	s.timeout = 120;
	snprintf(s.app, sizeof(s.app), "http://127.0.0.1:5173");
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (i + 1 >= argc)
			return fprintf(stderr, "btrfslab serve: %s: unknown option, or it needs a value\n", a), 2;
		const char *v = argv[++i];
		char *end;
		if (!strcmp(a, "--port")) {
			long p = strtol(v, &end, 10);
			if (*end || p < 0 || p > 65535)
				return fprintf(stderr, "btrfslab serve: --port: '%s' is not a port\n", v), 2;
			s.port = (int)p;
		} else if (!strcmp(a, "--app")) {
			snprintf(s.app, sizeof(s.app), "%s", v);
		} else if (!strcmp(a, "--origin")) {
			if (s.norigins + 1 >= MAX_ORIGINS)
				return fprintf(stderr, "btrfslab serve: at most %d --origin\n", MAX_ORIGINS - 1), 2;
			snprintf(s.origins[1 + s.norigins++], sizeof(s.origins[0]), "%s", v);
		} else if (!strcmp(a, "--max-body")) {
			unsigned long long m = strtoull(v, &end, 10);
			int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
			if (end == v || (*end && (shift == 0 || end[1])))
				return fprintf(stderr, "btrfslab serve: --max-body: '%s' is not a size\n", v), 2;
			s.max_body = m << shift;
		} else if (!strcmp(a, "--timeout")) {
			long t = strtol(v, &end, 10);
			if (*end || t <= 0)
				return fprintf(stderr, "btrfslab serve: --timeout: '%s' is not a number of seconds\n", v), 2;
			s.timeout = (int)t;
		} else {
			return fprintf(stderr, "btrfslab serve: unknown option '%s'\n", a), 2;
		}
	}
	/* the app's origin: scheme://host[:port] of --app */
	{
		const char *p = strstr(s.app, "://");
		const char *e = p ? strchr(p + 3, '/') : NULL;
		size_t n = e ? (size_t)(e - s.app) : strlen(s.app);
		if (!p || n >= sizeof(s.origins[0]))
			return fprintf(stderr, "btrfslab serve: --app: '%s' is not a URL\n", s.app), 2;
		memcpy(s.origins[0], s.app, n);
		s.origins[0][n] = 0;
		s.norigins++;
	}
	unsigned char rnd[32];
	int ufd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (ufd < 0 || read(ufd, rnd, sizeof(rnd)) != (ssize_t)sizeof(rnd))
		return fprintf(stderr, "btrfslab serve: no randomness for a token\n"), 1;
	close(ufd);
	for (int i = 0; i < 32; i++)
		snprintf(s.token + 2 * i, 3, "%02x", rnd[i]);
	snprintf(s.dir, sizeof(s.dir), "/tmp/btrfslab-serve-XXXXXX");
	if (!mkdtemp(s.dir))
		return fprintf(stderr, "btrfslab serve: a private directory: %s\n", strerror(errno)), 1;
	snprintf(s.job_path, sizeof(s.job_path), "%s/job.img", s.dir);
	snprintf(s.body_path, sizeof(s.body_path), "%s/job.sparse", s.dir);
	s.max_image = 64ULL << 30;

	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)s.port)};
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) || listen(lfd, 16)) {
		fprintf(stderr, "btrfslab serve: 127.0.0.1:%d: %s\n", s.port, strerror(errno));
		rmdir(s.dir);
		return 1;
	}
	socklen_t al = sizeof(addr);
	getsockname(lfd, (struct sockaddr *)&addr, &al);
	s.port = ntohs(addr.sin_port);
	printf("btrfslab serve: listening on http://127.0.0.1:%d\n", s.port);
	printf("open: %s/#companion=http://127.0.0.1:%d&token=%s\n", s.origins[0], s.port, s.token);
	if (geteuid() != 0)
		printf("note: not root: the kernel jobs will fail (they attach a loop device and mount)\n");
	fflush(stdout);

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	for (int i = 0; i < MAX_CONN; i++) {
		s.c[i].fd = -1;
		s.c[i].file = -1;
	}
	s.child_out = -1;
	while (!stop_signal) {
		struct pollfd pf[MAX_CONN + 2];
		int map[MAX_CONN + 2], n = 0;
		pf[n] = (struct pollfd){lfd, POLLIN, 0};
		map[n++] = -1;
		if (s.child) {
			pf[n] = (struct pollfd){s.child_out, POLLIN, 0};
			map[n++] = -2;
		}
		for (int i = 0; i < MAX_CONN; i++)
			if (s.c[i].fd >= 0 && !(s.c[i].job && s.c[i].file < 0)) {
				pf[n] = (struct pollfd){s.c[i].fd, POLLIN, 0};
				map[n++] = i;
			}
		int r = poll(pf, (nfds_t)n, 500);
		if (s.child && !s.killed && wallclock_s() - s.started > s.timeout) {
			kill(-s.child, SIGTERM); /* the kernel child cleans up its mount and loop device on SIGTERM */
			s.killed = 1;
		}
		if (s.child && s.killed && wallclock_s() - s.started > s.timeout + 10)
			kill(-s.child, SIGKILL);
		if (r <= 0)
			continue;
		for (int k = 0; k < n; k++) {
			if (!pf[k].revents)
				continue;
			if (map[k] == -1) {
				int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
				if (cfd < 0)
					continue;
				int slot = -1;
				for (int i = 0; i < MAX_CONN && slot < 0; i++)
					if (s.c[i].fd < 0)
						slot = i;
				if (slot < 0) {
					static const char busy[] = "HTTP/1.1 429 Too Many Requests\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
					send_all(cfd, busy, sizeof(busy) - 1);
					close(cfd);
					continue;
				}
				memset(&s.c[slot], 0, sizeof(s.c[slot]));
				s.c[slot].fd = cfd;
				s.c[slot].file = -1;
			} else if (map[k] == -2) {
				char buf[1 << 16];
				ssize_t got = read(s.child_out, buf, sizeof(buf));
				if (got > 0) {
					if (s.alen + (size_t)got <= MAX_ANSWER) {
						char *a = realloc(s.answer, s.alen + (size_t)got + 1);
						if (a) {
							memcpy(a + s.alen, buf, (size_t)got);
							s.alen += (size_t)got;
							a[s.alen] = 0;
							s.answer = a;
						}
					}
				} else if (got == 0 || errno != EINTR) {
					finish_child(&s);
				}
			} else if (s.c[map[k]].fd >= 0) {
				on_readable(&s, map[k]);
			}
		}
	}
	if (s.child) {
		kill(-s.child, SIGTERM);
		for (int i = 0; i < 100 && waitpid(s.child, NULL, WNOHANG) == 0; i++)
			usleep(100000);
		kill(-s.child, SIGKILL);
		waitpid(s.child, NULL, 0);
	}
	for (int i = 0; i < MAX_CONN; i++)
		if (s.c[i].fd >= 0)
			close_conn(&s, i);
	unlink(s.job_path);
	unlink(s.body_path);
	rmdir(s.dir);
	close(lfd);
	fprintf(stderr, "btrfslab serve: stopped (signal %d)\n", (int)stop_signal);
	return 0;
}
