/*
 * outside.c: system calls that wait for the world outside the program.
 *
 * The blocked-thread detection (engine/blocked.c) ends a `run` early when
 * the threads it runs sleep in the kernel with no progress, on the theory
 * that a thread the schedule holds owns what they wait for.  That holds for
 * a lock or a pipe between threads; it does not hold for a server's worker
 * idle in epoll_wait until a client writes, a thread in accept, a read on a
 * socket, a terminal or a pipe from outside, a write to a full pipe that a
 * process outside reads (`prog | less`), a wait for a signal (a timer's,
 * another process's), or a sleep that ends by itself.  Those wait for
 * something outside the program (a client, a person, the clock), which no
 * held thread can give, and calling them a deadlock would end a schedule
 * just because the next request has not arrived yet.  So a thread asleep
 * in one of them is waiting, not blocked: the statement waits for its
 * event or its timeout.
 *
 * Readiness waits (epoll, poll, select) may also watch a pipe a held
 * thread would write, and a socket read may be on a socketpair between two
 * threads of the program; then the statement ends at its timeout instead
 * of at once, which is slower but never a false deadlock.
 */
#include "tracer/internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The target of pid's fd (its /proc/PID/fd link), "" if it has none. */
static void fd_target(pid_t pid, const char *fd, char *target, size_t len)
{
	char path[320];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fd/%s", (int)pid, fd);
	n = readlink(path, target, len - 1);
	target[n < 0 ? 0 : n] = 0;
}

void tracer_fd_kind(const struct tr_process *p, int fd, char *kind, size_t len)
{
	char name[24];

	snprintf(name, sizeof(name), "%d", fd);
	fd_target(p->pid, name, kind, len);
}

/* Does pid hold an fd on pipe (its "pipe:[INODE]") open for writing
 * (end O_WRONLY), or for reading (O_RDONLY)? */
static bool opens_pipe(pid_t pid, const char *pipe, int end)
{
	char path[320], target[64], line[64];
	bool opens = false;
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	while (dir && !opens && (d = readdir(dir)) != NULL) {
		FILE *info;
		unsigned flags = 0;

		fd_target(pid, d->d_name, target, sizeof(target));
		if (strcmp(target, pipe) != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", (int)pid, d->d_name);
		info = fopen(path, "r");
		while (info && fgets(line, sizeof(line), info))
			if (sscanf(line, "flags: %o", &flags) == 1)
				break;
		if (info)
			fclose(info);
		opens = end == O_WRONLY ? (flags & O_ACCMODE) != O_RDONLY
					: (flags & O_ACCMODE) != O_WRONLY;
	}
	if (dir)
		closedir(dir);
	return opens;
}

/*
 * Is fd of p a socket, a terminal or another character device, or a pipe
 * (a FIFO) whose other end (O_WRONLY: its writer's, for a read of fd;
 * O_RDONLY: its reader's, for a write) no process cctrace traces holds?
 * A read there waits for a client, a person at the keyboard, a device or a
 * producer outside (`cmd | prog`), and a write blocked on a full one for a
 * reader outside (`prog | less`); a thread the schedule holds gives it
 * nothing.  A pipe between two threads of the program, or a process and
 * its traced child, has its other end in a traced process, and a wait on
 * it is a sleep on the program.  (An interactive program attached to
 * while it read its terminal, or a filter while it read its pipe, was
 * reported deadlocked as soon as a statement held another of its
 * threads.)
 */
static bool other_end_outside(const struct tr_process *p, unsigned long long fd, int other_end)
{
	const struct tr_process *q;
	char name[24], path[64], target[64];
	struct stat st;

	snprintf(name, sizeof(name), "%llu", fd);
	fd_target(p->pid, name, target, sizeof(target));
	if (strncmp(target, "socket:", 7) == 0)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/fd/%llu", (int)p->pid, fd);
	if (stat(path, &st) < 0)
		return false;
	if (S_ISCHR(st.st_mode))
		return true;
	if (!S_ISFIFO(st.st_mode))
		return false;
	for (q = p->tracer->processes; q; q = q->next)
		if (q->alive && opens_pipe(q->pid, target, other_end))
			return false;
	return true;
}

bool tr_futex_wait_is_timed(long nr, unsigned long long op, unsigned long long timeout)
{
	if (nr == TR_SYS_futex_waitv)
		return timeout != 0;
	if (nr != TR_SYS_futex)
		return false;
	switch (op & FUTEX_CMD_MASK) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
	case FUTEX_LOCK_PI:
	case FUTEX_LOCK_PI2:
	case FUTEX_WAIT_REQUEUE_PI:
		return timeout != 0;
	default:
		return false;
	}
}

bool tr_syscall_awaits_outside(const struct tr_process *p, long nr, unsigned long long arg0)
{
	switch (nr) {
	case TR_SYS_nanosleep:
	case TR_SYS_clock_nanosleep:
	case TR_SYS_epoll_wait:
	case TR_SYS_epoll_pwait:
	case TR_SYS_epoll_pwait2:
	case TR_SYS_poll:
	case TR_SYS_ppoll:
	case TR_SYS_select:
	case TR_SYS_pselect6:
	case TR_SYS_accept:
	case TR_SYS_accept4:
	/* a signal: from a timer, another process, the terminal */
	case TR_SYS_pause:
	case TR_SYS_rt_sigsuspend:
	case TR_SYS_rt_sigtimedwait:
		return true;
	case TR_SYS_write:
	case TR_SYS_writev:
	case TR_SYS_sendto:
	case TR_SYS_sendmsg:
	case TR_SYS_sendmmsg:
		return other_end_outside(p, arg0, O_RDONLY);
	case TR_SYS_read:
	case TR_SYS_readv:
	case TR_SYS_recvfrom:
	case TR_SYS_recvmsg:
	case TR_SYS_recvmmsg:
		return other_end_outside(p, arg0, O_WRONLY);
	default:
		return false;
	}
}
