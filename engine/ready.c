/*
 * ready.c: would a thread's sleeping system call return now?
 *
 * A serialized run (serial.c) runs one thread at a time.  A thread whose
 * step ended asleep in the kernel is held, blocked, and is no option of
 * the scheduler until what it waits for has come; a thread tried again
 * too early only sleeps again, which costs its step (two samples of the
 * kernel's state a millisecond apart) and a choice that changes nothing.
 * So each kind of sleep is asked the kernel's own question, from outside:
 *
 *  - a read, an accept, an epoll_wait: is its descriptor readable?  The
 *    descriptor is taken into cctrace (pidfd_getfd: a socket, an epoll
 *    instance, a pipe; ptrace's permission is enough) or, on a kernel
 *    without it, opened anew through /proc (a pipe or a file), and polled
 *    without waiting.  An epoll instance polls readable when one of its
 *    events is ready, a listening socket when a connection waits.
 *  - a write, a send, a connect: is its descriptor writable (a full pipe
 *    or socket buffer drained, a connection made)?
 *  - a poll or a select: any of its descriptors, with the events it asks
 *    for, read from the program's memory (the pollfd array, the fd_sets).
 *  - a wait4 or waitid: has the child it waits for exited (a parent asleep
 *    in waitpid was tried again after every step of its child)?
 *
 * A signalfd answers poll for the task that polls it: taken into cctrace,
 * it told cctrace's own pending signals, never the program's, and a
 * thread reading one was held for ever, a false deadlock.  Its answer is
 * read from /proc instead (the signals pending for the thread or its
 * process, against the signalfd's mask).  An epoll instance that watches
 * a signalfd has the same flaw and cannot be asked so: cannot tell.
 *
 * Each answers 1 yes, 0 no, -1 cannot tell (another call, a descriptor
 * that cannot be taken): the thread is then tried again after another
 * thread's step.
 */
#include "engine/internal.h"
#include "tracer/abi.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Descriptors of one process, taken into cctrace one after another. */
struct fd_source {
	pid_t pid;
	int pidfd; /* -1: none, /proc instead */
};

static void fd_source_open(struct fd_source *src, pid_t pid)
{
	src->pid = pid;
	src->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
}

static void fd_source_close(struct fd_source *src)
{
	if (src->pidfd >= 0)
		close(src->pidfd);
}

/* A descriptor of cctrace's for the program's fd, to poll for events, or
 * -1.  Through /proc, a pipe is opened at the end the events need. */
static int take_fd(const struct fd_source *src, int fd, short events)
{
	int mode = !(events & POLLOUT) ? O_RDONLY : events & ~POLLOUT ? O_RDWR : O_WRONLY;
	char path[64];
	int mine = -1;

	if (src->pidfd >= 0)
		mine = (int)syscall(SYS_pidfd_getfd, src->pidfd, fd, 0);
	if (mine < 0) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)src->pid, fd);
		mine = open(path, mode | O_NONBLOCK | O_CLOEXEC);
	}
	return mine;
}

/* The signal mask of signalfd fd of p (its fdinfo's "sigmask:"). */
static uint64_t signalfd_mask(const struct tr_process *p, int fd)
{
	char path[96], line[256];
	uint64_t mask = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)tracer_process_pid(p), fd);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "sigmask:", 8) == 0) {
			mask = strtoull(line + 8, NULL, 16);
			break;
		}
	if (f)
		fclose(f);
	return mask;
}

/* Does epoll instance fd of p watch a signalfd (its fdinfo's "tfd:"
 * lines name the watched descriptors)? */
static bool epoll_watches_signalfd(const struct tr_process *p, int fd)
{
	char path[96], line[256], kind[64];
	bool found = false;
	FILE *f;
	int tfd;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)tracer_process_pid(p), fd);
	f = fopen(path, "r");
	while (f && !found && fgets(line, sizeof(line), f))
		if (sscanf(line, "tfd: %d", &tfd) == 1) {
			tracer_fd_kind(p, tfd, kind, sizeof(kind));
			found = strcmp(kind, "anon_inode:[signalfd]") == 0;
		}
	if (f)
		fclose(f);
	return found;
}

/* want, asked for th where cctrace cannot poll it for the program: 1
 * ready, 0 not, -1 cannot tell; 2: an ordinary descriptor, to poll. */
static int ask_from_proc(struct tr_thread *th, const struct pollfd *want)
{
	struct tr_process *p = tracer_thread_process(th);
	char kind[64];

	tracer_fd_kind(p, want->fd, kind, sizeof(kind));
	if (strcmp(kind, "anon_inode:[signalfd]") == 0)
		return (want->events & POLLIN) &&
		       (tracer_thread_pending_signals(th) & signalfd_mask(p, want->fd)) != 0;
	if (strcmp(kind, "anon_inode:[eventpoll]") == 0 && epoll_watches_signalfd(p, want->fd))
		return -1;
	return 2;
}

/* Poll the program's descriptors want[0..n) (fd, events; a negative fd
 * is skipped, as poll skips it) without waiting, for its thread th:
 * would its poll return? */
static int poll_theirs(struct tr_thread *th, const struct pollfd *want, size_t n)
{
	struct pollfd *mine = calloc(n ? n : 1, sizeof(*mine));
	struct fd_source src;
	size_t i;
	int rc = -1;

	if (!mine)
		return -1;
	for (i = 0; i < n; i++)
		mine[i] = (struct pollfd){.fd = -1, .events = want[i].events};
	fd_source_open(&src, tracer_process_pid(tracer_thread_process(th)));
	for (i = 0; i < n; i++) {
		int asked = want[i].fd < 0 ? 0 : ask_from_proc(th, &want[i]);

		if (asked == 1 || asked < 0) {
			rc = asked;
			goto out;
		}
		if (asked == 2 && (mine[i].fd = take_fd(&src, want[i].fd, want[i].events)) < 0)
			goto out;
	}
	rc = poll(mine, (nfds_t)n, 0);
out:
	for (i = 0; i < n; i++)
		if (mine[i].fd >= 0)
			close(mine[i].fd);
	fd_source_close(&src);
	free(mine);
	return rc < 0 ? -1 : rc > 0;
}

static int fd_ready(struct tr_thread *th, uint64_t fd, short events)
{
	struct pollfd want = {.fd = (int)fd, .events = events};

	return fd > INT32_MAX ? -1 : poll_theirs(th, &want, 1);
}

/* poll(fds, nfds, ...) and ppoll: its array, read from the program.  No
 * descriptor: a sleep for a time, which the step waits out elsewhere. */
static int poll_would_return(struct tr_thread *th, uint64_t fds, uint64_t nfds)
{
	struct tr_process *p = tracer_thread_process(th);
	struct pollfd *want;
	int rc = -1;

	if (nfds == 0 || nfds > (uint64_t)INT32_MAX / sizeof(*want))
		return -1;
	want = calloc(nfds, sizeof(*want));
	if (want && tracer_read(p, fds, want, nfds * sizeof(*want)) == 0)
		rc = poll_theirs(th, want, nfds);
	free(want);
	return rc;
}

/* One of select's fd_sets (NULL: none), nfds bits in 64-bit words. */
static int read_fd_set(struct tr_process *p, uint64_t addr, uint64_t nfds, uint64_t **set)
{
	size_t len = (nfds + 63) / 64 * sizeof(uint64_t);

	*set = NULL;
	if (!addr)
		return 0;
	*set = calloc(1, len);
	return *set && tracer_read(p, addr, *set, len) == 0 ? 0 : -1;
}

static bool in_set(const uint64_t *set, uint64_t fd)
{
	return set && (set[fd / 64] >> (fd % 64) & 1);
}

/* select(nfds, readfds, writefds, exceptfds, ...) and pselect6, asked as
 * poll would be: readable, writable, urgent data. */
static int select_would_return(struct tr_thread *th, const uint64_t *args)
{
	struct tr_process *p = tracer_thread_process(th);
	uint64_t nfds = args[0], *sets[3] = {NULL, NULL, NULL}, fd;
	static const short events[3] = {POLLIN, POLLOUT, POLLPRI};
	struct pollfd *want = NULL;
	size_t n = 0;
	int rc = -1, k;

	if (nfds == 0 || nfds > 1u << 20)
		return -1; /* a sleep for a time, or not a select cctrace knows */
	for (k = 0; k < 3; k++)
		if (read_fd_set(p, args[1 + k], nfds, &sets[k]) < 0)
			goto out;
	if (!(want = calloc(nfds, sizeof(*want))))
		goto out;
	for (fd = 0; fd < nfds; fd++) {
		short ev = 0;

		for (k = 0; k < 3; k++)
			ev |= in_set(sets[k], fd) ? events[k] : 0;
		if (ev)
			want[n++] = (struct pollfd){.fd = (int)fd, .events = ev};
	}
	rc = n ? poll_theirs(th, want, n) : -1;
out:
	for (k = 0; k < 3; k++)
		free(sets[k]);
	free(want);
	return rc;
}

/* A wait4 (or waitid) by a thread of process pid, for child want (-1:
 * any): would it return now, a child of the process (of any of its
 * threads) being a zombie? */
static int child_wait_would_return(pid_t pid, pid_t want)
{
	char path[64];
	struct dirent *d;
	int ready = 0, any = 0;
	DIR *tasks;

	if (want > 0) {
		char state = tracer_process_state(want);

		return state == 'Z' ? 1 : state ? 0 : -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	tasks = opendir(path);
	if (!tasks)
		return -1;
	while (!ready && (d = readdir(tasks)) != NULL) {
		FILE *f;
		int child;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/children", (int)pid, d->d_name);
		f = fopen(path, "r");
		while (f && !ready && fscanf(f, "%d", &child) == 1) {
			any = 1;
			ready = tracer_process_state(child) == 'Z';
		}
		if (f)
			fclose(f);
	}
	closedir(tasks);
	return ready ? 1 : any ? 0 : -1;
}

int call_would_return(struct tr_thread *th, long nr, const uint64_t args[TRACER_SYSCALL_ARGS])
{
	pid_t pid = tracer_process_pid(tracer_thread_process(th));

	switch (nr) {
	case TR_SYS_read:
	case TR_SYS_readv:
	case TR_SYS_recvfrom:
	case TR_SYS_recvmsg:
	case TR_SYS_recvmmsg:
	case TR_SYS_accept:
	case TR_SYS_accept4:
	case TR_SYS_epoll_wait:
	case TR_SYS_epoll_pwait:
	case TR_SYS_epoll_pwait2:
		return fd_ready(th, args[0], POLLIN);
	case TR_SYS_write:
	case TR_SYS_writev:
	case TR_SYS_sendto:
	case TR_SYS_sendmsg:
	case TR_SYS_sendmmsg:
	case TR_SYS_connect:
		return fd_ready(th, args[0], POLLOUT);
	case TR_SYS_poll:
	case TR_SYS_ppoll:
		return poll_would_return(th, args[0], args[1]);
	case TR_SYS_select:
	case TR_SYS_pselect6:
		return select_would_return(th, args);
	case TR_SYS_wait4:
		return child_wait_would_return(pid, (long)args[0] > 0 ? (pid_t)args[0] : -1);
	case TR_SYS_waitid: /* P_PID (1) names the child; P_ALL, P_PGID, P_PIDFD: any */
		return child_wait_would_return(pid, args[0] == 1 ? (pid_t)args[1] : -1);
	default:
		return -1;
	}
}
