/*
 * outside.c: system calls that wait for the world outside the program.
 *
 * The blocked-thread detection (engine/blocked.c) ends a `run` early when
 * the threads it runs sleep in the kernel with no progress, on the theory
 * that a thread the schedule holds owns what they wait for.  That holds for
 * a lock or a pipe between threads; it does not hold for a server's worker
 * idle in epoll_wait until a client writes, a thread in accept, a read on a
 * socket or a terminal, or a sleep that ends by itself.  Those wait for
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

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Is fd of pid a socket, or a terminal or another character device?  A
 * read there waits for a client, a person at the keyboard or a device;
 * a thread the schedule holds gives it nothing.  (An interactive program
 * attached to while it read its terminal was reported deadlocked as soon
 * as a statement held another of its threads.) */
static bool reads_from_outside(pid_t pid, unsigned long long fd)
{
	char path[64], target[64];
	struct stat st;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fd/%llu", (int)pid, fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = 0;
	if (strncmp(target, "socket:", 7) == 0)
		return true;
	return stat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

bool tr_syscall_awaits_outside(pid_t pid, long nr, unsigned long long arg0)
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
		return true;
	case TR_SYS_read:
	case TR_SYS_readv:
	case TR_SYS_recvfrom:
	case TR_SYS_recvmsg:
	case TR_SYS_recvmmsg:
		return reads_from_outside(pid, arg0);
	default:
		return false;
	}
}
