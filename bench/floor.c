/*
 * floor.c: the least a ptrace controller can do per breakpoint hit.
 *
 *   floor [--no-pin] [--extra WHAT] HOOK_SYMBOL_VALUE -- PROGRAM [ARGS...]
 *
 * Runs PROGRAM under PTRACE_TRACEME (with PTRACE_O_TRACECLONE so that its
 * threads are traced too), plants an int3 over the 1-byte nop that starts
 * the function whose symbol value (from nm) is given, and on each hit just
 * PTRACE_CONTs: the nop is skipped, so no register is read or written.  By
 * default the tracer and the program share one CPU, as cctrace pins them.
 * Prints the number of hits on stdout; exits non-zero if anything fails.
 *
 * --extra adds, per hit, the work cctrace does that the floor does not, to
 * see what each costs: a comma-separated list of
 *   regs        PTRACE_GETREGS at the stop, PTRACE_SETREGS before resuming
 *   mem         pwrite the original byte back through /proc/PID/mem after the
 *               stop and the int3 again before resuming (the int3 stays
 *               needed: the write is of 0xcc both times, so hits still work)
 *   sigwait     waitpid(WNOHANG) then sigtimedwait(SIGCHLD) before the
 *               blocking waitpid, as tracer_wait does
 *   sigpending  one sigpending() per hit, as the repeat loop does
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "floor: %s: %s\n", what, strerror(errno));
	exit(3);
}

static int is_pie(const char *path)
{
	Elf64_Ehdr eh;
	FILE *f = fopen(path, "rb");

	if (!f || fread(&eh, sizeof(eh), 1, f) != 1)
		die(path);
	fclose(f);
	return eh.e_type == ET_DYN;
}

/* Load address of the executable of pid: its lowest file-offset-0 mapping. */
static uint64_t load_base(pid_t pid)
{
	char path[64], line[512], exe[512], name[512];
	unsigned long lo, off, best = 0;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n < 0)
		die("readlink exe");
	exe[n] = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		die("maps");
	while (fgets(line, sizeof(line), f)) {
		name[0] = 0;
		if (sscanf(line, "%lx-%*x %*s %lx %*s %*d %511s", &lo, &off, name) < 2)
			continue;
		if (off == 0 && strcmp(name, exe) == 0 && (!best || lo < best))
			best = lo;
	}
	fclose(f);
	if (!best) {
		fprintf(stderr, "floor: %s not found in maps\n", exe);
		exit(3);
	}
	return best;
}

static int x_regs, x_mem, x_sigwait, x_sigpending;

static void parse_extra(char *what)
{
	char *tok;

	for (tok = strtok(what, ","); tok; tok = strtok(NULL, ",")) {
		if (strcmp(tok, "regs") == 0)
			x_regs = 1;
		else if (strcmp(tok, "mem") == 0)
			x_mem = 1;
		else if (strcmp(tok, "sigwait") == 0)
			x_sigwait = 1;
		else if (strcmp(tok, "sigpending") == 0)
			x_sigpending = 1;
		else {
			fprintf(stderr, "floor: unknown --extra '%s'\n", tok);
			exit(3);
		}
	}
}

int main(int argc, char **argv)
{
	int pin = 1, argi = 1, status, cpu = -1, mem_fd = -1;
	struct user_regs_struct regs;
	const uint8_t int3 = 0xcc;
	sigset_t chld, pending;
	unsigned long long hits = 0;
	uint64_t addr;
	long word;
	cpu_set_t set;
	pid_t child, tid;

	if (argi < argc && strcmp(argv[argi], "--no-pin") == 0) {
		pin = 0;
		argi++;
	}
	if (argc - argi >= 2 && strcmp(argv[argi], "--extra") == 0) {
		parse_extra(argv[argi + 1]);
		argi += 2;
	}
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	if (argc - argi < 3 || strcmp(argv[argi + 1], "--") != 0) {
		fprintf(stderr, "usage: floor [--no-pin] HOOK_SYMBOL_VALUE -- PROGRAM [ARGS...]\n");
		return 3;
	}
	addr = strtoull(argv[argi], NULL, 16);
	if (pin) {
		cpu = sched_getcpu();
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (cpu < 0 || sched_setaffinity(0, sizeof(set), &set) < 0)
			die("sched_setaffinity");
	}
	child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		/* The affinity is inherited through exec and by every thread. */
		if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0)
			die("PTRACE_TRACEME");
		execvp(argv[argi + 2], argv + argi + 2);
		die(argv[argi + 2]);
	}
	if (waitpid(child, &status, 0) < 0 || !WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP) {
		fprintf(stderr, "floor: %s did not stop at exec\n", argv[argi + 2]);
		return 3;
	}
	if (ptrace(PTRACE_SETOPTIONS, child, 0, PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL) < 0)
		die("PTRACE_SETOPTIONS");
	if (is_pie(argv[argi + 2]))
		addr += load_base(child);
	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, child, (void *)addr, 0);
	if (errno)
		die("PTRACE_PEEKTEXT");
	if ((word & 0xff) != 0x90) {
		fprintf(stderr, "floor: the byte at %#lx is %#lx, not a nop\n", (unsigned long)addr,
			word & 0xff);
		return 3;
	}
	if (ptrace(PTRACE_POKETEXT, child, (void *)addr, (void *)((word & ~0xffL) | 0xcc)) < 0)
		die("PTRACE_POKETEXT");
	if (x_mem) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/mem", child);
		mem_fd = open(path, O_RDWR | O_CLOEXEC);
		if (mem_fd < 0)
			die(path);
	}
	if (ptrace(PTRACE_CONT, child, 0, 0) < 0)
		die("PTRACE_CONT");
	for (;;) {
		int sig = 0, event;

		if (x_sigwait) {
			tid = waitpid(-1, &status, __WALL | WNOHANG);
			if (tid == 0) {
				struct timespec ts = {10, 0};

				sigtimedwait(&chld, NULL, &ts);
				tid = waitpid(-1, &status, __WALL);
			}
		} else {
			tid = waitpid(-1, &status, __WALL);
		}
		if (tid < 0) {
			if (errno == ECHILD)
				break;
			die("waitpid");
		}
		if (!WIFSTOPPED(status)) {
			if (tid == child && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
				fprintf(stderr, "floor: the program failed (status %#x)\n", status);
				return 3;
			}
			continue;
		}
		event = status >> 16;
		if (event == 0 && WSTOPSIG(status) == SIGTRAP) {
			hits++; /* our int3: the nop is skipped, nothing to fix */
			if (x_regs && ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
				die("PTRACE_GETREGS");
			if (x_mem && pwrite(mem_fd, &int3, 1, (off_t)addr) != 1)
				die("pwrite");
			if (x_sigpending)
				sigpending(&pending);
			if (x_mem && pwrite(mem_fd, &int3, 1, (off_t)addr) != 1)
				die("pwrite");
			if (x_regs && ptrace(PTRACE_SETREGS, tid, 0, &regs) < 0)
				die("PTRACE_SETREGS");
		} else if (event == 0 && WSTOPSIG(status) != SIGSTOP)
			sig = WSTOPSIG(status);
		ptrace(PTRACE_CONT, tid, 0, (void *)(long)sig);
	}
	printf("%llu\n", hits);
	return 0;
}
