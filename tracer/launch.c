/*
 * launch.c: getting hold of a program, by starting it or by attaching.
 *
 * Both paths use PTRACE_SEIZE, so that PTRACE_INTERRUPT works and
 * group-stops are reported as such.  A launched child stops itself before
 * exec so that it can be seized with PTRACE_O_EXITKILL; the exec is then
 * followed, and the program is run to its ELF entry point (AT_ENTRY), where
 * the dynamic loader has mapped every library it needs but no program code
 * has run.  Attaching seizes /proc/PID/task until a pass finds no thread it
 * has not seen, because threads may be created while it works.
 *
 * When the kernel refuses, the error says why in the user's terms.
 */
#include "tracer/internal.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#define TRACE_OPTIONS                                                                              \
	(PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC |     \
	 PTRACE_O_TRACEEXIT | PTRACE_O_TRACESYSGOOD)

static uint64_t read_auxv_entry(pid_t pid)
{
	char path[64];
	Elf64_auxv_t aux;
	uint64_t entry = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (read(fd, &aux, sizeof(aux)) == sizeof(aux) && aux.a_type != AT_NULL) {
		if (aux.a_type == AT_ENTRY) {
			entry = aux.a_un.a_val;
			break;
		}
	}
	close(fd);
	return entry;
}

static void exit_message(int status, int exec_errno, const char *prog, char *err, size_t len)
{
	if (exec_errno)
		snprintf(err, len, "cannot run '%s': %s", prog, strerror(exec_errno));
	else if (WIFEXITED(status))
		snprintf(err, len, "'%s' exited with status %d before reaching its entry point",
			 prog, WEXITSTATUS(status));
	else
		snprintf(err, len, "'%s' was killed by %s before reaching its entry point", prog,
			 strsignal(WTERMSIG(status)));
}

/* glibc picks AVX-512 versions of memcpy, strlen... where the CPU has
 * them, and capstone 4 cannot decode several of their instructions
 * (kmovd, vpcmpub...), so an instruction-level stepper would have to
 * single-step them and could not see what they read.  The AVX2 versions
 * do the same work.  A user's own GLIBC_TUNABLES is kept and extended. */
static void avoid_avx512_string_functions(void)
{
	static const char hwcaps[] = "glibc.cpu.hwcaps=-AVX512VL,-AVX512BW";
	const char *old = getenv("GLIBC_TUNABLES");
	char *value;

	if (old && strstr(old, "glibc.cpu.hwcaps"))
		return; /* the user chose */
	if (!old || !*old) {
		setenv("GLIBC_TUNABLES", hwcaps, 1);
		return;
	}
	if (asprintf(&value, "%s:%s", old, hwcaps) >= 0)
		setenv("GLIBC_TUNABLES", value, 1);
}

static void child_exec(struct tracer *t, char *const argv[], int errfd)
{
	sigset_t none;
	int e;

	(void)t;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Same addresses on every run, as under gdb: a schedule replays in the
	 * same layout, and a search can keep its symbol tables across runs.
	 * Where the kernel refuses, the program simply runs randomised. */
	personality(ADDR_NO_RANDOMIZE);
	avoid_avx512_string_functions();
	raise(SIGSTOP);
	execvp(argv[0], argv);
	e = errno;
	if (write(errfd, &e, sizeof(e)) < 0)
		_exit(126);
	_exit(127);
}

/* Seize the self-stopped child and follow it through its exec. */
static int follow_to_exec(pid_t pid, int *status)
{
	if (waitpid(pid, status, WSTOPPED) < 0 || !WIFSTOPPED(*status))
		return -1;
	if (ptrace(PTRACE_SEIZE, pid, 0, TRACE_OPTIONS | PTRACE_O_EXITKILL) < 0)
		return -1;
	kill(pid, SIGCONT);
	for (;;) {
		if (waitpid(pid, status, __WALL) < 0)
			return -1;
		if (!WIFSTOPPED(*status))
			return -1;
		if ((*status >> 16) == PTRACE_EVENT_EXEC)
			return 0;
		ptrace(PTRACE_CONT, pid, 0, 0);
	}
}

/* Run the freshly exec'd main thread to AT_ENTRY with a temporary int3. */
static int run_to_entry(struct tr_thread *th, char *err, size_t len)
{
	struct tr_process *p = th->proc;
	uint64_t entry = read_auxv_entry(p->pid);
	uint8_t orig, int3 = 0xcc;
	int status;

	if (!entry || tracer_read(p, entry, &orig, 1) < 0 || tracer_write(p, entry, &int3, 1) < 0) {
		snprintf(err, len, "cannot plant a breakpoint at the entry point of pid %d",
			 p->pid);
		return -1;
	}
	for (;;) {
		if (ptrace(PTRACE_CONT, th->tid, 0, (void *)(long)th->pending_signal) < 0)
			goto died;
		th->pending_signal = 0;
		if (waitpid(th->tid, &status, __WALL) < 0 || !WIFSTOPPED(status))
			goto died;
		if (WSTOPSIG(status) != SIGTRAP || (status >> 16) != 0) {
			if ((status >> 16) == 0)
				th->pending_signal = WSTOPSIG(status);
			continue;
		}
		if (tr_fetch_regs(th) < 0)
			goto died;
		if (th->regs.rip == entry + 1)
			break;
	}
	tracer_write(p, entry, &orig, 1);
	th->regs.rip = entry;
	th->regs_dirty = true;
	return 0;
died:
	snprintf(err, len, "the program died before reaching its entry point");
	return -1;
}

int tracer_launch(struct tracer *t, char *const argv[], char *err, size_t len)
{
	struct tr_process *p;
	struct tr_thread *th;
	int pipefd[2], status = 0, exec_errno = 0;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		snprintf(err, len, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(err, len, "fork: %s", strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (pid == 0)
		child_exec(t, argv, pipefd[1]);
	close(pipefd[1]);
	if (follow_to_exec(pid, &status) < 0) {
		if (read(pipefd[0], &exec_errno, sizeof(exec_errno)) != sizeof(exec_errno))
			exec_errno = 0;
		close(pipefd[0]);
		waitpid(pid, &status, __WALL);
		exit_message(status, exec_errno, argv[0], err, len);
		return -1;
	}
	close(pipefd[0]);
	p = tr_process_new(t, pid);
	th = p ? tr_thread_new(t, p, pid) : NULL;
	if (!th) {
		kill(pid, SIGKILL);
		snprintf(err, len, "out of memory");
		return -1;
	}
	p->launched = true;
	th->state = TR_HELD;
	th->started = true;
	if (run_to_entry(th, err, len) < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, __WALL);
		tr_thread_gone(th);
		return -1;
	}
	tr_queue_event(t,
		       &(struct tr_event){.kind = TR_EV_START, .thread = th, .pc = th->regs.rip});
	th->last_event = TR_EV_START;
	th->last_pc = th->regs.rip;
	return 0;
}

/* --- attach --- */

static long status_field(pid_t pid, const char *key)
{
	unsigned long long value;

	return tr_status_field(pid, 0, key, 10, &value) == 0 ? (long)value : -1;
}

static void read_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	buf[0] = 0;
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

static int ptrace_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
	int scope = 0;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &scope) != 1)
		scope = -1;
	fclose(f);
	return scope;
}

static void explain_seize_failure(pid_t pid, int err_no, char *err, size_t len)
{
	long tracer = status_field(pid, "TracerPid");
	long uid = status_field(pid, "Uid");
	int scope = ptrace_scope();
	char comm[64];

	if (err_no == ESRCH) {
		snprintf(err, len, "cannot attach to pid %d: no such process", pid);
		return;
	}
	if (err_no != EPERM) {
		snprintf(err, len, "cannot attach to pid %d: %s", pid, strerror(err_no));
		return;
	}
	if (tracer > 0) {
		read_comm((pid_t)tracer, comm, sizeof(comm));
		snprintf(err, len, "cannot attach to pid %d: it is already traced by pid %ld (%s)",
			 pid, tracer, comm[0] ? comm : "?");
	} else if (uid >= 0 && geteuid() != 0 && (uid_t)uid != geteuid()) {
		snprintf(err, len,
			 "cannot attach to pid %d: permission denied (it runs as uid %ld, "
			 "cctrace as uid %d)",
			 pid, uid, geteuid());
	} else if (scope >= 1) {
		snprintf(err, len,
			 "cannot attach to pid %d: permission denied by kernel.yama.ptrace_scope = "
			 "%d (%s)",
			 pid, scope,
			 scope == 1   ? "only descendants may be traced; run as root or set it to 0"
			 : scope == 2 ? "only CAP_SYS_PTRACE may trace; run as root"
				      : "ptrace is disabled until reboot");
	} else {
		snprintf(err, len,
			 "cannot attach to pid %d: permission denied (not dumpable, or missing "
			 "CAP_SYS_PTRACE)",
			 pid);
	}
}

static int cmp_tid(const void *a, const void *b)
{
	return *(const pid_t *)a - *(const pid_t *)b;
}

/* The tids in /proc/PID/task, leader first then ascending. */
static int list_tasks(pid_t pid, pid_t *tids, int max)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d)) && n < max) {
		pid_t tid = (pid_t)atoi(de->d_name);

		if (tid > 0)
			tids[n++] = tid;
	}
	closedir(d);
	qsort(tids, (size_t)n, sizeof(*tids), cmp_tid);
	return n;
}

/* A thread that has ended but is not reaped yet: the main thread of a
 * process that called pthread_exit stays so while the others run. */
static bool task_is_zombie(pid_t pid, pid_t tid)
{
	char path[64], line[512], *state;
	FILE *f;
	bool zombie = false;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fgets(line, sizeof(line), f) && (state = strrchr(line, ')')))
		zombie = state[1] == ' ' && state[2] == 'Z';
	fclose(f);
	return zombie;
}

static int seize_new_tasks(struct tracer *t, struct tr_process *p, int *seized)
{
	enum { MAX_TASKS = 8192 };
	static pid_t tids[MAX_TASKS];
	int i, n = list_tasks(p->pid, tids, MAX_TASKS);

	*seized = 0;
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		struct tr_thread *th = tracer_thread_by_tid(t, tids[i]);

		if (th)
			continue;
		if (ptrace(PTRACE_SEIZE, tids[i], 0, TRACE_OPTIONS) < 0) {
			if (errno == ESRCH || (errno == EPERM && task_is_zombie(p->pid, tids[i])))
				continue; /* exited meanwhile, or ended and not reaped */
			return -1;
		}
		th = tr_thread_new(t, p, tids[i]);
		if (!th)
			return -1;
		th->started = true;
		(*seized)++;
	}
	return 0;
}

static int hold_seized_thread(struct tr_thread *th)
{
	int status;

	if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0)
		goto gone;
	for (;;) {
		if (waitpid(th->tid, &status, __WALL) < 0 || !WIFSTOPPED(status))
			goto gone;
		if ((status >> 16) == PTRACE_EVENT_STOP)
			break;
		if ((status >> 16) == 0 && WSTOPSIG(status) != SIGTRAP) {
			/* A signal was on its way: deliver it when we resume. */
			th->pending_signal = WSTOPSIG(status);
			break;
		}
		/* Some other ptrace event got there first; it is stopped too. */
		break;
	}
	th->state = TR_HELD;
	return tr_fetch_regs(th);
gone:
	tr_thread_gone(th);
	return 0;
}

/* Seize pid and every thread of it, until no new thread appears, and hold
 * them: a new process of the table. */
static int attach_process(struct tracer *t, pid_t pid, char *err, size_t len)
{
	struct tr_process *p;
	struct tr_thread *th;
	int seized;

	bool leader_ended = false;

	if (ptrace(PTRACE_SEIZE, pid, 0, TRACE_OPTIONS) < 0) {
		/* Its main thread has ended; the other threads are the process. */
		leader_ended = errno == EPERM && task_is_zombie(pid, pid);
		if (!leader_ended) {
			explain_seize_failure(pid, errno, err, len);
			return -1;
		}
	}
	p = tr_process_new(t, pid);
	th = p && !leader_ended ? tr_thread_new(t, p, pid) : NULL;
	if (!p || (!leader_ended && !th)) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	if (th)
		th->started = true;
	do {
		if (seize_new_tasks(t, p, &seized) < 0) {
			snprintf(err, len, "cannot attach to the threads of pid %d: %s", pid,
				 strerror(errno));
			return -1;
		}
	} while (seized > 0);
	for (th = t->threads; th; th = th->next)
		if (th->proc == p && th->state == TR_RUNNING && hold_seized_thread(th) < 0)
			return -1;
	if (leader_ended && tr_mem_open(p) < 0) {
		snprintf(err, len, "cannot open the memory of pid %d: %s", pid, strerror(errno));
		return -1;
	}
	return 0;
}

/* The processes whose parent is pid, ascending. */
static int list_children(pid_t pid, pid_t *kids, int max)
{
	struct dirent *de;
	DIR *d = opendir("/proc");
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		pid_t kid = (pid_t)atoi(de->d_name);

		/* /proc lists processes (thread-group leaders) only. */
		if (kid > 0 && kid != pid && status_field(kid, "PPid") == pid)
			kids[n++] = kid;
	}
	closedir(d);
	qsort(kids, (size_t)n, sizeof(*kids), cmp_tid);
	return n;
}

/*
 * A server's workers are children of the pid the user gives (Apache's
 * prefork, a pre-forked pool): they are attached too, depth first, as
 * processes p2, p3...  One that cannot be traced (another tracer has it,
 * or it exited meanwhile) is left alone: the parent is what was asked
 * for.  One forked after the parent was seized is already ours, through
 * PTRACE_O_TRACEFORK, and is skipped here.
 */
static void attach_children(struct tracer *t, pid_t parent, int depth)
{
	pid_t kids[256];
	char err[256];
	int i, n = list_children(parent, kids, 256);

	for (i = 0; i < n && depth < 8; i++) {
		if (tracer_thread_by_tid(t, kids[i]))
			continue;
		if (attach_process(t, kids[i], err, sizeof(err)) == 0)
			attach_children(t, kids[i], depth + 1);
	}
}

int tracer_attach(struct tracer *t, pid_t pid, char *err, size_t len)
{
	if (pid <= 0 || (kill(pid, 0) < 0 && errno == ESRCH)) {
		snprintf(err, len, "cannot attach to pid %d: no such process", pid);
		return -1;
	}
	if (pid == getpid()) {
		snprintf(err, len, "cannot attach to pid %d: that is cctrace itself", pid);
		return -1;
	}
	if (status_field(pid, "Tgid") != pid) {
		snprintf(err, len,
			 "cannot attach to pid %d: it is a thread of pid %ld; give the "
			 "process id",
			 pid, status_field(pid, "Tgid"));
		return -1;
	}
	/* Before anything is changed in any process. */
	if (tr_guard_start(t, err, len) < 0)
		return -1;
	if (attach_process(t, pid, err, len) < 0)
		return -1;
	attach_children(t, pid, 0);
	return 0;
}
