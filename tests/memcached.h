/*
 * memcached.h: helpers for the system tests that run a real memcached
 * (tests/test_memcached*.c), on top of harness.h.
 *
 * A server is started on 127.0.0.1 on a port that was free a moment before,
 * in its own process group, tracked by the harness: h_cleanup() kills it
 * whatever the outcome, and mc_stop() stops it (SIGTERM) at the end of a test
 * that passed.  Readiness is a connection that gets a reply, polled with a
 * deadline; a breakpoint being armed is its byte in the target's code
 * (read through /proc/PID/mem), so no test sleeps to synchronise.
 */
#ifndef CCTRACE_TESTS_MEMCACHED_H
#define CCTRACE_TESTS_MEMCACHED_H

#include "harness.h"
#include "tracer/tracer.h" /* TRACER_BREAK_BYTE */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#define MC_DEBIAN "/usr/bin/memcached"
#define MC_LOAD	  "tests/fixtures/mcload"

struct mc {
	struct h_proc proc;
	int port;
};

/* A TCP port on 127.0.0.1 that nobody listens on right now. */
static inline int mc_free_port(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	cr_assert(fd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "bind: %s", strerror(errno));
	cr_assert(getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

/* A connected socket to 127.0.0.1:port, or -1. */
static inline int mc_dial(int port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static inline void mc_send(int fd, const char *req)
{
	size_t len = strlen(req);

	cr_assert_eq(send(fd, req, len, MSG_NOSIGNAL), (ssize_t)len, "send: %s", strerror(errno));
}

/* Reads from fd until the text ends with end (e.g. "END\r\n"); NULL on
 * timeout or end of file.  The string is the harness's. */
static inline char *mc_recv_until(int fd, const char *end, int timeout_ms)
{
	int64_t deadline = h_now_ms() + timeout_ms;
	char buf[8192];
	size_t got = 0, elen = strlen(end);

	while (got + 1 < sizeof(buf)) {
		struct pollfd pfd = {fd, POLLIN, 0};
		int64_t left = deadline - h_now_ms();
		ssize_t n;

		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			return NULL;
		n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0);
		if (n <= 0)
			return NULL;
		got += (size_t)n;
		buf[got] = 0;
		if (got >= elen && memcmp(buf + got - elen, end, elen) == 0)
			return h_fmt("%s", buf);
	}
	return NULL;
}

/* One request on a fresh connection; the reply up to end, or NULL. */
static inline char *mc_ask(int port, const char *req, const char *end)
{
	int fd = mc_dial(port);
	char *reply;

	if (fd < 0)
		return NULL;
	mc_send(fd, req);
	reply = mc_recv_until(fd, end, 5000);
	close(fd);
	return reply;
}

/* Starts bin on a free port with `threads` worker threads; returns once it
 * answers "version". */
static inline void mc_start(struct mc *m, const char *bin, int threads)
{
	char *port, *nthreads;
	int64_t deadline;

	cr_assert(access(bin, X_OK) == 0, "%s is not installed (make system-deps)", bin);
	m->port = mc_free_port();
	port = h_fmt("%d", m->port);
	nthreads = h_fmt("%d", threads);
	{
		/* -u root only matters when the tests run as root, where memcached
		 * refuses to start without it. */
		const char *argv[] = {bin,	"-l", "127.0.0.1", "-p", port, "-U", "0",    "-t",
				      nthreads, "-c", "256",	   "-m", "64", "-u", "root", NULL};

		m->proc = h_spawn(argv, false, false, true);
	}
	deadline = h_now_ms() + 10000;
	for (;;) {
		char *v = mc_ask(m->port, "version\r\n", "\r\n");

		if (v && strncmp(v, "VERSION ", 8) == 0)
			return;
		cr_assert(h_now_ms() < deadline, "%s did not answer on port %d", bin, m->port);
		cr_assert(waitpid(m->proc.pid, NULL, WNOHANG) == 0, "%s exited:\n%s", bin,
			  h_read_all(m->proc.err, 1));
		h_pace();
	}
}

/* Stops the server; it must still have been running. */
static inline void mc_stop(struct mc *m)
{
	int code;

	cr_expect_eq(waitpid(m->proc.pid, NULL, WNOHANG), 0, "memcached died during the test");
	kill(m->proc.pid, SIGTERM);
	code = h_wait(m->proc.pid, 10, NULL);
	cr_expect(code == 0 || code == 128 + SIGTERM, "memcached exited with %d", code);
	if (m->proc.err >= 0)
		close(m->proc.err);
	m->proc.err = -1;
}

/* The server serves n set/get rounds on one connection. */
static inline void mc_expect_serves(int port, int n, const char *when)
{
	int fd = mc_dial(port), i;

	cr_assert(fd >= 0, "%s: cannot connect to memcached", when);
	for (i = 0; i < n; i++) {
		char *req = h_fmt("set after%d 0 0 1\r\nx\r\nget after%d\r\n", i, i);
		char *reply;

		mc_send(fd, req);
		reply = mc_recv_until(fd, "END\r\n", 5000);
		cr_assert(
		    reply &&
			strcmp(reply, h_fmt("STORED\r\nVALUE after%d 0 1\r\nx\r\nEND\r\n", i)) == 0,
		    "%s: request %d got %s", when, i, reply ? reply : "(nothing)");
	}
	close(fd);
}

/* No thread of pid is traced or stopped. */
static inline void mc_expect_untraced(pid_t pid, const char *when)
{
	pid_t tids[256];
	int n = h_tasks(pid, tids, 256), i;

	cr_expect(n > 1, "%s: memcached has %d threads", when, n);
	for (i = 0; i < n; i++) {
		char st = h_task_state(pid, tids[i]);

		cr_expect_eq(h_status_field(pid, tids[i], "TracerPid"), 0,
			     "%s: thread %d is still traced", when, (int)tids[i]);
		cr_expect(st != 't' && st != 'T', "%s: thread %d is stopped (%c)", when,
			  (int)tids[i], st);
	}
}

/*
 * The run-time address of symbol in the first mapping of pid whose path
 * contains file ("libc.so", "/memcached"), from nm's value and the mapping's
 * load address (position-independent code; the tests' targets all are).
 */
static inline uint64_t mc_symbol_addr(pid_t pid, const char *file, const char *symbol)
{
	char *maps = h_read_file(h_fmt("/proc/%d/maps", (int)pid), NULL), *line, *save = NULL;
	char path[512] = "", nmline[512];
	unsigned long long base = 0, value = 0;
	FILE *nm;

	cr_assert(maps, "no maps for pid %d", (int)pid);
	for (line = strtok_r(maps, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long start, off;

		if (sscanf(line, "%llx-%*x %*s %llx %*s %*s %511s", &start, &off, path) == 3 &&
		    strstr(path, file) && off == 0) {
			base = start;
			break;
		}
	}
	free(maps);
	cr_assert(base, "pid %d has no mapping of %s", (int)pid, file);
	nm = popen(h_fmt("nm -D --defined-only %s 2>/dev/null; nm --defined-only %s 2>/dev/null",
			 path, path),
		   "r");
	cr_assert(nm);
	while (fgets(nmline, sizeof(nmline), nm)) {
		char name[256];
		unsigned long long v;

		if (sscanf(nmline, "%llx %*s %255s", &v, name) != 2)
			continue;
		name[strcspn(name, "@")] = 0;
		if (strcmp(name, symbol) == 0 && !value)
			value = v;
	}
	pclose(nm);
	cr_assert(value, "no symbol %s in %s", symbol, path);
	return base + value;
}

/* Polls until the byte at addr in pid is cctrace's breakpoint byte
 * (TRACER_BREAK_BYTE; it used to be int3): a breakpoint is armed. */
static inline void mc_wait_int3(pid_t pid, uint64_t addr, int timeout_ms)
{
	int64_t deadline = h_now_ms() + timeout_ms;
	int fd = open(h_fmt("/proc/%d/mem", (int)pid), O_RDONLY);

	cr_assert(fd >= 0);
	for (;;) {
		unsigned char b = 0;

		if (pread(fd, &b, 1, (off_t)addr) == 1 && b == TRACER_BREAK_BYTE)
			break;
		cr_assert(h_now_ms() < deadline, "no breakpoint at %#llx in pid %d",
			  (unsigned long long)addr, (int)pid);
		h_pace();
	}
	close(fd);
}

/* Starts `cctrace attach [-q] PID SCHED` with stderr on a pipe. */
static inline struct h_proc mc_attach(pid_t pid, const char *sched, bool quiet)
{
	const char *argv[6];
	int n = 0;

	argv[n++] = h_cctrace();
	argv[n++] = "attach";
	if (quiet)
		argv[n++] = "-q";
	argv[n++] = h_fmt("%d", (int)pid);
	argv[n++] = sched;
	argv[n] = NULL;
	return h_spawn(argv, false, false, true);
}

/*
 * Reads cctrace's stderr line by line until a line contains needle; every
 * line read is appended to *log.  False at end of file or timeout.
 */
static inline bool mc_await_line(int fd, const char *needle, char **log, int timeout_ms)
{
	int64_t deadline = h_now_ms() + timeout_ms;
	char line[1024];

	while (h_now_ms() < deadline) {
		if (!h_read_line(fd, line, sizeof(line), (int)(deadline - h_now_ms())))
			return false;
		*log = h_fmt("%s%s\n", *log ? *log : "", line);
		if (strstr(line, needle))
			return true;
	}
	return false;
}

#endif
