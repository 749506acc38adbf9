/*
 * launch.c: getting hold of a program, by starting it or by attaching.
 *
 * Both paths use PTRACE_SEIZE, so that PTRACE_INTERRUPT works and
 * group-stops are reported as such.  A launched child stops itself before
 * exec so that it can be seized with PTRACE_O_EXITKILL; the exec is then
 * followed, and the program is run to its ELF entry point (AT_ENTRY), where
 * the dynamic loader has mapped every library it needs but no program code
 * has run.  With own_pgrp the child first makes a process group of its
 * own (see terminal.c).  Attaching seizes /proc/PID/task until a pass
 * finds no thread it has not seen, because threads may be created while
 * it works.
 *
 * When the kernel refuses, the error says why in the user's terms.
 */
#include "tracer/internal.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

/* The value of pid's auxiliary vector entry of type, or 0. */
uint64_t tr_auxv_value(pid_t pid, uint64_t type)
{
	char path[64];
	Elf64_auxv_t aux;
	uint64_t value = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (read(fd, &aux, sizeof(aux)) == sizeof(aux) && aux.a_type != AT_NULL) {
		if (aux.a_type == type) {
			value = aux.a_un.a_val;
			break;
		}
	}
	close(fd);
	return value;
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

	/* Its own process group, so that the terminal's Ctrl-C is cctrace's
	 * (terminal.c); the parent does the same, whichever runs first.  From
	 * the background, a read of the terminal must raise SIGTTIN (SIGTTOU
	 * for a change of its modes), for cctrace to hand the terminal over:
	 * inherited as ignored (from a shell without job control), the read
	 * would fail with EIO instead. */
	if (t->opt.own_pgrp) {
		setpgid(0, 0);
		signal(SIGTTIN, SIG_DFL);
		signal(SIGTTOU, SIG_DFL);
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (t->opt.null_stdout || t->opt.null_stderr) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0 && t->opt.null_stdout)
			dup2(null, STDOUT_FILENO);
		if (null >= 0 && t->opt.null_stderr)
			dup2(null, STDERR_FILENO);
		if (null > STDERR_FILENO)
			close(null);
	}
	if (t->opt.stdout_to_stderr && !t->opt.null_stdout)
		dup2(STDERR_FILENO, STDOUT_FILENO);
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

/* Everything here assumes x86-64 registers and instructions: a 32-bit
 * (or foreign) program is refused before a byte of it is written.
 * /proc/PID/exe opens even if the file was deleted. */
static int check_exe_kind(pid_t pid, const char *what, char *err, size_t len)
{
	Elf64_Ehdr eh;
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* a kernel thread or a zombie: told otherwise */
	n = read(fd, &eh, sizeof(eh));
	close(fd);
	if (n < EI_NIDENT || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		return 0;
	if (eh.e_ident[EI_CLASS] == ELFCLASS64 && n == sizeof(eh) && eh.e_machine == EM_X86_64)
		return 0;
	snprintf(err, len,
		 "cannot %s pid %d: its program is a %s ELF executable: cctrace traces "
		 "x86-64 programs only",
		 what, pid, eh.e_ident[EI_CLASS] == ELFCLASS32 ? "32-bit" : "non-x86-64");
	return -1;
}

/* How long a launched program may take from fork to its entry point
 * (exec, the dynamic loader) before cctrace gives up on it, saying so. */
#define LAUNCH_TIMEOUT_MS 60000

enum launch_failure {
	LAUNCH_OK,
	LAUNCH_ENDED,	    /* status holds how it ended */
	LAUNCH_SEIZE,	    /* PTRACE_SEIZE failed: errno in seize_errno */
	LAUNCH_INTERRUPTED, /* a stop signal reached cctrace */
	LAUNCH_TIMEOUT,
};

struct launch {
	pid_t pid;
	int status;
	bool reaped;
	enum launch_failure failure;
	int seize_errno;
	int64_t deadline;
};

/* The launched child's next wait status; -1 with l->failure set if it
 * ended (reaped), cctrace was interrupted, or the deadline passed. */
static int launch_wait(struct launch *l)
{
	switch (tr_wait_task(l->pid, l->pid, l->deadline, true, &l->status)) {
	case TR_TASK_STATUS:
		if (WIFSTOPPED(l->status))
			return 0;
		l->reaped = true;
		l->failure = LAUNCH_ENDED;
		return -1;
	case TR_TASK_STOP:
		l->failure = LAUNCH_INTERRUPTED;
		return -1;
	default:
		l->failure = LAUNCH_TIMEOUT;
		return -1;
	}
}

/* Seize the self-stopped child and follow it through its exec. */
static int follow_to_exec(struct launch *l)
{
	if (launch_wait(l) < 0)
		return -1;
	if (ptrace(PTRACE_SEIZE, l->pid, 0, TR_TRACE_OPTIONS | PTRACE_O_EXITKILL) < 0) {
		l->seize_errno = errno;
		l->failure = LAUNCH_SEIZE;
		return -1;
	}
	kill(l->pid, SIGCONT);
	for (;;) {
		if (launch_wait(l) < 0)
			return -1;
		if ((l->status >> 16) == PTRACE_EVENT_EXEC)
			return 0;
		ptrace(PTRACE_CONT, l->pid, 0, 0);
	}
}

/* Kill a child that is of no use, and reap it, whether it is traced or
 * not (a traced one stops once more, at its exit event).  Bounded. */
static void kill_and_reap(struct launch *l)
{
	int64_t deadline = tracer_now_ms() + TR_STOP_TIMEOUT_MS;

	if (l->reaped)
		return;
	kill(l->pid, SIGKILL);
	while (tr_wait_task(l->pid, l->pid, deadline, false, &l->status) == TR_TASK_STATUS) {
		if (!WIFSTOPPED(l->status)) {
			l->reaped = true;
			return;
		}
		ptrace(PTRACE_CONT, l->pid, 0, 0);
	}
}

/* Why we could not trace a child of our own: nothing about the child can
 * be the cause, so it is where cctrace runs. */
static void explain_launch_refusal(const struct launch *l, const char *prog, char *err, size_t len)
{
	unsigned long long seccomp = 0;
	int scope = ptrace_scope();

	tr_status_field(getpid(), 0, "Seccomp", 10, &seccomp);
	if (seccomp == 2)
		snprintf(err, len,
			 "cannot trace '%s': ptrace fails with \"%s\" because cctrace runs under "
			 "a seccomp filter that denies it (Seccomp: 2 in /proc/%d/status; a "
			 "container's default profile does this): run cctrace where ptrace is "
			 "allowed (e.g. docker run --cap-add=SYS_PTRACE, or --security-opt "
			 "seccomp=unconfined)",
			 prog, strerror(l->seize_errno), (int)getpid());
	else if (scope == 3)
		snprintf(err, len,
			 "cannot trace '%s': ptrace is disabled until reboot "
			 "(kernel.yama.ptrace_scope = 3)",
			 prog);
	else if (l->seize_errno == EPERM || l->seize_errno == EACCES)
		snprintf(err, len,
			 "cannot trace '%s': ptrace is denied to cctrace (%s): a security module "
			 "(SELinux, AppArmor) or a missing CAP_SYS_PTRACE forbids it",
			 prog, strerror(l->seize_errno));
	else
		snprintf(err, len, "cannot trace '%s': ptrace: %s", prog, strerror(l->seize_errno));
}

static void launch_message(const struct launch *l, int exec_errno, const char *prog, char *err,
			   size_t len)
{
	switch (l->failure) {
	case LAUNCH_SEIZE:
		explain_launch_refusal(l, prog, err, len);
		return;
	case LAUNCH_INTERRUPTED:
		snprintf(err, len, "interrupted by %s before '%s' started",
			 sigabbrev_np(tracer_stop_signal(false)) ?: "a signal", prog);
		return;
	case LAUNCH_TIMEOUT:
		snprintf(err, len, "'%s' did not reach its entry point within %d s", prog,
			 LAUNCH_TIMEOUT_MS / 1000);
		return;
	case LAUNCH_OK:
	case LAUNCH_ENDED:
		exit_message(l->status, exec_errno, prog, err, len);
		return;
	}
}

/* Run the freshly exec'd main thread to AT_ENTRY with a temporary int3. */
static int run_to_entry(struct tr_thread *th, struct launch *l)
{
	struct tr_process *p = th->proc;
	uint64_t entry = tr_auxv_value(p->pid, AT_ENTRY);
	uint8_t orig, int3 = 0xcc;

	if (!entry || tracer_read(p, entry, &orig, 1) < 0 || tracer_write(p, entry, &int3, 1) < 0)
		return -1;
	for (;;) {
		if (ptrace(PTRACE_CONT, th->tid, 0, (void *)(long)th->pending_signal) < 0)
			return -1;
		th->pending_signal = 0;
		if (launch_wait(l) < 0)
			return -1;
		if (WSTOPSIG(l->status) != SIGTRAP || (l->status >> 16) != 0) {
			if ((l->status >> 16) == 0)
				th->pending_signal = WSTOPSIG(l->status);
			continue;
		}
		if (tr_fetch_regs(th) < 0)
			return -1;
		if (th->regs.rip == entry + 1)
			break;
	}
	tracer_write(p, entry, &orig, 1);
	th->regs.rip = entry;
	tr_set(th, TF_REGS_DIRTY);
	return 0;
}

int tracer_launch(struct tracer *t, char *const argv[], char *err, size_t len)
{
	struct launch l = {.deadline = tracer_now_ms() + LAUNCH_TIMEOUT_MS};
	struct tr_process *p;
	struct tr_thread *th;
	int pipefd[2], exec_errno = 0;

	/* Non-blocking: the child's errno is read once it is dead, but a
	 * read must not hang on a child that could not be reaped. */
	if (pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) < 0) {
		snprintf(err, len, "pipe: %s", strerror(errno));
		return -1;
	}
	l.pid = fork();
	if (l.pid < 0) {
		snprintf(err, len, "fork: %s", strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (l.pid == 0)
		child_exec(t, argv, pipefd[1]);
	if (t->opt.own_pgrp)
		setpgid(l.pid, l.pid);
	close(pipefd[1]);
	if (follow_to_exec(&l) < 0) {
		kill_and_reap(&l);
		if (read(pipefd[0], &exec_errno, sizeof(exec_errno)) != sizeof(exec_errno))
			exec_errno = 0;
		close(pipefd[0]);
		launch_message(&l, exec_errno, argv[0], err, len);
		return -1;
	}
	close(pipefd[0]);
	if (check_exe_kind(l.pid, "trace", err, len) < 0) {
		kill_and_reap(&l);
		return -1;
	}
	p = tr_process_new(t, l.pid);
	th = p ? tr_thread_new(t, p, l.pid) : NULL;
	if (!th) {
		kill_and_reap(&l);
		snprintf(err, len, "out of memory");
		return -1;
	}
	p->launched = true;
	tr_mark_held(th);
	tr_set(th, TF_STARTED);
	if (run_to_entry(th, &l) < 0) {
		if (l.failure != LAUNCH_OK)
			launch_message(&l, 0, argv[0], err, len);
		else
			snprintf(err, len, "cannot plant a breakpoint at the entry point of pid %d",
				 p->pid);
		kill_and_reap(&l);
		tr_thread_gone(th);
		return -1;
	}
	if (tr_queue_event(
		t, &(struct tr_event){.kind = TR_EV_START, .thread = th, .pc = th->regs.rip}) < 0) {
		kill_and_reap(&l);
		tr_thread_gone(th);
		snprintf(err, len, "out of memory");
		return -1;
	}
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

/* How a zombie ended: the exit_code field (the 52nd) of its stat. */
static bool zombie_status(pid_t pid, int *status)
{
	char path[64], line[1024], *at;
	int field;
	FILE *f;
	bool ok = false;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fgets(line, sizeof(line), f) && (at = strrchr(line, ')'))) {
		/* Field 2 ends at the ')'; count the spaces after it. */
		for (field = 2; field < 52 && (at = strchr(at + 1, ' ')); field++)
			;
		ok = at && sscanf(at, " %d", status) == 1;
	}
	fclose(f);
	return ok;
}

/* The process died while we seized and held it. */
static void vanished_message(pid_t pid, char *err, size_t len)
{
	char how[64] = "";
	int status;

	if (zombie_status(pid, &status) && WIFSIGNALED(status))
		snprintf(how, sizeof(how), " (killed by %s)",
			 sigabbrev_np(WTERMSIG(status)) ?: "?");
	else if (zombie_status(pid, &status) && WIFEXITED(status))
		snprintf(how, sizeof(how), " (exit status %d)", WEXITSTATUS(status));
	snprintf(err, len,
		 "cannot attach to pid %d: the target exited while cctrace was attaching%s", pid,
		 how);
}

static void explain_seize_failure(pid_t pid, int err_no, char *err, size_t len)
{
	long tracer = status_field(pid, "TracerPid");
	long uid = status_field(pid, "Uid");
	int scope = ptrace_scope();
	unsigned long long seccomp = 0;
	char comm[64];

	tr_status_field(getpid(), 0, "Seccomp", 10, &seccomp);
	if (err_no == ESRCH) {
		/* It was there a moment ago (tracer_attach_check). */
		vanished_message(pid, err, len);
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
	} else if (seccomp == 2) {
		snprintf(err, len,
			 "cannot attach to pid %d: ptrace is denied by a seccomp filter cctrace "
			 "runs under (Seccomp: 2 in /proc/%d/status; a container's default "
			 "profile does this): run cctrace where ptrace is allowed",
			 pid, (int)getpid());
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

/* Pids read from /proc, as many as there are: a process may have more
 * threads, a server more workers, than any fixed array would hold, and
 * one left out would run on untraced. */
struct pid_list {
	pid_t *v;
	int n, cap;
};

static int pid_list_add(struct pid_list *l, pid_t pid)
{
	if (l->n == l->cap) {
		int cap = l->cap ? l->cap * 2 : 8;
		pid_t *v = realloc(l->v, sizeof(*v) * (size_t)cap);

		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = pid;
	return 0;
}

/* The tids in /proc/PID/task, ascending (the leader's is the lowest
 * unless the pids wrapped); -1 if pid is gone or out of memory. */
static int list_tasks(pid_t pid, struct pid_list *out)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int rc = 0;

	out->n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while (rc == 0 && (de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);

		if (tid > 0)
			rc = pid_list_add(out, tid);
	}
	closedir(d);
	if (out->n > 1)
		qsort(out->v, (size_t)out->n, sizeof(*out->v), cmp_tid);
	return rc;
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

static bool traced_by_us(pid_t pid, pid_t tid)
{
	unsigned long long tracer = 0;

	return tr_status_field(pid, tid, "TracerPid", 10, &tracer) == 0 &&
	       (pid_t)tracer == getpid();
}

/* Why thread tid of p cannot be seized: another tracer has it (strace -p
 * of one thread), or what the kernel said. */
static void explain_thread_refused(struct tr_process *p, pid_t tid, int err_no, char *err,
				   size_t len)
{
	unsigned long long tracer = 0;
	char comm[64];

	if (err_no == EPERM && tr_status_field(p->pid, tid, "TracerPid", 10, &tracer) == 0 &&
	    tracer > 0) {
		read_comm((pid_t)tracer, comm, sizeof(comm));
		snprintf(err, len,
			 "cannot attach to thread %d of pid %d: it is already traced by pid %llu "
			 "(%s)",
			 (int)tid, (int)p->pid, tracer, comm[0] ? comm : "?");
		return;
	}
	snprintf(err, len, "cannot attach to thread %d of pid %d: %s", (int)tid, (int)p->pid,
		 strerror(err_no));
}

static int seize_new_tasks(struct tracer *t, struct tr_process *p, int *seized, char *err,
			   size_t len)
{
	struct pid_list tids = {0};
	int i, rc = -1;

	*seized = 0;
	if (list_tasks(p->pid, &tids) < 0) {
		snprintf(err, len, "cannot list the threads of pid %d: %s", (int)p->pid,
			 strerror(errno));
		goto out;
	}
	for (i = 0; i < tids.n; i++) {
		pid_t tid = tids.v[i];
		struct tr_thread *th = tracer_thread_by_tid(t, tid);

		if (th)
			continue;
		if (ptrace(PTRACE_SEIZE, tid, 0, TR_TRACE_OPTIONS) < 0) {
			/* Exited meanwhile, ended and not reaped, or exiting (the
			 * kernel refuses to attach a task in do_exit). */
			if (errno == ESRCH || (errno == EPERM && tr_task_dying(p->pid, tid)))
				continue;
			/* Created by a thread we had seized already: it is ours
			 * from birth (PTRACE_O_TRACECLONE), its clone event not
			 * decoded yet. */
			if (errno != EPERM || !traced_by_us(p->pid, tid)) {
				explain_thread_refused(p, tid, errno, err, len);
				goto out;
			}
		}
		th = tr_thread_new(t, p, tid);
		if (!th) {
			snprintf(err, len, "out of memory");
			goto out;
		}
		tr_set(th, TF_STARTED);
		tr_clear(th, TF_DR7_CLEAR); /* it ran before us: anything may be set */
		(*seized)++;
	}
	rc = 0;
out:
	free(tids.v);
	return rc;
}

/* Hold a thread just seized.  Whatever it reports instead of the stop (an
 * exit, an exec, a signal) is decoded and queued like any event; one that
 * dies meanwhile is simply not held.  -1 only if a stop signal (Ctrl-C)
 * cut the attach short. */
static int hold_seized_thread(struct tracer *t, struct tr_thread *th)
{
	if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0) {
		tr_thread_vanished(th, TR_TASK_VANISHED);
		return 0;
	}
	tr_set(th, TF_INTERRUPTING);
	tr_clear(th, TF_REPORT_INTERRUPT);
	/* A thread that does not stop within TR_STOP_TIMEOUT_MS (asleep
	 * uninterruptibly in the kernel) stays running, its interrupt
	 * pending: its stop, when it comes, is taken silently, and the
	 * schedule holds it at its first event like any free thread. */
	if (tr_wait_for_stop(t, th) < 0 && th->state == TR_RUNNING && !tr_has(th, TF_EXITING) &&
	    tracer_stop_signal(false))
		return -1;
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

	if (ptrace(PTRACE_SEIZE, pid, 0, TR_TRACE_OPTIONS) < 0) {
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
	if (th) {
		tr_set(th, TF_STARTED);
		tr_clear(th, TF_DR7_CLEAR);
	}
	do {
		if (seize_new_tasks(t, p, &seized, err, len) < 0) {
			if (tracer_process_exiting(p))
				vanished_message(pid, err, len);
			return -1;
		}
	} while (seized > 0);
	for (th = t->threads; th; th = th->next)
		if (th->proc == p && th->state == TR_RUNNING && !tr_has(th, TF_EXITING) &&
		    hold_seized_thread(t, th) < 0) {
			snprintf(err, len, "interrupted by %s while attaching to pid %d",
				 sigabbrev_np(tracer_stop_signal(false)) ?: "a signal", pid);
			return -1;
		}
	if (!p->alive || tracer_process_exiting(p)) {
		vanished_message(pid, err, len);
		return -1;
	}
	if (leader_ended && tr_mem_open(p) < 0) {
		snprintf(err, len, "cannot open the memory of pid %d: %s", pid, strerror(errno));
		return -1;
	}
	return 0;
}

/* The processes whose parent is pid, ascending. */
static int list_children(pid_t pid, struct pid_list *out)
{
	struct dirent *de;
	DIR *d = opendir("/proc");
	int rc = 0;

	out->n = 0;
	if (!d)
		return 0;
	while (rc == 0 && (de = readdir(d))) {
		pid_t kid = (pid_t)atoi(de->d_name);

		/* /proc lists processes (thread-group leaders) only. */
		if (kid > 0 && kid != pid && status_field(kid, "PPid") == pid)
			rc = pid_list_add(out, kid);
	}
	closedir(d);
	if (out->n > 1)
		qsort(out->v, (size_t)out->n, sizeof(*out->v), cmp_tid);
	return rc;
}

/*
 * A server's workers are children of the pid the user gives (Apache's
 * prefork, a pre-forked pool): they are attached too, depth first, as
 * processes p2, p3..., however many and however deep.  One that cannot be
 * traced (another tracer has it, or it exited meanwhile) is left alone:
 * the parent is what was asked for.  One forked after the parent was
 * seized is already ours, through PTRACE_O_TRACEFORK, and is skipped here.
 * -1 only out of memory, with err set: a worker left untraced would run
 * through every schedule.
 */
static int attach_children(struct tracer *t, pid_t parent, char *err, size_t len)
{
	struct pid_list kids = {0};
	char why[256];
	int i, rc = list_children(parent, &kids);

	for (i = 0; rc == 0 && i < kids.n; i++) {
		if (tracer_thread_by_tid(t, kids.v[i]))
			continue;
		if (attach_process(t, kids.v[i], why, sizeof(why)) == 0)
			rc = attach_children(t, kids.v[i], err, len);
	}
	free(kids.v);
	if (rc < 0 && !err[0])
		snprintf(err, len, "cannot list the children of pid %d: out of memory", parent);
	return rc;
}

/* Is every task of pid a zombie (the process has ended, unreaped)? */
static bool all_tasks_zombies(pid_t pid)
{
	char path[64];
	struct dirent *de;
	bool all = true;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return true;
	while (all && (de = readdir(d)))
		if (atoi(de->d_name) > 0 && !task_is_zombie(pid, (pid_t)atoi(de->d_name)))
			all = false;
	closedir(d);
	return all;
}

int tracer_attach_check(pid_t pid, char *err, size_t len)
{
	unsigned long flags = 0;
	char state = 0, comm[64];
	long tgid, parent;

	if (pid <= 0 || tr_task_stat(pid, pid, &state, &flags) < 0) {
		snprintf(err, len, "cannot attach to pid %d: no such process", pid);
		return -1;
	}
	if (pid == getpid()) {
		snprintf(err, len, "cannot attach to pid %d: that is cctrace itself", pid);
		return -1;
	}
	tgid = status_field(pid, "Tgid");
	if (tgid != pid) {
		snprintf(err, len,
			 "cannot attach to pid %d: it is a thread of pid %ld; give the "
			 "process id",
			 pid, tgid);
		return -1;
	}
	read_comm(pid, comm, sizeof(comm));
	if (flags & TR_PF_KTHREAD) {
		snprintf(err, len,
			 "cannot attach to pid %d (%s): it is a kernel thread, which runs no "
			 "program and cannot be traced",
			 pid, comm);
		return -1;
	}
	if (pid == 1) {
		snprintf(
		    err, len,
		    "cannot attach to pid 1 (%s): it is init, the ancestor of every process "
		    "(of its pid namespace); held at a breakpoint it would stall them all, and "
		    "killed it would end them all, so cctrace does not attach to it",
		    comm);
		return -1;
	}
	if (check_exe_kind(pid, "attach to", err, len) < 0)
		return -1;
	if (state == 'Z' && all_tasks_zombies(pid)) {
		parent = status_field(pid, "PPid");
		read_comm((pid_t)parent, comm, sizeof(comm));
		snprintf(err, len,
			 "cannot attach to pid %d: it is a zombie: it has exited and its parent "
			 "(pid %ld, %s) has not reaped it yet, so there is nothing left to trace",
			 pid, parent, comm[0] ? comm : "?");
		return -1;
	}
	return 0;
}

/* A process stopped by job control is attached, and left stopped: resuming
 * it is its owner's decision (kill -CONT), and whatever the schedule waits
 * for happens once it is continued.  The user is told. */
static void note_job_stop(struct tracer *t, pid_t pid, char state)
{
	if (state != 'T')
		return;
	snprintf(t->note, sizeof(t->note),
		 "pid %d is stopped (state T) by a job-control signal (SIGSTOP, SIGTSTP, "
		 "Ctrl-Z): cctrace attached and leaves it stopped, so no thread reaches an "
		 "event until it is continued (kill -CONT %d)",
		 pid, pid);
}

int tracer_attach(struct tracer *t, pid_t pid, char *err, size_t len)
{
	char state = 0;

	if (tracer_attach_check(pid, err, len) < 0)
		return -1;
	tr_task_stat(pid, pid, &state, NULL);
	/* Before anything is changed in any process. */
	if (tr_guard_start(t, err, len) < 0)
		return -1;
	if (attach_process(t, pid, err, len) < 0)
		return -1;
	note_job_stop(t, pid, state);
	err[0] = '\0';
	if (!t->opt.no_children && attach_children(t, pid, err, len) < 0)
		return -1;
	return 0;
}

const char *tracer_attach_note(const struct tracer *t)
{
	return t->note[0] ? t->note : NULL;
}
