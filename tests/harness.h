/*
 * harness.h: helpers shared by the system tests, which drive the cctrace
 * binary (and the programs it traces) as subprocesses.
 *
 * Every test file is built from a single .c file, so everything here is
 * static.  Processes started through h_spawn()/h_run() are remembered and
 * h_cleanup() (wired as the .fini of every test) SIGKILLs whatever is left of
 * them and of their process groups, so a failing test leaves nothing behind.
 *
 * Nothing here synchronises by sleeping: output is read through pipes with
 * poll(), exits are collected with waitpid(), and /proc is polled only with a
 * hard deadline as a safety net (a test that reaches it fails).
 */
#ifndef CCTRACE_TESTS_HARNESS_H
#define CCTRACE_TESTS_HARNESS_H

#include "tracer/tracer.h"

#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Hard limit on any single command; a test that needs it has failed anyway. */
#define H_SAFETY_S 30

/* ---------------------------------------------------------------- misc */

static inline int64_t h_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The binary under test: $CCTRACE, else ./cctrace (tests run from the root). */
static inline const char *h_cctrace(void)
{
	const char *p = getenv("CCTRACE");

	return p && *p ? p : "./cctrace";
}

/*
 * Every block the harness hands out (h_fmt's strings, the buffers of
 * h_read_all, h_read_file and h_collect) is registered here from the
 * moment it is allocated.  A failed cr_assert leaves the test by a
 * longjmp, past the free() that would have followed, and the process ends
 * soon after: registered, the block is still reachable then, so the leak
 * checker does not report a leak that is only the failed assertion's.
 * h_free() frees a block and forgets it.  A plain free() of one is safe
 * too (the registry only remembers addresses and never frees them), but
 * leaves its address behind.  h_fmt's strings live as long as the test.
 */
static void **h_kept;
static size_t h_nkept;

/* The registry's slot of block p, or h_nkept (a new slot) if p is not
 * registered (or NULL).  Taken before a realloc, whose old pointer must
 * not be looked at afterwards. */
static inline size_t h_slot(const void *p)
{
	size_t i;

	for (i = 0; p && i < h_nkept; i++)
		if (h_kept[i] == p)
			return i;
	return h_nkept;
}

/* Put p in slot (from h_slot). */
static inline void h_keep_at(size_t slot, void *p)
{
	void **grown;

	if (slot < h_nkept) {
		h_kept[slot] = p;
		return;
	}
	grown = realloc(h_kept, sizeof(*grown) * (h_nkept + 1));
	cr_assert(grown, "out of memory");
	h_kept = grown;
	h_kept[h_nkept++] = p;
}

/* Free a block the harness handed out. */
static inline void h_free(void *p)
{
	size_t i;

	for (i = 0; p && i < h_nkept; i++)
		if (h_kept[i] == p) {
			h_kept[i] = h_kept[--h_nkept];
			break;
		}
	free(p);
}

/* printf into a fresh string, owned by the harness. */
__attribute__((format(printf, 1, 2))) static inline char *h_fmt(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	cr_assert(s, "out of memory");
	h_keep_at(h_nkept, s);
	return s;
}

/* Whole file into a NUL-terminated string (h_free it); NULL if it cannot
 * be opened. */
static inline char *h_read_file(const char *path, size_t *lenp)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL, *grown;
	size_t len = 0, cap = 0, n;

	if (!f)
		return NULL;
	for (;;) {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 8192;
			size_t slot = h_slot(buf);

			grown = realloc(buf, cap);
			if (!grown)
				fclose(f);
			cr_assert(grown, "out of memory");
			h_keep_at(slot, grown);
			buf = grown;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		if (n == 0)
			break;
		len += n;
	}
	fclose(f);
	buf[len] = 0;
	if (lenp)
		*lenp = len;
	return buf;
}

static inline void h_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert(f, "cannot write %s: %s", path, strerror(errno));
	fputs(text, f);
	cr_assert(fclose(f) == 0);
}

/* A schedule file in a fresh temporary directory; returns its path. */
static inline char *h_temp_sched(const char *name, const char *text)
{
	char dir[] = "/tmp/cctrace-test-XXXXXX";
	char *path;

	cr_assert(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	path = h_fmt("%s/%s", dir, name);
	h_write_file(path, text);
	return path;
}

/* A fresh directory under /tmp, and its removal with what it holds. */
static inline char *h_temp_dir(void)
{
	char *dir = h_fmt("/tmp/cctrace-test-XXXXXX");

	cr_assert(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	return dir;
}

static inline void h_remove_tree(const char *dir)
{
	cr_expect_eq(system(h_fmt("rm -rf '%s'", dir)), 0, "rm -rf %s", dir);
}

/* The line of source file PATH that carries the marker "LINE:name" in a
 * comment, for tests that expect a line number. */
static inline int h_marker_line(const char *path, const char *name)
{
	char buf[512], tag[128];
	FILE *f = fopen(path, "r");
	int line = 0, found = 0;

	cr_assert(f, "cannot read %s: %s", path, strerror(errno));
	snprintf(tag, sizeof(tag), "/* LINE:%s */", name);
	while (!found && fgets(buf, sizeof(buf), f)) {
		line++;
		found = strstr(buf, tag) != NULL;
	}
	fclose(f);
	cr_assert(found, "%s has no marker LINE:%s", path, name);
	return line;
}

/* Number of lines of text that contain needle. */
static inline int h_count_lines(const char *text, const char *needle)
{
	int n = 0;
	const char *line = text;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		if (memmem(line, len, needle, strlen(needle)))
			n++;
		line = nl ? nl + 1 : NULL;
	}
	return n;
}

/* Trace lines ("[    1.178 ms] p1.t3    enter(work)   work   bbuf.c:69"). */
static inline bool h_is_trace_line(const char *line, size_t len)
{
	return len > 6 && line[0] == '[' && memmem(line, len, " ms] ", 5);
}

/* The value of "key":"..." (or "key":NUMBER) on a JSON line, into buf. */
static inline bool h_json_field(const char *line, const char *key, char *buf, size_t len)
{
	char pat[64];
	const char *p;
	size_t n = 0;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(line, pat);
	if (!p)
		return false;
	p += strlen(pat);
	if (*p == '"') {
		p++;
		while (*p && *p != '"' && n + 1 < len)
			buf[n++] = *p++;
		if (*p != '"')
			return false;
	} else {
		while (*p && *p != ',' && *p != '}' && n + 1 < len)
			buf[n++] = *p++;
	}
	buf[n] = 0;
	return n > 0;
}

/* What the "# run: cctrace run ARGS" first line of the schedule file at
 * path gives cctrace run: ARGS.  Fails the test if there is no such line. */
static inline char *h_run_line(const char *path)
{
	static const char prefix[] = "# run: cctrace run ";
	char *text = h_read_file(path, NULL), *nl, *args;

	cr_assert_not_null(text, "cannot read %s", path);
	nl = strchr(text, '\n');
	if (nl)
		*nl = 0;
	cr_assert(strncmp(text, prefix, sizeof(prefix) - 1) == 0, "%s: first line %s", path, text);
	args = h_fmt("%s", text + sizeof(prefix) - 1);
	h_free(text);
	return args;
}

/* How many of n replays of `cctrace run -q --expect bug ARGS` exit 0. */
static inline int h_bug_replays(const char *args, int n)
{
	char out[] = "/tmp/cctrace-replay-XXXXXX", *text;
	int i, ok = 0, fd = mkstemp(out), good;

	if (fd >= 0)
		close(fd);
	for (i = 0; i < n; i++) {
		good = system(h_fmt("%s run -q --expect bug %s >%s 2>&1", h_cctrace(), args,
				    fd >= 0 ? out : "/dev/null")) == 0;
		ok += good;
		/* the first replay that did not show the bug says why, in the log */
		if (!good && ok == i && fd >= 0 && (text = h_read_file(out, NULL)) != NULL) {
			fprintf(stderr, "replay %d of %s did not show the bug:\n%s\n", i + 1, args,
				text);
			free(text);
		}
	}
	if (fd >= 0)
		unlink(out);
	return ok;
}

/*
 * Splits the trace lines of text into thread and event columns.  Returns the
 * number of trace lines; at most max are stored.
 */
struct h_trace_ev {
	char thread[32];
	char event[128];
	char func[128];
	char where[128];
};

static inline int h_parse_trace(const char *text, struct h_trace_ev *evs, int max)
{
	int n = 0;
	const char *line = text;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		if (h_is_trace_line(line, len)) {
			char buf[512];
			const char *rest;

			snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
			rest = strstr(buf, " ms] ") + 5;
			if (n < max) {
				memset(&evs[n], 0, sizeof(evs[n]));
				sscanf(rest, "%31s %127s %127s %127s", evs[n].thread, evs[n].event,
				       evs[n].func, evs[n].where);
			}
			n++;
		}
		line = nl ? nl + 1 : NULL;
	}
	return n;
}

/* ---------------------------------------------------------- processes */

#define H_MAX_CHILDREN 64
static pid_t h_children[H_MAX_CHILDREN];
static int h_nchildren;

static inline void h_track(pid_t pid)
{
	if (h_nchildren < H_MAX_CHILDREN)
		h_children[h_nchildren++] = pid;
}

static inline void h_untrack(pid_t pid)
{
	int i;

	for (i = 0; i < h_nchildren; i++)
		if (h_children[i] == pid)
			h_children[i] = 0;
}

/* Teardown: SIGKILL every child (and its process group) still around. */
static inline void h_cleanup(void)
{
	int i;

	for (i = 0; i < h_nchildren; i++) {
		pid_t pid = h_children[i];

		if (pid <= 0)
			continue;
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		h_children[i] = 0;
	}
	h_nchildren = 0;
}

struct h_proc {
	pid_t pid;
	int in;	 /* write end of its stdin, or -1 */
	int out; /* read end of its stdout, or -1 */
	int err; /* read end of its stderr, or -1 */
};

/*
 * Starts argv in its own process group with stdin, stdout and stderr on
 * pipes (each only if the matching want_* is set; otherwise /dev/null for
 * stdin and inherited for the others).  Signals are reset to their default
 * in the child so that SIGINT/SIGTERM reach cctrace as they would from a
 * shell.
 */
static inline struct h_proc h_spawn(const char *const argv[], bool want_in, bool want_out,
				    bool want_err)
{
	int pin[2] = {-1, -1}, pout[2] = {-1, -1}, perr[2] = {-1, -1}, ready[2];
	struct h_proc p = {.in = -1, .out = -1, .err = -1};
	char c;

	if (want_in)
		cr_assert(pipe2(pin, O_CLOEXEC) == 0);
	if (want_out)
		cr_assert(pipe2(pout, O_CLOEXEC) == 0);
	if (want_err)
		cr_assert(pipe2(perr, O_CLOEXEC) == 0);
	cr_assert(pipe2(ready, O_CLOEXEC) == 0);
	fflush(NULL);
	p.pid = fork();
	cr_assert(p.pid >= 0, "fork: %s", strerror(errno));
	if (p.pid == 0) {
		sigset_t none;
		int sig, devnull;

		setpgid(0, 0);
		for (sig = 1; sig < NSIG; sig++)
			if (sig != SIGKILL && sig != SIGSTOP)
				signal(sig, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (want_in) {
			dup2(pin[0], 0);
		} else {
			devnull = open("/dev/null", O_RDONLY);
			dup2(devnull, 0);
		}
		if (want_out)
			dup2(pout[1], 1);
		if (want_err)
			dup2(perr[1], 2);
		close(ready[0]);
		close(ready[1]); /* tells the parent the group exists */
		execvp(argv[0], (char *const *)argv);
		dprintf(2, "harness: cannot exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(p.pid, p.pid);
	h_track(p.pid);
	close(ready[1]);
	while (read(ready[0], &c, 1) < 0 && errno == EINTR)
		;
	close(ready[0]);
	if (want_in) {
		close(pin[0]);
		p.in = pin[1];
	}
	if (want_out) {
		close(pout[1]);
		p.out = pout[0];
	}
	if (want_err) {
		close(perr[1]);
		p.err = perr[0];
	}
	return p;
}

/*
 * Reaps child pid, waiting at most until deadline (h_now_ms() clock) on a
 * pidfd, which becomes readable when the process exits.  Returns false on
 * timeout (the child is left alone).
 */
static inline bool h_wait_exit(pid_t pid, int64_t deadline, int *status)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	cr_assert(fd >= 0, "pidfd_open(%d): %s", (int)pid, strerror(errno));
	for (;;) {
		struct pollfd pfd = {fd, POLLIN, 0};
		int64_t left = deadline - h_now_ms();
		pid_t w = waitpid(pid, status, WNOHANG);

		if (w == pid)
			break;
		cr_assert(w == 0 || errno == EINTR, "waitpid(%d): %s", (int)pid, strerror(errno));
		if (left <= 0) {
			close(fd);
			return false;
		}
		poll(&pfd, 1, (int)left);
	}
	close(fd);
	return true;
}

struct h_result {
	int status; /* raw wait status */
	int code;   /* exit code, or 128 + signal, or -1 if it had to be killed */
	bool timed_out;
	char *out;
	char *err;
	size_t out_len, err_len;
};

static inline void h_result_free(struct h_result *r)
{
	h_free(r->out);
	h_free(r->err);
	memset(r, 0, sizeof(*r));
}

static inline void h_append(char **buf, size_t *len, size_t *cap, const char *data, size_t n)
{
	char *grown;
	size_t slot;

	if (*len + n + 1 > *cap) {
		*cap = (*len + n + 1) * 2 + 4096;
		slot = h_slot(*buf);
		grown = realloc(*buf, *cap);
		cr_assert(grown, "out of memory");
		h_keep_at(slot, grown);
		*buf = grown;
	}
	memcpy(*buf + *len, data, n);
	*len += n;
	(*buf)[*len] = 0;
}

/*
 * Collects stdout and stderr of p (those that are pipes) until both are
 * closed, then its exit status.  After timeout_s the whole process group is
 * SIGKILLed (safety net) and the result says timed_out.
 */
static inline struct h_result h_collect(struct h_proc *p, int timeout_s)
{
	struct h_result r = {0};
	size_t out_cap = 0, err_cap = 0;
	int64_t deadline = h_now_ms() + (int64_t)timeout_s * 1000;
	char buf[65536];

	h_append(&r.out, &r.out_len, &out_cap, "", 0);
	h_append(&r.err, &r.err_len, &err_cap, "", 0);
	while (p->out >= 0 || p->err >= 0) {
		struct pollfd fds[2] = {{p->out, POLLIN, 0}, {p->err, POLLIN, 0}};
		int64_t left = deadline - h_now_ms();
		int i, n;

		if (left <= 0) {
			r.timed_out = true;
			kill(-p->pid, SIGKILL);
			kill(p->pid, SIGKILL);
			break;
		}
		n = poll(fds, 2, (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		cr_assert(n >= 0, "poll: %s", strerror(errno));
		for (i = 0; i < 2; i++) {
			int *fd = i == 0 ? &p->out : &p->err;
			ssize_t got;

			if (*fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			got = read(*fd, buf, sizeof(buf));
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				close(*fd);
				*fd = -1;
				continue;
			}
			if (i == 0)
				h_append(&r.out, &r.out_len, &out_cap, buf, (size_t)got);
			else
				h_append(&r.err, &r.err_len, &err_cap, buf, (size_t)got);
		}
	}
	if (p->out >= 0)
		close(p->out);
	if (p->err >= 0)
		close(p->err);
	p->out = p->err = -1;
	if (!r.timed_out && !h_wait_exit(p->pid, deadline, &r.status)) {
		r.timed_out = true;
		kill(-p->pid, SIGKILL);
		kill(p->pid, SIGKILL);
	}
	if (r.timed_out)
		while (waitpid(p->pid, &r.status, 0) < 0 && errno == EINTR)
			;
	h_untrack(p->pid);
	if (p->in >= 0)
		close(p->in);
	p->in = -1;
	if (r.timed_out)
		r.code = -1;
	else if (WIFEXITED(r.status))
		r.code = WEXITSTATUS(r.status);
	else if (WIFSIGNALED(r.status))
		r.code = 128 + WTERMSIG(r.status);
	else
		r.code = -1;
	return r;
}

/* Runs argv to its end with captured output. */
static inline struct h_result h_run(const char *const argv[], int timeout_s)
{
	struct h_proc p = h_spawn(argv, false, true, true);

	return h_collect(&p, timeout_s);
}

/* Runs a NULL-terminated list of arguments. */
#define H_RUN(...) h_run((const char *const[]){__VA_ARGS__, NULL}, H_SAFETY_S)

/*
 * Reads one line from fd into buf (without the newline), waiting at most
 * timeout_ms; reads one byte at a time so nothing after the line is
 * consumed.  Returns false on end of file or timeout.
 */
static inline bool h_read_line(int fd, char *buf, size_t len, int timeout_ms)
{
	int64_t deadline = h_now_ms() + timeout_ms;
	size_t n = 0;

	while (n + 1 < len) {
		struct pollfd pfd = {fd, POLLIN, 0};
		int64_t left = deadline - h_now_ms();
		char c;
		ssize_t got;

		if (left <= 0)
			return false;
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		got = read(fd, &c, 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return false;
		if (c == '\n')
			break;
		buf[n++] = c;
	}
	buf[n] = 0;
	return true;
}

/* Exit code from a wait status as in h_result.code. */
static inline int h_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -1;
}

/* waitpid with a safety deadline; returns the exit code as h_code, -1 on timeout
 * (then the process group has been killed). */
static inline int h_wait(pid_t pid, int timeout_s, int *statusp)
{
	int status = 0;

	if (!h_wait_exit(pid, h_now_ms() + (int64_t)timeout_s * 1000, &status)) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		h_untrack(pid);
		return -1;
	}
	h_untrack(pid);
	if (statusp)
		*statusp = status;
	return h_code(status);
}

/* Everything that is left on fd until end of file (at most timeout_s);
 * h_free it. */
static inline char *h_read_all(int fd, int timeout_s)
{
	int64_t deadline = h_now_ms() + (int64_t)timeout_s * 1000;
	char *buf = NULL, tmp[4096];
	size_t len = 0, cap = 0;

	h_append(&buf, &len, &cap, "", 0);
	for (;;) {
		struct pollfd pfd = {fd, POLLIN, 0};
		int64_t left = deadline - h_now_ms();
		ssize_t got;

		if (left <= 0)
			break;
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		got = read(fd, tmp, sizeof(tmp));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		h_append(&buf, &len, &cap, tmp, (size_t)got);
	}
	return buf;
}

/* ---------------------------------------------------------------- /proc */

/* Pacing of /proc polling loops (not a synchronisation: the loops check a
 * condition and have a deadline); keeps them from starving the tracer. */
static inline void h_pace(void)
{
	poll(NULL, 0, 1);
}

/* The text of a field of /proc/PID/task/TID/status, after its colon, into
 * value; false if the thread or the field is gone. */
static inline bool h_status_text(pid_t pid, pid_t tid, const char *field, char *value, size_t len)
{
	char path[64], line[256];
	size_t flen = strlen(field);
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (strncmp(line, field, flen) == 0 && line[flen] == ':') {
			snprintf(value, len, "%s", line + flen + 1);
			found = true;
		}
	fclose(f);
	return found;
}

/* A numeric field of /proc/PID/task/TID/status ("TracerPid"), -1 if absent. */
static inline long h_status_field(pid_t pid, pid_t tid, const char *field)
{
	char value[256];

	return h_status_text(pid, tid, field, value, sizeof(value)) ? strtol(value, NULL, 10) : -1;
}

/* A hexadecimal field of a thread's status (SigCgt, SigBlk...) into *v;
 * false if the thread or the field is gone. */
static inline bool h_status_hex(pid_t pid, pid_t tid, const char *field, unsigned long long *v)
{
	char value[256];

	return h_status_text(pid, tid, field, value, sizeof(value)) &&
	       sscanf(value, "%llx", v) == 1;
}

/* The State letter of a thread ('R', 'S', 't', ...), 0 if it is gone. */
static inline char h_task_state(pid_t pid, pid_t tid)
{
	char path[64], line[256];
	char st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "State:", 6) == 0) {
			const char *p = line + 6;

			while (*p == ' ' || *p == '\t')
				p++;
			st = *p;
			break;
		}
	fclose(f);
	return st;
}

/* The thread ids of pid, sorted; returns how many (at most max). */
static inline int h_tasks(pid_t pid, pid_t *tids, int max)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0, i, j;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((d = readdir(dir)))
		if (isdigit((unsigned char)d->d_name[0]) && n < max)
			tids[n++] = (pid_t)atoi(d->d_name);
	closedir(dir);
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && tids[j - 1] > tids[j]; j--) {
			pid_t t = tids[j];

			tids[j] = tids[j - 1];
			tids[j - 1] = t;
		}
	return n;
}

/*
 * Polls until every thread of pid has TracerPid == tracer (safety deadline
 * timeout_ms).  Returns true when it happened.
 */
static inline bool h_wait_traced_by(pid_t pid, pid_t tracer, int timeout_ms)
{
	int64_t deadline = h_now_ms() + timeout_ms;

	while (h_now_ms() < deadline) {
		pid_t tids[256];
		int n = h_tasks(pid, tids, 256), i, ok = n > 0;

		for (i = 0; i < n && ok; i++)
			if (h_status_field(pid, tids[i], "TracerPid") != tracer)
				ok = 0;
		if (ok)
			return true;
		h_pace();
	}
	return false;
}

/* An executable mapping of a process and a copy of its bytes. */
struct h_text {
	uint64_t start, end;
	char path[256];
	unsigned char *bytes;
};

/*
 * Copies every file-backed r-xp mapping of pid through /proc/PID/mem.
 * Returns how many (at most max).
 */
static inline int h_snapshot_text(pid_t pid, struct h_text *texts, int max)
{
	char path[64], line[512];
	FILE *maps;
	int mem, n = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	maps = fopen(path, "r");
	cr_assert(maps, "%s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	mem = open(path, O_RDONLY);
	cr_assert(mem >= 0, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), maps) && n < max) {
		unsigned long long start, end;
		char perms[8], file[256] = "";
		size_t len, got = 0;

		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %255s", &start, &end, perms, file) < 3)
			continue;
		if (strcmp(perms, "r-xp") != 0 || file[0] != '/')
			continue;
		len = (size_t)(end - start);
		texts[n].start = start;
		texts[n].end = end;
		snprintf(texts[n].path, sizeof(texts[n].path), "%s", file);
		texts[n].bytes = malloc(len);
		cr_assert(texts[n].bytes);
		h_keep_at(h_nkept, texts[n].bytes);
		while (got < len) {
			ssize_t r =
			    pread(mem, texts[n].bytes + got, len - got, (off_t)(start + got));

			cr_assert(r > 0, "reading %s of pid %d at %#llx: %s", file, (int)pid,
				  start + got, r < 0 ? strerror(errno) : "end of file");
			got += (size_t)r;
		}
		n++;
	}
	fclose(maps);
	close(mem);
	return n;
}

static inline void h_free_text(struct h_text *texts, int n)
{
	int i;

	for (i = 0; i < n; i++)
		h_free(texts[i].bytes);
}

/*
 * Compares two snapshots; returns NULL if identical, else a description of
 * the first difference (an h_fmt string).
 */
static inline char *h_text_diff(const struct h_text *a, int na, const struct h_text *b, int nb)
{
	int i;

	if (na != nb)
		return h_fmt("%d executable mappings before, %d after", na, nb);
	for (i = 0; i < na; i++) {
		size_t len = (size_t)(a[i].end - a[i].start), k;

		if (a[i].start != b[i].start || a[i].end != b[i].end ||
		    strcmp(a[i].path, b[i].path) != 0)
			return h_fmt("mapping %d changed: %s %#llx-%#llx -> %s %#llx-%#llx", i,
				     a[i].path, (unsigned long long)a[i].start,
				     (unsigned long long)a[i].end, b[i].path,
				     (unsigned long long)b[i].start, (unsigned long long)b[i].end);
		for (k = 0; k < len; k++)
			if (a[i].bytes[k] != b[i].bytes[k])
				return h_fmt("%s: byte at %#llx was %02x, is %02x", a[i].path,
					     (unsigned long long)(a[i].start + k), a[i].bytes[k],
					     b[i].bytes[k]);
	}
	return NULL;
}

/* Does the mapping of a snapshot whose path ends in suffix exist? */
/* Polls until the code of pid differs from `before` (cctrace has planted
 * its breakpoints), with a safety deadline. */
static inline bool h_wait_text_changed(pid_t pid, const struct h_text *before, int nbefore,
				       int timeout_ms)
{
	int64_t deadline = h_now_ms() + timeout_ms;

	while (h_now_ms() < deadline) {
		struct h_text now[64];
		int n = h_snapshot_text(pid, now, 64);
		char *diff = h_text_diff(before, nbefore, now, n);

		h_free_text(now, n);
		if (diff)
			return true;
		h_pace();
	}
	return false;
}

static inline bool h_text_has(const struct h_text *t, int n, const char *suffix)
{
	int i;

	for (i = 0; i < n; i++) {
		size_t pl = strlen(t[i].path), sl = strlen(suffix);

		if (pl >= sl && strcmp(t[i].path + pl - sl, suffix) == 0)
			return true;
	}
	return false;
}

/* ---------------------------------------------------------- breakpoints */

/*
 * The run-time address of symbol in the first mapping of pid whose path
 * contains file ("libc.so", "/memcached"), from nm's value and the mapping's
 * load address (position-independent code; the tests' targets all are).
 */
static inline uint64_t h_symbol_addr(pid_t pid, const char *file, const char *symbol)
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
	h_free(maps);
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

/* The byte at addr in pid's memory, -1 if it cannot be read. */
static inline int h_peek_byte(pid_t pid, uint64_t addr)
{
	char path[64];
	unsigned char b;
	int fd, v = -1;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (pread(fd, &b, 1, (off_t)addr) == 1)
		v = b;
	close(fd);
	return v;
}

/* What fd has to read right now, without waiting (h_free it). */
static inline char *h_read_available(int fd)
{
	char *buf = NULL, tmp[4096];
	size_t len = 0, cap = 0;
	struct pollfd pfd = {fd, POLLIN, 0};
	ssize_t got;

	h_append(&buf, &len, &cap, "", 0);
	while (poll(&pfd, 1, 0) == 1 && (got = read(fd, tmp, sizeof(tmp))) > 0)
		h_append(&buf, &len, &cap, tmp, (size_t)got);
	return buf;
}

/*
 * Polls until the byte at addr in pid is cctrace's breakpoint byte
 * (TRACER_BREAK_BYTE): the tracer (a cctrace
 * started with its stderr on a pipe) has armed its breakpoint there.  If
 * the tracer ends first the test fails at once with what it printed,
 * instead of waiting for a breakpoint that can no longer come (its
 * breakpoints may even have come and gone between two looks); timeout_ms
 * is only a safety net.
 */
static inline void h_wait_int3(pid_t pid, uint64_t addr, struct h_proc *tracer, int timeout_ms)
{
	int64_t deadline = h_now_ms() + timeout_ms;
	int status, code;

	for (;;) {
		if (h_peek_byte(pid, addr) == TRACER_BREAK_BYTE)
			return;
		if (waitpid(tracer->pid, &status, WNOHANG) == tracer->pid) {
			h_untrack(tracer->pid);
			code = h_code(status);
			cr_assert_fail(
			    "cctrace ended (exit %d) before its breakpoint at %#llx in pid "
			    "%d was seen:\n%s",
			    code, (unsigned long long)addr, (int)pid, h_read_all(tracer->err, 5));
		}
		if (h_now_ms() >= deadline)
			cr_assert_fail(
			    "no breakpoint at %#llx in pid %d within %d ms; cctrace said:\n%s",
			    (unsigned long long)addr, (int)pid, timeout_ms,
			    h_read_available(tracer->err));
		h_pace();
	}
}

#endif
