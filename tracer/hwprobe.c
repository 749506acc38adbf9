/*
 * hwprobe.c: do debug-register watchpoints fire on this host?
 *
 * On some hosts (AMD machines under Firecracker, seen with kernel 6.18) the
 * kernel accepts DR0-DR7 through PTRACE_POKEUSER and reads them back, and
 * the CPU never traps: a watchpoint is armed and silently never fires.
 * Nothing in the ptrace interface tells, so the only way to know is to try:
 * fork a child that stops, arm DR0 on a variable the child then writes, and
 * see whether it stops with SIGTRAP before it exits.
 *
 * The answer cannot change while the machine is up, and a search starts
 * cctrace many times, so it is kept per boot in
 * $XDG_CACHE_HOME/cctrace/hw-watchpoints (or ~/.cache/...) keyed on
 * /proc/sys/kernel/random/boot_id.  The cache is only an optimisation: a
 * file that cannot be read or written costs a probe (about a millisecond),
 * never a wrong answer, and a probe that could not run is not cached.
 *
 * The probe must run before anything is traced: tracer_wait reaps every
 * child of cctrace, and the probe waits for its own child by pid.
 */
#include "tracer/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define DR_OFFSET(i) offsetof(struct user, u_debugreg[i])

static volatile long probe_target;

static int read_boot_id(char *buf, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	int ok;

	if (!f)
		return -1;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return buf[0] ? 0 : -1;
}

static int cache_path(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (xdg && xdg[0] == '/')
		n = snprintf(buf, len, "%s/cctrace/hw-watchpoints", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, len, "%s/.cache/cctrace/hw-watchpoints", home);
	else
		return -1;
	return n > 0 && (size_t)n < len ? 0 : -1;
}

/* 1 / 0 from the cache if it was written in this boot, -1 if not. */
static int cache_lookup(const char *path, const char *boot_id)
{
	char line[128], id[64];
	int fired = -1, fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	FILE *f;
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -1;
	}
	if (fgets(line, sizeof(line), f) && sscanf(line, "%63s %d", id, &fired) == 2 &&
	    strcmp(id, boot_id) == 0 && (fired == 0 || fired == 1)) {
		fclose(f);
		return fired;
	}
	fclose(f);
	return -1;
}

static void mkdir_parents(char *path)
{
	char *slash;

	for (slash = strchr(path + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0700);
		*slash = '/';
	}
}

/* Written to a temporary name and renamed, so that two cctraces starting
 * at once never read half a line. */
static void cache_store(char *path, const char *boot_id, int fired)
{
	char tmp[4200];
	FILE *f;

	mkdir_parents(path);
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "%s %d\n", boot_id, fired);
	if (fclose(f) != 0 || rename(tmp, path) != 0)
		unlink(tmp);
}

static void probe_child(void)
{
	if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0)
		_exit(2);
	raise(SIGSTOP);
	probe_target = 1;
	_exit(0);
}

static int arm_dr0(pid_t pid)
{
	unsigned long dr7 = 1ul | (1ul << 16) | (3ul << 18); /* L0, write, 8 bytes */

	if (ptrace(PTRACE_POKEUSER, pid, DR_OFFSET(0), &probe_target) < 0)
		return -1;
	return (int)ptrace(PTRACE_POKEUSER, pid, DR_OFFSET(7), dr7);
}

static int wait_child(pid_t pid, int *status)
{
	while (waitpid(pid, status, __WALL) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

/* 1: fired, 0: did not, -1: could not tell (why says). */
static int probe(char *why, size_t len)
{
	int status = 0, fired = -1;
	pid_t pid = fork();

	if (pid < 0) {
		snprintf(why, len, "cannot fork the probe: %s", strerror(errno));
		return -1;
	}
	if (pid == 0)
		probe_child();
	if (wait_child(pid, &status) < 0 || !WIFSTOPPED(status)) {
		snprintf(why, len, "the probe could not be traced");
		goto reap;
	}
	if (arm_dr0(pid) < 0) {
		snprintf(why, len, "the kernel refused DR0/DR7: %s", strerror(errno));
		fired = 0;
		goto kill;
	}
	if (ptrace(PTRACE_CONT, pid, 0, 0) < 0 || wait_child(pid, &status) < 0) {
		snprintf(why, len, "the probe could not be resumed");
		goto kill;
	}
	fired = WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP;
	if (!fired)
		snprintf(why, len,
			 "this host's debug registers do not trap (a probe: the kernel took "
			 "DR0-DR7, and a write to the watched variable ran on)");
kill:
	if (WIFSTOPPED(status) || fired < 0)
		kill(pid, SIGKILL);
reap:
	if (!WIFEXITED(status) && !WIFSIGNALED(status))
		wait_child(pid, &status);
	return fired;
}

int tracer_hw_watchpoints_fire(char *why, size_t len)
{
	char boot_id[64], path[4096];
	int have_cache, fired;

	have_cache =
	    read_boot_id(boot_id, sizeof(boot_id)) == 0 && cache_path(path, sizeof(path)) == 0;
	if (have_cache) {
		fired = cache_lookup(path, boot_id);
		if (fired == 0)
			snprintf(why, len,
				 "this host's debug registers do not trap (probed once this boot; "
				 "see %s)",
				 path);
		if (fired >= 0)
			return fired;
	}
	fired = probe(why, len);
	if (fired >= 0 && have_cache)
		cache_store(path, boot_id, fired);
	return fired;
}
