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
 *                    expanded into a sparse file by a child process (the
 *                    event loop goes on answering meanwhile), every record
 *                    checked first (400 naming the record, nothing run).
 *
 * One job at a time: a POST while another is being received, expanded or
 * run gets 429. A body over --max-body gets 413 from its Content-Length,
 * unread; none gets 411; headers over 16 KiB get 431. Deadlines: a
 * connection's head must arrive within --header-timeout seconds of its
 * connect, a job's body within --body-timeout of its head (else 408, and
 * the job's slot is free again); the expansion and the kernel job together
 * within --timeout (else 504). A connection without a whole head holds no
 * job; when every connection slot is taken, the oldest of those still
 * waiting for a head is closed to make room, so idle sockets never lock
 * anyone out. The head is parsed by serve-request.c (pure functions, fuzzed).
 * No path, device or option comes from a request: the only device touched
 * is the loop device the `kernel` child makes for itself, and it always
 * removes it. */
#define _GNU_SOURCE
#include "serve.h"
#include "serve-request.h"
#include "../src/wallclock.h"
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONN 16
#define MAX_HEADER SERVE_MAX_HEADER
#define MAX_ORIGINS SERVE_MAX_ORIGINS
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
	double since;       /* when it connected (the oldest waiting for a head makes room) */
	double deadline;    /* its head, or its body, must have arrived by then */
};

struct server {
	int port;
	char token[65];
	char app[512];
	char origins[MAX_ORIGINS][256];
	int norigins;
	unsigned long long max_body;
	int timeout;
	double header_timeout, body_timeout; /* seconds */
	char dir[64];
	char job_path[128];
	char body_path[128]; /* a sparse body, before it is expanded into job_path */
	unsigned long long max_image; /* a sparse body's image size at most */
	struct conn c[MAX_CONN];
	/* the running child: the sparse body's expansion, then the kernel job */
	int expanding;
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
	case 408: return "Request Timeout";
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

/* In the child: the sparse body expanded into the job file; its error, if
 * any, written to out. Does not return. */
static void expand_in_child(struct server *s, int out)
{
	char why[300] = "";
	int in = open(s->body_path, O_RDONLY | O_CLOEXEC);
	int fd = open(s->job_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	int r = in < 0 || fd < 0 ? (snprintf(why, sizeof(why), "the job file could not be made"), -1)
				 : serve_sparse_expand(in, fd, s->max_image, why, sizeof(why));
	if (!r && close(fd))
		r = -1, snprintf(why, sizeof(why), "writing the job file failed");
	if (r && write(out, why, strlen(why)) < 0)
		_exit(2);
	_exit(r ? 1 : 0);
}

/* In the child: `btrfslab kernel --json` of the job file, its answer to out. */
static void kernel_in_child(struct server *s, int out)
{
	dup2(out, 1);
	int nul = open("/dev/null", O_RDWR);
	if (nul >= 0) {
		dup2(nul, 0);
		dup2(nul, 2);
	}
	execl("/proc/self/exe", "btrfslab", "kernel", "--json", s->job_path, (char *)NULL);
	_exit(127);
}

/* Starts the job's next child for connection i, in its own process group,
 * its stdout a pipe the event loop reads: the sparse body's expansion, or
 * the kernel job. */
static void start_child(struct server *s, int i, int expanding)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC))
		return reply_error(s, i, 500, "pipe failed");
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return reply_error(s, i, 500, "fork failed");
	}
	if (pid == 0) {
		setpgid(0, 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (expanding)
			expand_in_child(s, p[1]);
		kernel_in_child(s, p[1]);
	}
	setpgid(pid, pid);
	close(p[1]);
	s->expanding = expanding;
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
	if (s->expanding) {
		/* the expansion's end: on to the kernel job, or its record's error */
		s->expanding = 0;
		s->child = 0;
		s->child_out = -1;
		unlink(s->body_path);
		char why[300];
		snprintf(why, sizeof(why), "%.*s", (int)s->alen, s->answer ? s->answer : "");
		free(s->answer);
		s->answer = NULL;
		s->alen = 0;
		if (s->killed) {
			unlink(s->job_path);
			return reply_error(s, i, 504, "expanding the sparse body ran out of time and was stopped");
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			unlink(s->job_path);
			return reply_error(s, i, 400, why[0] ? why : "the sparse body could not be expanded");
		}
		double started = s->started;
		start_child(s, i, 0);
		s->started = started; /* --timeout covers the expansion and the job together */
		return;
	}
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

/* The body of connection i is whole: a sparse one is expanded by a child
 * process (its error, if any, on its stdout), then the job runs. */
static void body_done(struct server *s, int i)
{
	struct conn *c = &s->c[i];
	close(c->file);
	c->file = -1;
	start_child(s, i, c->sparse);
}

/* A whole request head in connection i: checked and answered, or made the job. */
static void on_request(struct server *s, int i, const struct serve_request *rq)
{
	struct conn *c = &s->c[i];
	snprintf(c->origin, sizeof(c->origin), "%s", rq->origin);
	switch (rq->route) {
	case SERVE_ERROR:
		return reply_error(s, i, rq->status, rq->why);
	case SERVE_PREFLIGHT:
		return reply(s, i, 204,
			     "Access-Control-Allow-Methods: GET, POST\r\nAccess-Control-Allow-Headers: Authorization, Content-Type\r\n"
			     "Access-Control-Max-Age: 600\r\nAccess-Control-Allow-Private-Network: true\r\n",
			     "", 0);
	case SERVE_HELLO: {
		struct utsname u;
		uname(&u);
		int receiving = 0;
		for (int k = 0; k < MAX_CONN; k++)
			receiving |= s->c[k].job && s->c[k].file >= 0;
		const char *job = s->expanding ? "expanding" : s->child ? "running" : receiving ? "receiving" : "none";
		char b[400];
		int n = snprintf(b, sizeof(b), "{\"version\":\"btrfslab serve 1\",\"kernel\":\"%s\",\"root\":%s,\"busy\":%s,\"job\":\"%s\"}",
				 u.release, geteuid() == 0 ? "true" : "false", strcmp(job, "none") ? "true" : "false", job);
		return reply(s, i, 200, NULL, b, (size_t)n);
	}
	case SERVE_KERNEL:
		break;
	}
	for (int k = 0; k < MAX_CONN; k++)
		if (s->c[k].job)
			return reply_error(s, i, 429, "another job is running: one at a time");
	if (s->child)
		return reply_error(s, i, 429, "another job is running: one at a time");
	c->sparse = rq->sparse;
	c->file = open(c->sparse ? s->body_path : s->job_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (c->file < 0)
		return reply_error(s, i, 500, "the job file could not be made");
	c->job = 1;
	c->body_left = rq->length;
	c->deadline = wallclock_s() + s->body_timeout;
	/* what followed the head in the buffer is body */
	const char *b = c->head + rq->head_len;
	size_t have = c->hlen - rq->head_len;
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
	struct serve_request rq;
	struct serve_policy pol = {s->port, s->token, (const char(*)[256])s->origins, s->norigins, s->max_body};
	if (serve_parse_request(c->head, c->hlen, &pol, &rq))
		on_request(s, i, &rq);
}

/* Connections past their deadline: a head that did not come (closed, with
 * 408), a body that did not (408, the job dropped: its slot is free). */
static void expire(struct server *s, double now)
{
	for (int i = 0; i < MAX_CONN; i++) {
		struct conn *c = &s->c[i];
		if (c->fd < 0 || (c->job && c->file < 0) || now < c->deadline)
			continue;
		if (c->job)
			reply_error(s, i, 408, "the body did not arrive within --body-timeout: the job is dropped");
		else
			reply_error(s, i, 408, "the request head did not arrive within --header-timeout");
	}
}

/* A seconds value of an option (decimals allowed), or -1. */
static double seconds_arg(const char *v)
{
	char *end;
	double t = strtod(v, &end);
	return end == v || *end || !(t > 0) || t > 1e6 ? -1 : t;
}

int cmd_serve(int argc, char **argv, int variant)
{
	(void)variant;
	static struct server s;
	memset(&s, 0, sizeof(s));
	s.port = 7318;
	s.max_body = 2ULL << 30;
	s.timeout = 120;
	s.header_timeout = 10;
	s.body_timeout = 120;
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
		} else if (!strcmp(a, "--header-timeout") || !strcmp(a, "--body-timeout")) {
			double t = seconds_arg(v);
			if (t < 0)
				return fprintf(stderr, "btrfslab serve: %s: '%s' is not a number of seconds\n", a, v), 2;
			*(a[2] == 'h' ? &s.header_timeout : &s.body_timeout) = t;
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
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) || listen(lfd, 128)) {
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
		/* wake for the nearest deadline, or in half a second (the job's time limit) */
		double now = wallclock_s(), wake = now + 0.5;
		for (int i = 0; i < MAX_CONN; i++)
			if (s.c[i].fd >= 0 && !(s.c[i].job && s.c[i].file < 0) && s.c[i].deadline < wake)
				wake = s.c[i].deadline;
		int r = poll(pf, (nfds_t)n, wake > now ? (int)((wake - now) * 1000) + 1 : 0);
		expire(&s, wallclock_s());
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
				if (slot < 0) { /* all taken: the oldest still waiting for its head makes room */
					for (int i = 0; i < MAX_CONN; i++)
						if (!s.c[i].job && (slot < 0 || s.c[i].since < s.c[slot].since))
							slot = i;
					if (slot >= 0)
						reply_error(&s, slot, 408, "closed to make room: the request head did not come");
				}
				if (slot < 0) {
					static const char busy[] = "HTTP/1.1 429 Too Many Requests\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
					send_all(cfd, busy, sizeof(busy) - 1);
					close(cfd);
					continue;
				}
				memset(&s.c[slot], 0, sizeof(s.c[slot]));
				s.c[slot].fd = cfd;
				s.c[slot].file = -1;
				s.c[slot].since = wallclock_s();
				s.c[slot].deadline = s.c[slot].since + s.header_timeout;
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
