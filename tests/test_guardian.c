/*
 * System tests: an attached program outlives cctrace, however cctrace ends.
 *
 * The target is tests/fixtures/hotloop: four threads calling hot() as fast
 * as they can (and rare() every 4096 calls), checking their own checksums
 * at the end.  cctrace attaches with a schedule that plants breakpoints in
 * hot() and rare() over and over; once it has printed its first trace line
 * (so it is attached and its breakpoints are being hit), it is killed
 * after a delay drawn at random for each try: with SIGKILL or SIGSEGV (a
 * crash: the guardian must undo everything), with SIGQUIT (cctrace itself
 * must detach), or by closing the pipe its trace goes to (SIGPIPE, as
 * `| head -1` does).
 * Then, before the target runs its last phase, the test compares with
 * what it saw before the attach: the code bytes of every executable
 * mapping, the whole of /proc/PID/maps (no scratch page left), SIGTRAP's
 * action (SigCgt, SigIgn), every thread's CPU mask, and, through a seize
 * of its own, DR0-DR3 and DR7 of every thread; no thread may be traced or
 * stopped.  The target must then finish with every checksum right.
 *
 * The guardian is a child of cctrace, untraced; cctrace reaps it when it
 * detaches.  When cctrace is killed, the guardian is orphaned: the test
 * process is a child subreaper, so it becomes the test's child, and the
 * test waits for it and checks that it exited 0.  Either way no guardian
 * process or zombie may be left.
 *
 * The last test is the race of a SIGINT with the deadline's SIGALRM: both
 * are made pending at once (the waiting process is stopped while they are
 * sent), which before the fix made the alarm's handler run first and jump
 * away from the SIGINT handler's frame.
 */
#include "disasm/disasm.h"
#include "harness.h"
#include "tracer/tracer.h"

#include <sched.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>

TestSuite(guardian, .fini = h_cleanup, .timeout = 180);

#define HOTLOOP	  "tests/fixtures/hotloop"
#define MAX_TEXT  64
#define MAX_TASKS 64

struct target {
	struct h_proc proc;
	pid_t pid;
	struct h_text text[MAX_TEXT];
	int ntext;
	char *maps;
	long caught, ignored; /* SigCgt / SigIgn, low 32 bits */
	pid_t tids[MAX_TASKS];
	int ntids;
	cpu_set_t affinity[MAX_TASKS];
};

static char *read_maps(pid_t pid)
{
	char *maps = h_read_file(h_fmt("/proc/%d/maps", (int)pid), NULL);

	cr_assert(maps, "cannot read the maps of %d", (int)pid);
	return maps;
}

static long sig_mask_field(pid_t pid, const char *field)
{
	char path[64], line[256];
	size_t flen = strlen(field);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	cr_assert(f);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, flen) == 0 && line[flen] == ':')
			v = (long)(strtoull(line + flen + 1, NULL, 16) & 0xffffffffull);
	fclose(f);
	return v;
}

static void start_target(struct target *t)
{
	/* At the lowest priority, so that its four spinning threads leave
	 * the CPUs to cctrace (and the test) when they want them. */
	const char *argv[] = {"nice", "-n", "19", HOTLOOP, NULL};
	char line[128];
	int pid = 0, i;

	cr_assert(access(HOTLOOP, X_OK) == 0, HOTLOOP " is not built (make fixtures)");
	memset(t, 0, sizeof(*t));
	t->proc = h_spawn(argv, true, true, false);
	t->pid = t->proc.pid;
	cr_assert(h_read_line(t->proc.out, line, sizeof(line), 10000),
		  "hotloop did not print its ready line");
	cr_assert(sscanf(line, "ready %d", &pid) == 1 && pid == t->pid, "first line: %s", line);
	t->ntext = h_snapshot_text(t->pid, t->text, MAX_TEXT);
	t->maps = read_maps(t->pid);
	t->caught = sig_mask_field(t->pid, "SigCgt");
	t->ignored = sig_mask_field(t->pid, "SigIgn");
	t->ntids = h_tasks(t->pid, t->tids, MAX_TASKS);
	cr_assert_eq(t->ntids, 5, "hotloop should have 5 threads, has %d", t->ntids);
	for (i = 0; i < t->ntids; i++)
		cr_assert(sched_getaffinity(t->tids[i], sizeof(cpu_set_t), &t->affinity[i]) == 0);
}

static long peek_dr(pid_t tid, int i)
{
	errno = 0;
	return ptrace(PTRACE_PEEKUSER, tid,
		      (void *)(offsetof(struct user, u_debugreg) + (size_t)i * sizeof(long)), NULL);
}

/* Seizes every thread, reads DR0-3 and DR7, lets it go. */
static void expect_debug_registers_clear(struct target *t, const char *when)
{
	int i, k;

	for (i = 0; i < t->ntids; i++) {
		pid_t tid = t->tids[i];
		int status;

		cr_assert(ptrace(PTRACE_SEIZE, tid, NULL, NULL) == 0, "%s: seize %d: %s", when,
			  (int)tid, strerror(errno));
		cr_assert(ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) == 0);
		cr_assert_eq(waitpid(tid, &status, __WALL), tid);
		cr_assert(WIFSTOPPED(status), "thread %d: status %#x", (int)tid, status);
		for (k = 0; k < 8; k++) {
			long dr;

			if (k == 4 || k == 5 || k == 6)
				continue;
			dr = peek_dr(tid, k);
			cr_assert_eq(errno, 0, "PEEKUSER DR%d of %d: %s", k, (int)tid,
				     strerror(errno));
			cr_expect_eq(dr, 0, "%s: thread %d: DR%d = %#lx", when, (int)tid, k, dr);
		}
		cr_assert(ptrace(PTRACE_DETACH, tid, NULL, NULL) == 0, "detach %d: %s", (int)tid,
			  strerror(errno));
	}
}

/* The target has not died (it is our child: a death would be waitable). */
static void expect_alive(struct target *t, const char *when)
{
	int status;

	if (waitpid(t->pid, &status, WNOHANG) != t->pid)
		return;
	h_untrack(t->pid);
	cr_assert(0, "%s: the target died: %s %d", when,
		  WIFSIGNALED(status) ? "killed by signal" : "exited with status",
		  WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

/* Everything as it was before the attach. */
static void expect_restored(struct target *t, const char *when)
{
	struct h_text now[MAX_TEXT];
	char *diff, *maps;
	pid_t tids[MAX_TASKS];
	int n, i;

	expect_alive(t, when);
	n = h_snapshot_text(t->pid, now, MAX_TEXT);
	diff = h_text_diff(t->text, t->ntext, now, n);
	cr_expect(diff == NULL, "%s: the code changed: %s", when, diff ? diff : "");
	h_free_text(now, n);
	maps = read_maps(t->pid);
	cr_expect_str_eq(maps, t->maps, "%s: the mappings changed", when);
	free(maps);
	cr_expect_eq(sig_mask_field(t->pid, "SigCgt"), t->caught, "%s: SigCgt changed", when);
	cr_expect_eq(sig_mask_field(t->pid, "SigIgn"), t->ignored, "%s: SigIgn changed", when);
	cr_assert_eq(h_tasks(t->pid, tids, MAX_TASKS), t->ntids, "%s: threads came or went", when);
	for (i = 0; i < t->ntids; i++) {
		cpu_set_t now_mask;
		char st = h_task_state(t->pid, t->tids[i]);

		cr_expect_eq(tids[i], t->tids[i]);
		cr_expect_eq(h_status_field(t->pid, t->tids[i], "TracerPid"), 0,
			     "%s: thread %d is still traced", when, (int)t->tids[i]);
		cr_expect(st != 't' && st != 'T', "%s: thread %d is stopped (%c)", when,
			  (int)t->tids[i], st);
		cr_assert(sched_getaffinity(t->tids[i], sizeof(now_mask), &now_mask) == 0);
		cr_expect(CPU_EQUAL(&now_mask, &t->affinity[i]),
			  "%s: thread %d: CPU mask %d CPUs, was %d", when, (int)t->tids[i],
			  CPU_COUNT(&now_mask), CPU_COUNT(&t->affinity[i]));
	}
	expect_debug_registers_clear(t, when);
}

/* The target's last phase: it must end with every checksum right. */
static void finish_target(struct target *t, const char *when)
{
	char *out;
	int code;

	cr_assert(write(t->proc.in, "finish\n", 7) == 7);
	close(t->proc.in);
	t->proc.in = -1;
	out = h_read_all(t->proc.out, 60);
	close(t->proc.out);
	t->proc.out = -1;
	code = h_wait(t->pid, 60, NULL);
	cr_expect_eq(code, 0, "%s: hotloop exited %d:\n%s", when, code, out);
	cr_expect(strstr(out, "\nok\n") && !strstr(out, "BAD"), "%s: hotloop's output:\n%s", when,
		  out);
	free(out);
	free(t->maps);
	h_free_text(t->text, t->ntext);
}

/* pid's parent and name, from /proc/PID/stat; false if it is gone. */
static bool stat_of(pid_t pid, pid_t *ppid, char *comm, size_t len)
{
	char *text = h_read_file(h_fmt("/proc/%d/stat", (int)pid), NULL), *open, *close;
	int parent = 0;

	if (!text)
		return false;
	open = strchr(text, '(');
	close = strrchr(text, ')');
	if (!open || !close || sscanf(close + 2, "%*c %d", &parent) != 1) {
		free(text);
		return false;
	}
	snprintf(comm, len, "%.*s", (int)(close - open - 1), open + 1);
	*ppid = parent;
	free(text);
	return true;
}

/* The guardians that are children of parent. */
static int find_guardians(pid_t parent, pid_t *pids, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	cr_assert(d);
	while ((de = readdir(d)) && n < max) {
		pid_t pid = (pid_t)atoi(de->d_name), ppid;
		char comm[64];

		if (pid > 0 && stat_of(pid, &ppid, comm, sizeof(comm)) && ppid == parent &&
		    strcmp(comm, "cct-guardian") == 0)
			pids[n++] = pid;
	}
	closedir(d);
	return n;
}

/* Waits for the guardians orphaned to this process to end; each must exit
 * 0.  Returns how many. */
static int reap_guardians(const char *when)
{
	int64_t deadline = h_now_ms() + 20000;
	pid_t pids[8];
	int n, i, total = 0;

	while ((n = find_guardians(getpid(), pids, 8)) > 0) {
		for (i = 0; i < n; i++) {
			int status;

			cr_assert(h_wait_exit(pids[i], deadline, &status),
				  "%s: the guardian %d did not end", when, (int)pids[i]);
			cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
				  "%s: the guardian ended with status %#x", when, status);
			total++;
		}
	}
	return total;
}

/* cctrace's guardian: its child, untraced.  It names itself once it runs,
 * which on a busy machine can be after cctrace's first trace line: it is
 * looked for until a deadline, not once. */
static pid_t guardian_of(pid_t cctrace)
{
	int64_t deadline = h_now_ms() + 10000;
	pid_t pids[4];
	int n;

	while ((n = find_guardians(cctrace, pids, 4)) == 0 && h_now_ms() < deadline)
		sched_yield();

	cr_assert_eq(n, 1, "cctrace %d has %d guardians", (int)cctrace, n);
	cr_expect_eq(h_status_field(pids[0], pids[0], "TracerPid"), 0, "the guardian is traced");
	return pids[0];
}

/* Once cctrace has ended by itself, its guardian is gone too, reaped. */
static void expect_guardian_gone(pid_t guard, const char *when)
{
	pid_t ppid;
	char comm[64];

	cr_expect(!stat_of(guard, &ppid, comm, sizeof(comm)),
		  "%s: the guardian %d is still there (%s, parent %d)", when, (int)guard, comm,
		  (int)ppid);
	cr_expect_eq(reap_guardians(when), 0, "%s: a guardian was orphaned", when);
}

static void become_subreaper(void)
{
	cr_assert(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0, "PR_SET_CHILD_SUBREAPER: %s",
		  strerror(errno));
}

/* Schedules that plant breakpoints in hot() and rare() again and again:
 * plain ones, one that also arms a debug register, one that steps. */
static const char *const schedules[] = {
    "timeout 10s\n"
    "while (true) {\n"
    "  thread A, B = wait 2 distinct enter(hot)\n"
    "  run A until return(hot)\n"
    "  run B until enter(rare) || enter(hot)\n"
    "  release all\n"
    "}\n",
    "timeout 10s\n"
    "while (true) {\n"
    "  thread A = wait any enter(hot)\n"
    "  run A until return(hot) || write(rare_calls)\n"
    "  run A until enter(rare)\n"
    "  release all\n"
    "}\n",
    "timeout 10s\n"
    "while (true) {\n"
    "  thread A, B = wait 2 distinct enter(hot)\n"
    "  run A until read || call\n"
    "  run B until return(hot)\n"
    "  release all\n"
    "}\n",
};

enum ending { BY_SIGNAL, BY_CLOSED_PIPE };

/* Reads cctrace's trace until its first trace line. */
static void wait_first_trace_line(struct h_proc *c)
{
	char line[512];

	for (;;) {
		cr_assert(h_read_line(c->err, line, sizeof(line), 30000),
			  "cctrace printed no trace line");
		if (h_is_trace_line(line, strlen(line)))
			return;
	}
}

/* Reads cctrace's trace until a trace line that contains text. */
static void wait_trace_line(struct h_proc *c, const char *text)
{
	char line[512];

	for (;;) {
		cr_assert(h_read_line(c->err, line, sizeof(line), 30000),
			  "cctrace printed no trace line with %s", text);
		if (h_is_trace_line(line, strlen(line)) && strstr(line, text))
			return;
	}
}

/* Lets cctrace run for ms more, reading (and dropping) what it prints. */
static void let_it_run(struct h_proc *c, int ms)
{
	int64_t until = h_now_ms() + ms;
	char buf[4096];

	for (;;) {
		struct pollfd pfd = {c->err, POLLIN, 0};
		int64_t left = until - h_now_ms();

		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			return;
		if (read(c->err, buf, sizeof(buf)) <= 0)
			return;
	}
}

/* One attach of cctrace that ends at a random moment; the target must be
 * as it was, and finish right. */
static void one_try(int try, int sig, enum ending how, unsigned *seed)
{
	char *sched = h_temp_sched("hot.sched", schedules[try % 3]);
	char *when;
	struct target t;
	struct h_proc c;
	struct h_result r;
	int delay = (int)(rand_r(seed) % 150);
	pid_t guard;

	start_target(&t);
	when = h_fmt("try %d (schedule %d, %s after %d ms)", try + 1, try % 3,
		     how == BY_CLOSED_PIPE ? "pipe closed" : strsignal(sig), delay);
	c = h_spawn(
	    (const char *const[]){h_cctrace(), "attach", h_fmt("%d", (int)t.pid), sched, NULL},
	    false, false, true);
	wait_first_trace_line(&c);
	guard = guardian_of(c.pid);
	let_it_run(&c, delay);
	if (how == BY_CLOSED_PIPE) {
		close(c.err);
		c.err = -1;
	} else {
		cr_assert(kill(c.pid, sig) == 0);
	}
	r = h_collect(&c, 60);
	cr_assert(!r.timed_out, "%s: cctrace did not end", when);
	if (sig == SIGSEGV) /* a sanitizer's handler may exit 1 instead */
		cr_expect_neq(r.code, 0, "%s: cctrace exited 0:\n%s", when, r.err);
	else
		cr_expect_eq(r.code, 128 + (how == BY_CLOSED_PIPE ? SIGPIPE : sig),
			     "%s: cctrace exited %d:\n%s", when, r.code, r.err);
	if (sig == SIGKILL || sig == SIGSEGV) {
		cr_expect_eq(reap_guardians(when), 1, "%s: the guardian was not orphaned", when);
		cr_expect(strstr(r.err, "cctrace: guardian: ") && strstr(r.err, " restored: "),
			  "%s: the guardian did not report:\n%s", when, r.err);
	} else {
		expect_guardian_gone(guard, when);
	}
	if (sig == SIGQUIT)
		cr_expect(strstr(r.err, "interrupted by QUIT; detached") &&
			      !strstr(r.err, "guardian"),
			  "%s: expected a detach by cctrace itself:\n%s", when, r.err);
	h_result_free(&r);
	expect_restored(&t, when);
	finish_target(&t, when);
}

static void tries(int n, int sig, enum ending how)
{
	unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	int i;

	/* A crash is the point, not a sanitizer's report of it: under ASan
	 * its SIGSEGV handler can take longer than the test waits. */
	if (sig == SIGSEGV)
		setenv("ASAN_OPTIONS", "handle_segv=0", 1);

	become_subreaper();
	fprintf(stderr, "guardian tries: seed %u\n", seed);
	for (i = 0; i < n; i++)
		one_try(i, sig, how, &seed);
}

Test(guardian, sigkill_of_cctrace_leaves_the_target_as_it_was)
{
	tries(20, SIGKILL, BY_SIGNAL);
}

/* A crash of cctrace (here a SIGSEGV sent to it) is the guardian's too. */
Test(guardian, crash_of_cctrace_leaves_the_target_as_it_was)
{
	tries(4, SIGSEGV, BY_SIGNAL);
}

Test(guardian, sigquit_of_cctrace_detaches)
{
	tries(12, SIGQUIT, BY_SIGNAL);
}

Test(guardian, closed_trace_pipe_detaches)
{
	tries(8, 0, BY_CLOSED_PIPE);
}

/*
 * `pkill -9 cctrace` or `pkill -9 -f cctrace` (or a user who kills the
 * wrong one of two processes of the same name) killed the guardian with
 * cctrace, and the program was left with our bytes in it and a thread
 * parked for ever.  The guardian has a name and a command line of its own,
 * with no "cctrace" in either; one that dies all the same is replaced,
 * and the new one restores the program when cctrace is killed.
 */
Test(guardian, a_killed_guardian_is_replaced_and_named_apart)
{
	char *sched = h_temp_sched("hot.sched", schedules[0]);
	const char *when = "guardian killed, then cctrace";
	char *cmdline, line[512];
	struct target t;
	struct h_result r;
	struct h_proc c;
	pid_t first, second;

	become_subreaper();
	start_target(&t);
	c = h_spawn(
	    (const char *const[]){h_cctrace(), "attach", h_fmt("%d", (int)t.pid), sched, NULL},
	    false, false, true);
	wait_first_trace_line(&c);
	first = guardian_of(c.pid);
	cmdline = h_read_file(h_fmt("/proc/%d/cmdline", (int)first), NULL);
	cr_expect(strncmp(cmdline, "cct-guardian of tracer ", 23) == 0 &&
		      !strstr(cmdline, "cctrace"),
		  "the guardian's command line: %s", cmdline);
	cr_assert(kill(first, SIGKILL) == 0);
	for (;;) {
		cr_assert(h_read_line(c.err, line, sizeof(line), 30000),
			  "cctrace never said its guardian died");
		if (strstr(line,
			   h_fmt("warning: the guardian (pid %d) died (Killed); pid ", (int)first)))
			break;
	}
	second = guardian_of(c.pid);
	cr_expect_neq(second, first);
	cr_assert(kill(c.pid, SIGKILL) == 0);
	r = h_collect(&c, 60);
	cr_expect_eq(reap_guardians(when), 1, "%s: the new guardian was not orphaned", when);
	cr_expect(strstr(r.err, "cctrace: guardian: ") && strstr(r.err, " restored: "),
		  "%s: the new guardian did not report:\n%s", when, r.err);
	h_result_free(&r);
	expect_restored(&t, when);
	finish_target(&t, when);
}

/* A schedule that completes: the guardian ends quietly with cctrace. */
Test(guardian, completed_attach_guardian_exits_quietly)
{
	/* The last wait is for a signal the test sends once it has seen the
	 * guardian, so the schedule cannot complete (and its guardian go)
	 * before the test looks.  SIGWINCH: ignored by default, so the
	 * program takes no harm when it is delivered. */
	char *sched = h_temp_sched("once.sched", "timeout 10s\n"
						 "thread A = wait any enter(hot)\n"
						 "run A until enter(rare)\n"
						 "thread S = wait any signal(SIGWINCH)\n"
						 "release all\n");
	struct target t;
	struct h_result r;
	struct h_proc c;
	pid_t guard;

	become_subreaper();
	start_target(&t);
	c = h_spawn(
	    (const char *const[]){h_cctrace(), "attach", h_fmt("%d", (int)t.pid), sched, NULL},
	    false, false, true);
	guard = guardian_of(c.pid);
	wait_trace_line(&c, "enter(rare)"); /* the wait for the signal is next */
	cr_assert(kill(t.pid, SIGWINCH) == 0);
	r = h_collect(&c, 60);
	cr_expect_eq(r.code, 0, "cctrace exited %d:\n%s", r.code, r.err);
	cr_expect(!strstr(r.err, "guardian"), "%s", r.err);
	expect_guardian_gone(guard, "after a completed attach");
	h_result_free(&r);
	expect_restored(&t, "after a completed attach");
	finish_target(&t, "after a completed attach");
}

/*
 * The guardian stops every thread to put its debug registers back.  Its
 * interrupt, like cctrace's, ends an epoll_wait or a sigwaitinfo with
 * EINTR, which the kernel does not restart: it must have the call made
 * again, as cctrace does, or a server's event loop sees an error no
 * signal caused (epollwait counts them; 3 kills of 3 showed them).
 */
/* Every thread of pid asleep in the kernel (S), none stopped by a tracer. */
static void wait_all_asleep(pid_t pid)
{
	int64_t deadline = h_now_ms() + 10000;
	pid_t tids[16];
	int n, i, asleep;

	do {
		h_pace();
		n = h_tasks(pid, tids, 16);
		for (i = 0, asleep = 0; i < n; i++)
			asleep += h_task_state(pid, tids[i]) == 'S';
	} while (asleep < n && h_now_ms() < deadline);
	cr_assert_eq(asleep, n, "the threads never went back to sleep after the attach");
}

Test(guardian, sigkill_of_cctrace_makes_no_wait_fail_with_eintr)
{
	char *sched = h_temp_sched("hang.sched", "timeout 60s\nwait any enter(main)\n");
	const char *argv[] = {"tests/fixtures/epollwait", NULL};
	struct h_proc fix = h_spawn(argv, true, true, false), c;
	struct h_result r;
	char line[128], *out;
	int i, pid = 0;

	become_subreaper();
	cr_assert(h_read_line(fix.out, line, sizeof(line), 10000) &&
		      sscanf(line, "ready %d", &pid) == 1 && pid == fix.pid,
		  "epollwait did not start: %s", line);
	for (i = 0; i < 3; i++) {
		c = h_spawn(
		    (const char *const[]){h_cctrace(), "attach", h_fmt("%d", pid), sched, NULL},
		    false, false, true);
		cr_assert(h_wait_traced_by(pid, c.pid, 10000), "cctrace never attached");
		/* killed once the attach is done: a thread cctrace has stopped
		 * and not yet looked at, in the instant between, still gets
		 * the EINTR, and nobody is left to mend it */
		wait_all_asleep(pid);
		cr_assert(kill(c.pid, SIGKILL) == 0);
		r = h_collect(&c, 30);
		h_result_free(&r);
		reap_guardians("after a SIGKILL");
		cr_assert(h_wait_traced_by(pid, 0, 10000), "still traced after the guardian");
	}
	close(fix.in);
	out = h_read_all(fix.out, 20);
	cr_expect_eq(h_wait(fix.pid, 20, NULL), 0, "%s", out);
	cr_expect(strstr(out, "EINTR: 0"), "%s", out);
	free(out);
}

/* `run` needs no guardian (PTRACE_O_EXITKILL ends the program with us). */
Test(guardian, run_starts_no_guardian)
{
	char *sched = h_temp_sched("run.sched", "timeout 10s\n"
						"thread A = wait any enter(rare)\n"
						"release all\n");
	struct h_proc c;
	struct h_result r;
	pid_t pids[4];
	char line[512];

	become_subreaper();
	c = h_spawn((const char *const[]){h_cctrace(), "run", sched, "--", HOTLOOP, NULL}, true,
		    true, true);
	cr_assert(h_read_line(c.out, line, sizeof(line), 20000), "the program did not start");
	cr_expect_eq(find_guardians(c.pid, pids, 4), 0, "cctrace run started a guardian");
	close(c.in);
	c.in = -1;
	r = h_collect(&c, 60);
	cr_expect_eq(r.code, 0, "cctrace run exited %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.out, "\nok\n"), "%s", r.out);
	h_result_free(&r);
}

/* ------------------------------------ a journal that has to grow */

/* Instruction starts in the target's libc, which its workers never call
 * (their loop is all in hotloop), found by decoding its text in a sweep. */
static int libc_instructions(pid_t pid, int mem, uint64_t *addrs, int max)
{
	char *maps = read_maps(pid), *line;
	unsigned long long lo = 0, hi = 0;
	uint8_t code[64];
	uint64_t at;
	int n = 0;

	for (line = strtok(maps, "\n"); line; line = strtok(NULL, "\n"))
		if (strstr(line, " r-xp ") && strstr(line, "/libc.so") &&
		    sscanf(line, "%llx-%llx", &lo, &hi) == 2)
			break;
	free(maps);
	cr_assert(hi > lo, "no libc text in the maps of %d", (int)pid);
	for (at = lo; at + sizeof(code) < hi && n < max;) {
		struct dis_insn insn;

		if (pread(mem, code, sizeof(code), (off_t)at) != sizeof(code))
			break;
		if (dis_decode(code, sizeof(code), at, &insn) < 0 || insn.len == 0) {
			at++;
			continue;
		}
		if (insn.kind == DIS_OTHER && !insn.rip_relative)
			addrs[n++] = at;
		at += insn.len * 8; /* every few instructions (a sweep resyncs) */
	}
	return n;
}

/* A tracer of our own, in a child: it attaches, plants n breakpoints,
 * lets the threads run, says how many it planted and waits to be killed. */
static void planting_tracer(pid_t target, int n, int report)
{
	struct tracer_options opt = {.pin_cpu = true};
	struct tracer *t = tracer_new(&opt);
	uint64_t *addrs = calloc((size_t)n, sizeof(*addrs));
	struct tr_thread *th;
	struct tr_process *p;
	int mem, i, found, planted = 0;
	char err[512];

	mem = open(h_fmt("/proc/%d/mem", (int)target), O_RDONLY);
	if (!t || !addrs || mem < 0 || tracer_attach(t, target, err, sizeof(err)) < 0)
		_exit(2);
	p = tracer_processes(t);
	found = libc_instructions(target, mem, addrs, n);
	for (i = 0; i < found; i++)
		planted += tracer_break_insert(p, addrs[i], err, sizeof(err)) == 0;
	tr_for_each_thread(th, t) {
		tracer_pin(th, true);
		tracer_resume(th);
	}
	if (write(report, &planted, sizeof(planted)) != sizeof(planted))
		_exit(3);
	for (;;)
		pause();
}

/* Thousands of breakpoints, more than the journal's first 64 KiB hold. */
Test(guardian, sigkill_with_thousands_of_breakpoints_restores_them_all)
{
	int fds[2], planted = 0, status;
	struct target t;
	pid_t tracer;

	become_subreaper();
	start_target(&t);
	cr_assert(pipe(fds) == 0);
	tracer = fork();
	cr_assert(tracer >= 0);
	if (tracer == 0) {
		close(fds[0]);
		planting_tracer(t.pid, 4000, fds[1]);
	}
	h_track(tracer);
	close(fds[1]);
	cr_assert(read(fds[0], &planted, sizeof(planted)) == sizeof(planted),
		  "the tracer did not plant");
	close(fds[0]);
	cr_expect_gt(planted, 3000, "only %d breakpoints planted", planted);
	cr_assert(kill(tracer, SIGKILL) == 0);
	cr_assert_eq(waitpid(tracer, &status, 0), tracer);
	h_untrack(tracer);
	cr_expect_eq(reap_guardians("after the kill"), 1, "the guardian was not orphaned");
	expect_restored(&t, "after thousands of breakpoints");
	finish_target(&t, "after thousands of breakpoints");
}

/* ------------------------------------------------ SIGINT and SIGALRM */

/* Is pid inside waitid() right now? */
static bool in_waitid(pid_t pid)
{
	char *text = h_read_file(h_fmt("/proc/%d/syscall", (int)pid), NULL);
	bool yes = text && atoi(text) == SYS_waitid;

	free(text);
	return yes;
}

/* The child side: wait for an event with a 5 s deadline; report what
 * ended the wait and how long it took. */
static void race_child(int report)
{
	struct tracer_options opt = {0};
	struct tracer *t = tracer_new(&opt);
	struct tr_event ev;
	int signo = 0, rc, buf[3];
	int64_t t0 = tracer_now_ms();
	pid_t sleeper = fork();

	if (sleeper == 0) {
		pause();
		_exit(0);
	}
	rc = (int)tracer_wait(t, &ev, t0 + 5000, &signo);
	buf[0] = rc;
	buf[1] = signo;
	buf[2] = (int)(tracer_now_ms() - t0);
	kill(sleeper, SIGKILL);
	if (write(report, buf, sizeof(buf)) != sizeof(buf))
		_exit(2);
	_exit(0);
}

Test(guardian, sigint_pending_with_the_alarm_is_not_lost)
{
	int fds[2], buf[3], status;
	int64_t deadline;
	pid_t child;

	cr_assert(pipe(fds) == 0);
	child = fork();
	cr_assert(child >= 0);
	if (child == 0) {
		close(fds[0]);
		race_child(fds[1]);
	}
	h_track(child);
	close(fds[1]);
	deadline = h_now_ms() + 10000;
	while (!in_waitid(child) && h_now_ms() < deadline)
		h_pace();
	cr_assert(in_waitid(child), "the child never waited");
	/* Stopped, it cannot take either signal until both are pending: on
	 * SIGCONT the kernel sets up a handler frame for each at once. */
	cr_assert(kill(child, SIGSTOP) == 0);
	cr_assert_eq(waitpid(child, &status, WUNTRACED), child);
	cr_assert(WIFSTOPPED(status));
	cr_assert(kill(child, SIGALRM) == 0);
	cr_assert(kill(child, SIGINT) == 0);
	cr_assert(kill(child, SIGCONT) == 0);
	cr_assert(read(fds[0], buf, sizeof(buf)) == sizeof(buf), "the child reported nothing");
	cr_expect_eq(buf[0], TR_WAIT_INTERRUPTED,
		     "the wait ended with %d after %d ms, not interrupted: the SIGINT was lost",
		     buf[0], buf[2]);
	cr_expect_eq(buf[1], SIGINT, "stop signal %d", buf[1]);
	cr_expect_lt(buf[2], 4000, "the wait took %d ms", buf[2]);
	cr_expect_eq(h_wait(child, 30, NULL), 0);
	close(fds[0]);
}

/* Polls until pid's main thread is in a ptrace stop, with a deadline. */
static bool wait_stopped_for_tracer(pid_t pid, int timeout_ms)
{
	int64_t deadline = h_now_ms() + timeout_ms;

	while (h_now_ms() < deadline) {
		if (h_task_state(pid, pid) == 't')
			return true;
		h_pace();
	}
	return false;
}

/*
 * A child the program forks while cctrace cannot answer (stopped, then
 * killed) is never journaled: it starts with its parent's memory, our
 * breakpoint in child_work() included, and parked in the rescue handler
 * for ever once cctrace was gone, its parent waiting for it in waitpid.
 * The guardian restores it by its parent's records: the server reaps its
 * child, which saw its own code.
 */
Test(guardian, a_child_forked_as_cctrace_dies_is_restored_too)
{
	const char *argv[] = {"tests/fixtures/forker", "server", NULL};
	char *sched =
	    h_temp_sched("fork.sched", "timeout 60s\n"
				       "thread A = wait any enter(child_work) && arg1 == 999\n");
	struct h_text before[MAX_TEXT];
	struct h_proc srv, c;
	char line[128] = "";
	int nbefore, pid = 0, status;

	become_subreaper();
	srv = h_spawn(argv, true, true, false);
	cr_assert(h_read_line(srv.out, line, sizeof(line), 10000) &&
		      sscanf(line, "ready %d", &pid) == 1 && pid == srv.pid,
		  "forker's first line: %s", line);
	nbefore = h_snapshot_text(srv.pid, before, MAX_TEXT);
	c = h_spawn(
	    (const char *const[]){h_cctrace(), "attach", h_fmt("%d", (int)srv.pid), sched, NULL},
	    false, false, true);
	cr_assert(h_wait_text_changed(srv.pid, before, nbefore, 20000), "no breakpoint planted");
	h_free_text(before, nbefore);
	/* cctrace holds the fork's news unread: the child is not journaled */
	cr_assert_eq(kill(c.pid, SIGSTOP), 0);
	cr_assert(write(srv.in, "3\n", 2) == 2);
	cr_assert(wait_stopped_for_tracer(srv.pid, 10000), "the fork did not stop for cctrace");
	cr_assert_eq(kill(c.pid, SIGKILL), 0);
	cr_assert(h_wait_exit(c.pid, h_now_ms() + 20000, &status));
	cr_expect_eq(reap_guardians("after the SIGKILL"), 1);
	cr_expect(h_read_line(srv.out, line, sizeof(line), 20000) &&
		      strcmp(line, "child 3 status 0") == 0,
		  "the child was not reaped as it should be: '%s'", line);
	close(srv.in);
	cr_expect_eq(h_wait(srv.pid, 20, NULL), 0);
}

/* cctrace under this test's own ptrace, stopped at its first system call:
 * argv run by a traced child. */
static pid_t spawn_traced(const char *const argv[])
{
	pid_t pid = fork();
	int status;

	cr_assert(pid >= 0);
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP);
	cr_assert(ptrace(PTRACE_SETOPTIONS, pid, NULL,
			 (void *)(long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL)) == 0);
	return pid;
}

/* The child of parent whatever its name: a guardian that has not named
 * itself yet (cctrace is killed here before that can be seen); 0 if none. */
static pid_t child_of(pid_t parent)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t child = 0;

	cr_assert(d);
	while (!child && (de = readdir(d))) {
		pid_t pid = (pid_t)atoi(de->d_name), ppid;
		char comm[64];

		if (pid > 0 && stat_of(pid, &ppid, comm, sizeof(comm)) && ppid == parent)
			child = pid;
	}
	closedir(d);
	return child;
}

/*
 * Runs traced cctrace until it has asked for the nth resume of one of its
 * threads by PTRACE_SINGLESTEP or PTRACE_SYSCALL (its injected system
 * calls), and the request is made; then kills it, and returns its
 * guardian.  Signals cctrace gets on the way (SIGCHLD from its guardian,
 * its tracees' news) are its own.
 */
static pid_t kill_after_nth_injected_resume(pid_t cctrace, int nth)
{
	pid_t guard;
	struct user_regs_struct regs;
	bool in_call = false, armed = false;
	int status, sig = 0, seen = 0;

	for (;;) {
		cr_assert(ptrace(PTRACE_SYSCALL, cctrace, NULL, (void *)(long)sig) == 0,
			  "cctrace ended before its injected calls");
		sig = 0;
		cr_assert_eq(waitpid(cctrace, &status, __WALL), cctrace);
		cr_assert(WIFSTOPPED(status), "cctrace ended (status %#x)", status);
		if (WSTOPSIG(status) != (SIGTRAP | 0x80)) {
			sig = WSTOPSIG(status) == SIGTRAP ? 0 : WSTOPSIG(status);
			continue;
		}
		in_call = !in_call;
		if (!in_call && armed)
			break; /* the request is made: the thread runs our call */
		if (!in_call)
			continue;
		cr_assert(ptrace(PTRACE_GETREGS, cctrace, NULL, &regs) == 0);
		if (regs.orig_rax == SYS_ptrace &&
		    (regs.rdi == PTRACE_SINGLESTEP || regs.rdi == PTRACE_SYSCALL))
			armed = ++seen == nth;
	}
	guard = child_of(cctrace);
	cr_assert_neq(guard, 0, "cctrace has no guardian");
	cr_assert_eq(kill(cctrace, SIGKILL), 0);
	cr_assert_eq(waitpid(cctrace, &status, __WALL), cctrace);
	return guard;
}

/* cctrace attaches and is killed as it resumes a thread of the target for
 * the nth time by a step or for a system call's stops: the target must be
 * as it was, and finish right. */
static void kill_in_install(int nth, const char *when)
{
	char *sched = h_temp_sched("hot.sched", schedules[0]);
	struct target t;
	pid_t c, guard;
	int status;

	start_target(&t);
	c = spawn_traced(
	    (const char *const[]){h_cctrace(), "attach", h_fmt("%d", (int)t.pid), sched, NULL});
	h_track(c);
	guard = kill_after_nth_injected_resume(c, nth);
	h_untrack(c);
	cr_assert(h_wait_exit(guard, h_now_ms() + 20000, &status), "%s: the guardian did not end",
		  when);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "%s: the guardian ended with status %#x", when, status);
	expect_restored(&t, when);
	finish_target(&t, when);
}

/*
 * A SIGKILL of cctrace while it installs the rescue handler: in the mmap
 * of the handler's page (the first resume), and in the call that reads
 * SIGILL's action (the third: the mmap's entry and exit come first).
 * SIGTRAP still has the program's own action then, and the trap flag of a
 * single step, which a dying tracer
 * leaves set, killed the process as the call returned (found by a
 * helper's kill -9 at random moments: 7 deaths in 230 kills in an
 * attach's first 30 ms).  These calls are made without a trap flag now,
 * through code whose next instructions keep the thread busy in place
 * (libc's exit loop, then the handler's own), and the guardian gives it
 * its registers back.
 */
Test(guardian, sigkill_while_the_handler_is_installed_leaves_the_target_as_it_was)
{
	become_subreaper();
	/* each call: a resume to its entry stop, one to its exit stop */
	kill_in_install(1, "killed in the mmap of the handler's page");
	kill_in_install(3, "killed reading SIGILL's action");
}
